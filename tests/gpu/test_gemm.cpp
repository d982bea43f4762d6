// GEMM on one GPU: the fill/poison/count kernels, and every dtype x impl through the
// registered "gemm" workload (the kernels themselves: test_gemm_kernels.cpp).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "gemm_check.hpp"
#include "gemm/gemm_math.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/kernels/gemm.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;
using mgbench::kernels::DType;
using mgbench::test::Buffer;
using mgbench::test::Shape;

namespace {

// The registered "gemm" workload on GPU 0: the quick settings with a 1 s sampling limit and
// the default group timeout.
std::vector<mgbench::PointResult> run_gemm(const std::vector<Params>& points) {
  mgbench::RunSettings settings = mgbench::test::fast_settings();
  settings.stopping.max_time_s = 1.0;
  settings.group_timeout_s = mgbench::RunSettings{}.group_timeout_s;
  return mgbench::test::run_workload("gemm", {0}, points, settings);
}

Params point(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& dtype,
             const std::string& impl) {
  return Params{{"shape", m == n && n == k ? "square" : "batch"},
                {"m", m},
                {"n", n},
                {"k", k},
                {"dtype", dtype},
                {"impl", impl}};
}

bool device_has_fp8() {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major * 10 + minor >= 89;
}

void check_ok_with_metrics(const mgbench::PointResult& r) {
  CAPTURE(r.params.dump(), mgbench::to_string(r.status), r.message);
  REQUIRE(r.status == Status::ok);
  REQUIRE(r.metrics.contains("tflops_per_gpu"));
  REQUIRE(r.metrics.contains("tflops_aggregate"));
  REQUIRE(r.metrics.contains("time_ms"));
  CHECK(r.metrics["tflops_per_gpu"].get<double>() > 0);
  CHECK(r.metrics["tflops_aggregate"].get<double>() ==
        Approx(r.metrics["tflops_per_gpu"].get<double>()));
  CHECK(r.metrics["time_ms"].get<double>() > 0);
}

}  // namespace

TEST_CASE("fill_uniform on the device matches fill_value on the host") {
  const std::size_t count = 100003;
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3, DType::int32}) {
    CAPTURE(mgbench::kernels::to_string(dt));
    const double lo = dt == DType::int32 ? -100.0 : -2.0;
    const double hi = dt == DType::int32 ? 100.0 : 2.0;
    Buffer buf(count * mgbench::kernels::dtype_size(dt));
    CUDA_REQUIRE(mgbench::kernels::fill_uniform(buf.get(), count, dt, 1234, lo, hi, nullptr));
    CUDA_REQUIRE(cudaDeviceSynchronize());
    const auto host = buf.to_host();
    std::size_t mismatches = 0, zeros = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double got = mgbench::kernels::decode_element(dt, host.data(), i);
      mismatches += got == mgbench::kernels::fill_value(dt, 1234, i, lo, hi) ? 0 : 1;
      zeros += got == 0.0 ? 1 : 0;
    }
    CHECK(mismatches == 0);
    CHECK(zeros == 0);
  }
}

TEST_CASE("count_nonfinite counts every poisoned element and none after a random fill") {
  const std::size_t count = 50001;
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3, DType::int32}) {
    CAPTURE(mgbench::kernels::to_string(dt));
    Buffer buf(count * mgbench::kernels::dtype_size(dt));
    std::uint64_t bad = 0;
    CUDA_REQUIRE(mgbench::kernels::fill_poison(buf.get(), count, dt, nullptr));
    CUDA_REQUIRE(mgbench::kernels::count_nonfinite_sync(buf.get(), count, dt, &bad, nullptr));
    CHECK(bad == count);
    CUDA_REQUIRE(mgbench::kernels::fill_uniform(buf.get(), count, dt, 7, -1.0, 1.0, nullptr));
    CUDA_REQUIRE(mgbench::kernels::count_nonfinite_sync(buf.get(), count, dt, &bad, nullptr));
    CHECK(bad == 0);
    // One poisoned element in the middle of a random buffer is found.
    const std::size_t es = mgbench::kernels::dtype_size(dt);
    CUDA_REQUIRE(mgbench::kernels::fill_poison(static_cast<unsigned char*>(buf.get()) + 777 * es,
                                               1, dt, nullptr));
    CUDA_REQUIRE(mgbench::kernels::count_nonfinite_sync(buf.get(), count, dt, &bad, nullptr));
    CHECK(bad == 1);
  }
}

TEST_CASE("gemm workload: every dtype x impl at 256 cubed is ok (fp8 waived below cc 8.9)") {
  std::vector<Params> points;
  for (const char* dtype : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    for (const char* impl : {"cublas", "mgbench"}) {
      points.push_back(point(256, 256, 256, dtype, impl));
    }
  }
  const auto results = run_gemm(points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    if (r.params.text("dtype") == "fp8" && !device_has_fp8()) {
      CAPTURE(r.message);
      CHECK(r.status == Status::waived);
      continue;
    }
    check_ok_with_metrics(r);
  }
}

TEST_CASE("gemm workload: odd shapes are ok for every dtype of the own kernels and cuBLAS") {
  std::vector<Params> points;
  for (const Shape& s : {Shape{127, 253, 61}, Shape{200, 96, 1000}, Shape{1, 8192, 512}}) {
    for (const char* dtype : {"fp32", "tf32", "fp16", "bf16"}) {
      for (const char* impl : {"cublas", "mgbench"}) {
        points.push_back(point(s.m, s.n, s.k, dtype, impl));
      }
    }
    // cuBLASLt's fp8 needs 16-byte aligned leading dimensions; the own kernel takes any shape.
    if (device_has_fp8()) points.push_back(point(s.m, s.n, s.k, "fp8", "mgbench"));
  }
  const auto results = run_gemm(points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) check_ok_with_metrics(r);
}

TEST_CASE("gemm workload: impl=mgbench points record the own kernel and its version") {
  std::vector<Params> points = {point(512, 512, 512, "bf16", "mgbench"),
                                point(127, 253, 61, "bf16", "mgbench"),
                                point(256, 256, 256, "fp32", "mgbench"),
                                point(256, 256, 256, "bf16", "cublas")};
  if (device_has_fp8()) points.push_back(point(256, 256, 256, "fp8", "mgbench"));
  const auto results = run_gemm(points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    check_ok_with_metrics(r);
    CAPTURE(r.params.dump(), r.extra.dump());
    if (r.params.text("impl") == "cublas") {
      CHECK_FALSE(r.extra.contains("implementation"));
      continue;
    }
    REQUIRE(r.extra.contains("implementation"));
    const std::string name = r.extra["implementation"]["name"].get<std::string>();
    CHECK(r.extra["implementation"]["version"].get<int>() >= 1);
    if (r.params.text("dtype") == "fp32") {
      CHECK(name == "simt_fp32");
    } else if (r.params.integer("k") == 61) {
      CHECK(name == "mma_sync");  // K * 2 bytes not a multiple of 16: no TMA
    } else {
      CHECK((name == "sm90a_wgmma" || name == "mma_sync"));
    }
  }
}

TEST_CASE("gemm workload: an allocation too large for the GPU is oom") {
  // 2^20 x 2^20 bf16 = 2 TiB per matrix.
  const auto results = run_gemm({point(1 << 20, 1 << 20, 1 << 20, "bf16", "mgbench")});
  REQUIRE(results.size() == 1);
  CAPTURE(results[0].message);
  CHECK(results[0].status == Status::oom);
}

TEST_CASE("gemm workload: results carry the verification details") {
  const auto results = run_gemm({point(300, 200, 100, "bf16", "mgbench")});
  REQUIRE(results.size() == 1);
  const auto& r = results[0];
  REQUIRE(r.status == Status::ok);
  CAPTURE(r.verification.dump());
  // Verification::details, merged into PointResult::verification (or nested as "details").
  const Json& v = r.verification.contains("details") ? r.verification["details"] : r.verification;
  REQUIRE(v.contains("checked"));
  CHECK(v["checked"].get<std::int64_t>() == 16 * 8);
  CHECK(v["max_rel_error"].get<double>() < 1e-3);
}
