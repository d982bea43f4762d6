// No code of a group touches a device outside it: after running every executor path (NCCL
// communicators with their watchdog, the own all-reduce, the training step) on devices that
// skip GPU 0, GPU 0 has no CUDA context in this process. Each test case runs in its own
// process under CTest, so GPU 0 starts without one.
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "workload_runner.hpp"

namespace {

[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Params;
using mgbench::Status;
using mgbench::test::primary_context_active;

// Devices 1..n-1 (at most 3 of them): an odd count when 4+ GPUs are visible.
std::vector<int> devices_without_zero() {
  std::vector<int> d;
  for (int i = 1; i < mgbench::test::cuda_device_count() && d.size() < 3; ++i) d.push_back(i);
  return d;
}

void require_clean_start() {
  if (primary_context_active(0)) {
    mgbench::test::skip_test("GPU 0 already has a context in this process (run under CTest)");
  }
}

void require_all_ok(const std::vector<mgbench::PointResult>& results, std::size_t expected) {
  REQUIRE(results.size() == expected);
  for (const auto& r : results) {
    CAPTURE(r.params.dump(), mgbench::to_string(r.status), r.message);
    CHECK((r.status == Status::ok || r.status == Status::waived));
  }
}

}  // namespace

TEST_CASE("the NCCL and own all-reduce on devices without GPU 0 leave GPU 0 untouched",
          "[isolation][multi_gpu]") {
  require_clean_start();
  const auto devices = devices_without_zero();
  const auto nccl = mgbench::test::allreduce_points({"fp32"}, {1024, 1 << 20}, "nccl", {});
  require_all_ok(mgbench::test::run_allreduce(devices, nccl), nccl.size());
  const auto own = mgbench::test::allreduce_points({"fp32"}, {1024}, "mgbench", {});
  require_all_ok(mgbench::test::run_allreduce(devices, own), own.size());
  CHECK_FALSE(primary_context_active(0));
  CHECK(primary_context_active(devices.front()));  // the probe sees contexts it should see
}

TEST_CASE("the training step on devices without GPU 0 leaves GPU 0 untouched",
          "[isolation][multi_gpu]") {
  require_clean_start();
  const auto devices = devices_without_zero();
  const Params point{{"layers", 2},     {"hidden", 256}, {"batch", 64},   {"dtype", "bf16"},
                     {"accum", 1},      {"overlap", true}, {"h2d", true}, {"impl", "nccl"},
                     {"bucket_mb", 1}};
  require_all_ok(mgbench::test::run_workload("train_step", devices, {point}), 1);
  CHECK_FALSE(primary_context_active(0));
}
