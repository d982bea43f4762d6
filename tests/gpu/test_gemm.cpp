// GEMM on one GPU: the own kernels against a full FP64 host reference (every dtype, odd
// sizes and tile multiples), the fill/poison/count kernels, and every dtype x impl through
// the registered "gemm" workload.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/gemm_math.hpp"
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

namespace {

#define CUDA_REQUIRE(expr) REQUIRE((expr) == cudaSuccess)

class Buffer {
 public:
  explicit Buffer(std::size_t bytes) : bytes_(bytes) { CUDA_REQUIRE(cudaMalloc(&ptr_, bytes)); }
  ~Buffer() { cudaFree(ptr_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return ptr_; }
  std::vector<unsigned char> to_host() const {
    std::vector<unsigned char> host(bytes_);
    CUDA_REQUIRE(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

struct Shape {
  std::int64_t m, n, k;
};

struct GemmRun {
  std::vector<double> c;  // the GPU result, decoded
  std::vector<double> ref, abs_sum;
};

// Runs the own GEMM on random inputs and computes the full FP64 reference on the host.
// `extra` poisoned elements follow C to catch writes past its end.
GemmRun run_own_gemm(DType type, Shape s, std::size_t extra = 0, int path = -1) {
  const DType dt = mgbench::kernels::storage_dtype(type);
  const std::size_t es = mgbench::kernels::dtype_size(dt);
  const auto m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n),
             k = static_cast<std::size_t>(s.k);
  Buffer a(m * k * es), b(n * k * es), c((m * n + extra) * es);
  CUDA_REQUIRE(mgbench::kernels::fill_uniform(a.get(), m * k, dt, 11, -1.0, 1.0, nullptr));
  CUDA_REQUIRE(mgbench::kernels::fill_uniform(b.get(), n * k, dt, 12, -1.0, 1.0, nullptr));
  CUDA_REQUIRE(mgbench::kernels::fill_poison(c.get(), m * n + extra, dt, nullptr));
  if (path < 0) {
    CUDA_REQUIRE(mgbench::kernels::gemm(type, s.m, s.n, s.k, a.get(), b.get(), c.get(), nullptr));
  } else if (type == DType::fp32) {
    CUDA_REQUIRE(mgbench::kernels::detail::gemm_simt_fp32(
        s.m, s.n, s.k, static_cast<const float*>(a.get()), static_cast<const float*>(b.get()),
        static_cast<float*>(c.get()), path == 1, nullptr));
  } else {
    CUDA_REQUIRE(mgbench::kernels::detail::gemm_tensor_core(type, s.m, s.n, s.k, a.get(),
                                                            b.get(), c.get(), path == 1, nullptr));
  }
  CUDA_REQUIRE(cudaDeviceSynchronize());
  const auto ha = a.to_host(), hb = b.to_host(), hc = c.to_host();
  GemmRun run;
  std::vector<double> da(m * k), db(n * k);
  using mgbench::kernels::decode_element;
  for (std::size_t i = 0; i < m * k; ++i) da[i] = decode_element(dt, ha.data(), i);
  for (std::size_t i = 0; i < n * k; ++i) db[i] = decode_element(dt, hb.data(), i);
  run.c.resize(m * n + extra);
  for (std::size_t i = 0; i < m * n + extra; ++i) run.c[i] = decode_element(dt, hc.data(), i);
  run.ref.resize(m * n);
  run.abs_sum.resize(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0, abs_acc = 0;
      for (std::size_t q = 0; q < k; ++q) {
        const double p = da[i * k + q] * db[j * k + q];
        acc += p;
        abs_acc += std::fabs(p);
      }
      run.ref[i * n + j] = acc;
      run.abs_sum[i * n + j] = abs_acc;
    }
  }
  return run;
}

// Number of elements of C outside the workload's tolerance (NaN counts as outside).
std::size_t count_wrong(DType type, Shape s, const GemmRun& run) {
  const auto tol = mgbench::bench::gemm_tolerance(mgbench::kernels::to_string(type));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < run.ref.size(); ++i) {
    const double err = std::fabs(run.c[i] - run.ref[i]);
    if (!(err <= mgbench::bench::gemm_allowed_error(tol, run.ref[i], run.abs_sum[i]))) {
      if (wrong < 5) {
        UNSCOPED_INFO("C[" << i / s.n << "][" << i % s.n << "] = " << run.c[i] << ", reference "
                           << run.ref[i]);
      }
      ++wrong;
    }
  }
  return wrong;
}

const std::vector<Shape> kShapes = {
    {1, 1, 1},        // a single element
    {127, 253, 61},   // odd everything, K not a multiple of 8 (per-element load path)
    {200, 96, 1000},  // M, N tails, long K with a K-tile tail
    {129, 130, 72},   // one past a tile in M and N, vector path with a K tail
    {256, 256, 256},  // tile multiples
    {1157, 136, 40},  // ten block rows: a full and a partial raster group of 8
};

void check_own_gemm(DType type) {
  for (const auto& s : kShapes) {
    CAPTURE(mgbench::kernels::to_string(type), s.m, s.n, s.k);
    const GemmRun run = run_own_gemm(type, s);
    CHECK(count_wrong(type, s, run) == 0);
  }
}

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

TEST_CASE("own gemm bf16 matches the FP64 reference at odd sizes and tile multiples") {
  check_own_gemm(DType::bf16);
}

TEST_CASE("own gemm fp16 matches the FP64 reference at odd sizes and tile multiples") {
  check_own_gemm(DType::fp16);
}

TEST_CASE("own gemm tf32 matches the FP64 reference at odd sizes and tile multiples") {
  check_own_gemm(DType::tf32);
}

TEST_CASE("own gemm fp32 (SIMT) matches the FP64 reference at odd sizes and tile multiples") {
  check_own_gemm(DType::fp32);
}

TEST_CASE("own gemm: the per-element load path gives the same bits as the vector path") {
  const Shape s{136, 72, 264};
  for (DType type : {DType::bf16, DType::fp16, DType::tf32, DType::fp32}) {
    CAPTURE(mgbench::kernels::to_string(type));
    const GemmRun vector_path = run_own_gemm(type, s, 0, 1);
    const GemmRun scalar_path = run_own_gemm(type, s, 0, 0);
    REQUIRE(count_wrong(type, s, vector_path) == 0);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < vector_path.c.size(); ++i) {
      differ += vector_path.c[i] == scalar_path.c[i] ? 0 : 1;
    }
    CHECK(differ == 0);
  }
}

TEST_CASE("own gemm writes no element past the end of C") {
  const Shape s{130, 67, 40};
  for (DType type : {DType::bf16, DType::tf32, DType::fp32}) {
    CAPTURE(mgbench::kernels::to_string(type));
    const std::size_t extra = 4096;
    const GemmRun run = run_own_gemm(type, s, extra);
    std::size_t untouched = 0;
    for (std::size_t i = run.ref.size(); i < run.c.size(); ++i) {
      untouched += std::isnan(run.c[i]) ? 1 : 0;
    }
    CHECK(untouched == extra);
  }
}

TEST_CASE("own gemm rejects empty shapes and null pointers") {
  Buffer buf(1024);
  CHECK(mgbench::kernels::gemm(DType::bf16, 0, 4, 4, buf.get(), buf.get(), buf.get(),
                               nullptr) == cudaErrorInvalidValue);
  CHECK(mgbench::kernels::gemm(DType::fp32, 4, 4, 0, buf.get(), buf.get(), buf.get(),
                               nullptr) == cudaErrorInvalidValue);
  CHECK(mgbench::kernels::gemm(DType::tf32, 4, 4, 4, nullptr, buf.get(), buf.get(),
                               nullptr) == cudaErrorInvalidValue);
}

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
      if (std::string(dtype) == "fp8" && std::string(impl) == "mgbench") continue;
      points.push_back(point(256, 256, 256, dtype, impl));
    }
  }
  const auto results = run_gemm(points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    if (r.params.at("dtype") == "fp8" && !device_has_fp8()) {
      CAPTURE(r.message);
      CHECK(r.status == Status::waived);
      continue;
    }
    check_ok_with_metrics(r);
  }
}

TEST_CASE("gemm workload: odd shapes are ok for every non-fp8 dtype of both impls") {
  std::vector<Params> points;
  for (const Shape& s : {Shape{127, 253, 61}, Shape{200, 96, 1000}, Shape{1, 8192, 512}}) {
    for (const char* dtype : {"fp32", "tf32", "fp16", "bf16"}) {
      for (const char* impl : {"cublas", "mgbench"}) {
        points.push_back(point(s.m, s.n, s.k, dtype, impl));
      }
    }
  }
  const auto results = run_gemm(points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) check_ok_with_metrics(r);
}

TEST_CASE("gemm workload: impl=mgbench with fp8 is waived with the reason") {
  const auto results = run_gemm({point(256, 256, 256, "fp8", "mgbench")});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == Status::waived);
  CHECK(results[0].message.find("no fp8 path") != std::string::npos);
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
