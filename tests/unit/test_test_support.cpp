// The tests' own helpers that decide how a test runs.
#include <cstdlib>
#include <stdexcept>

#include "catch_compat.hpp"
#include "support.hpp"

namespace {
constexpr const char* kScale = "MGBENCH_GPU_TEST_TIME_SCALE";

double scale_with(const char* value) {
  ::setenv(kScale, value, 1);
  try {
    const double scale = mgbench::test::gpu_time_scale();
    ::unsetenv(kScale);
    return scale;
  } catch (...) {
    ::unsetenv(kScale);
    throw;
  }
}
}  // namespace

TEST_CASE("test support: the GPU tests' time scale is 1 unless the variable stretches it") {
  ::unsetenv(kScale);
  CHECK(mgbench::test::gpu_time_scale() == 1.0);
  CHECK(scale_with("") == 1.0);
  CHECK(scale_with("20") == 20.0);
  CHECK(scale_with("1000") == 1000.0);
  for (const char* bad : {"0.5", "0", "-3", "1001", "x", "20s", "nan", "inf"}) {
    INFO(bad);
    CHECK_THROWS_AS(scale_with(bad), std::invalid_argument);
  }
}
