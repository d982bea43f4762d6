// Parameter axes have upper bounds checked at planning time, and the allocation sizes of the
// GEMM and training-step workloads are checked products: a huge parameter is one clear error,
// never a wrapped (tiny) buffer that a kernel then overruns.
#include <cstdint>
#include <string>

#include "catch_compat.hpp"
#include "gemm/gemm_math.hpp"
#include "training/train_math.hpp"
#include "mgbench/core/checked_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"

namespace {

std::string usage_error(const mgbench::Axis& axis, const std::string& text) {
  try {
    (void)axis.parse_value(text);
  } catch (const mgbench::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("axis bounds: every integer and size axis has a maximum") {
  CHECK(mgbench::Axis::integer("n", {}).max_value == mgbench::Axis::kDefaultMaxInteger);
  CHECK(mgbench::Axis::size("bytes", {}).max_value == mgbench::Axis::kDefaultMaxSize);
}

TEST_CASE("axis bounds: hidden=2147483648 and size=3037000500 are refused by name") {
  const auto hidden = mgbench::Axis::integer("hidden", {"4096"}).at_most(65536);
  CHECK(usage_error(hidden, "2147483648").find("parameter 'hidden' '2147483648' is above its "
                                               "maximum 65536") != std::string::npos);
  CHECK(hidden.parse_value("65536") == 65536);
  const auto size = mgbench::Axis::integer("size", {"4096"});
  CHECK_FALSE(usage_error(size, "3037000500").empty());
  const auto bytes = mgbench::Axis::size("bytes", {});
  CHECK_FALSE(usage_error(bytes, "2T").empty());
  CHECK(bytes.parse_value("1G") == (std::uint64_t{1} << 30));
}

TEST_CASE("checked products: overflow is an error naming the factors") {
  CHECK(mgbench::checked_product({3, 4, 5}, "x") == 60);
  try {
    (void)mgbench::checked_product({std::uint64_t{1} << 33, std::uint64_t{1} << 33}, "gemm A bytes");
    FAIL("no overflow reported");
  } catch (const mgbench::UsageError& e) {
    CHECK(std::string(e.what()).find("gemm A bytes overflows") != std::string::npos);
  }
}

TEST_CASE("gemm buffers: sizes are exact, an overflowing shape throws") {
  const auto bytes = mgbench::bench::gemm_buffer_bytes(8192, 4096, 1024, 2, 4);
  CHECK(bytes.a == std::size_t{8192} * 1024 * 2);
  CHECK(bytes.b == std::size_t{4096} * 1024 * 2);
  CHECK(bytes.c == std::size_t{8192} * 4096 * 4);
  // M = N = K = 2^32 (what an unchecked 3037000500-like size leads to): 2^64 elements wraps.
  const std::int64_t big = std::int64_t{1} << 32;
  CHECK_THROWS_AS(mgbench::bench::gemm_buffer_bytes(big, big, big, 2, 2), mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::bench::gemm_buffer_bytes(0, 1, 1, 2, 2), mgbench::UsageError);
}

TEST_CASE("train step: hidden x hidden and batch x hidden are checked products") {
  const std::size_t huge = std::size_t{1} << 33;
  CHECK_THROWS_AS(mgbench::bench::train::slab_elements(huge, huge), mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::bench::train::ParamLayout::make(2, huge), mgbench::UsageError);
  CHECK(mgbench::bench::train::slab_elements(1024, 4096) >= std::size_t{1024} * 4096);
}
