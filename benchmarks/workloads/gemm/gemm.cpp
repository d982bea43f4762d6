// GEMM: dense matrix multiply on every GPU of the group at the same time (weak scaling).
//
// Measured: C = A * B^T with A[M,K], B[N,K], C[M,N] row-major (the "TN" layout), beta = 0,
// one GEMM per op, on each rank's own buffers. Two implementations:
//   impl=cublas   cuBLASLt, the best heuristic algorithm chosen once per point, 64 MiB
//                 workspace; fp32 (COMPUTE_32F), tf32 (COMPUTE_32F_FAST_TF32), fp16/bf16
//                 (16-bit in/out, fp32 compute), fp8 (e4m3 in, bf16 out; cc >= 8.9).
//   impl=mgbench  the project's own kernels (kernels/gemm.hpp): fixed code, so a change in
//                 its numbers isolates driver/hardware changes from cuBLAS updates. The
//                 kernel that ran and its version are recorded in the point
//                 (extra.implementation).
// Shapes: square M = N = K = size, explicit shape=MxNxK points (a list), and batch points
// M = batch (tokens), N = K = hidden.
// Formulas (t = the slowest rank's median seconds per GEMM):
//   TFLOP/s per GPU = 2 M N K / t / 1e12;  aggregate = sum over ranks = GPUs x per GPU.
// Timing: default device. Cache: default cold: when A and B together are smaller than twice
// L2, consecutive GEMMs read identical copies of them from a rotation of buffer sets (so the
// output is the same whichever set an op used); TFLOP/s above the datasheet peak is flagged.
// Inputs are random in [-1, 1] (never zero), the output is poisoned with NaN in setup, and
// verify() checks that every output element is finite (was written) and compares sampled
// elements with an FP64 host reference (dtype-aware tolerance, see gemm_tolerance).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mgbench/bench/cublaslt.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "gemm/gemm_math.hpp"
#include "work_costs.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/kernels/gemm.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/core/check.hpp"

namespace mgbench::bench {

namespace {

constexpr std::size_t kWorkspaceBytes = 64ull << 20;
constexpr int kSampleRows = 16;  // 16 x 8 = 128 checked elements per point
constexpr int kSampleCols = 8;

enum class Impl { cublas, mgbench };

struct DtypeInfo {
  std::string name;
  kernels::DType input;   // type of A and B (tf32: stored as fp32, TF32 math)
  kernels::DType output;  // storage type of C
};

DtypeInfo dtype_info(const std::string& name) {
  using kernels::DType;
  if (name == "fp32") return {name, DType::fp32, DType::fp32};
  if (name == "tf32") return {name, DType::tf32, DType::fp32};
  if (name == "fp16") return {name, DType::fp16, DType::fp16};
  if (name == "bf16") return {name, DType::bf16, DType::bf16};
  if (name == "fp8") return {name, DType::fp8_e4m3, DType::bf16};
  throw UsageError("unknown gemm dtype '" + name + "': expected fp32, tf32, fp16, bf16 or fp8");
}

// One cuBLASLt matmul, planned once (heuristic) and enqueued many times.
// Row-major C[M,N] = A[M,K] B[N,K]^T is, in cuBLASLt's column-major terms,
// C^T[N,M] = op(B_cm) * A_cm with B_cm = B viewed as K x N (transposed: T) and A_cm = A
// viewed as K x M (N): the "TN" case that fp8 requires.
class LtMatmul {
 public:
  LtMatmul(const DtypeInfo& dtype, std::int64_t m, std::int64_t n, std::int64_t k,
           std::size_t workspace_bytes)
      : workspace_bytes_(workspace_bytes) {
    cublasLtHandle_t handle = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
    handle_.reset(handle);

    const cublasComputeType_t compute =
        dtype.name == "tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublasLtMatmulDesc_t desc = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F));
    desc_.reset(desc);
    const cublasOperation_t trans_a = CUBLAS_OP_T;
    const cublasOperation_t trans_b = CUBLAS_OP_N;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &trans_a, sizeof trans_a));
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                        &trans_b, sizeof trans_b));
    // fp8: the A/B/D scale pointers stay unset (scale 1), fast accumulation stays off.

    const cudaDataType_t in = cuda_data_type(dtype.input);
    const cudaDataType_t out = cuda_data_type(dtype.output);
    cublasLtMatrixLayout_t layout = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, in, static_cast<std::uint64_t>(k),
                                                    static_cast<std::uint64_t>(n), k));
    layout_b_.reset(layout);  // cuBLASLt's "A" operand: our B
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, in, static_cast<std::uint64_t>(k),
                                                    static_cast<std::uint64_t>(m), k));
    layout_a_.reset(layout);  // cuBLASLt's "B" operand: our A
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, out, static_cast<std::uint64_t>(n),
                                                    static_cast<std::uint64_t>(m), n));
    layout_c_.reset(layout);

    heuristic_ = lt_best_heuristic(
        handle, desc, layout_b_.get(), layout_a_.get(), layout_c_.get(), layout_c_.get(),
        workspace_bytes,
        "cuBLASLt has no algorithm for dtype=" + dtype.name + " m=" + std::to_string(m) +
            " n=" + std::to_string(n) + " k=" + std::to_string(k));
  }

  void enqueue(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmul(handle_.get(), desc_.get(), &alpha, b, layout_b_.get(),
                                        a, layout_a_.get(), &beta, c, layout_c_.get(), c,
                                        layout_c_.get(), &heuristic_.algo, workspace,
                                        workspace_bytes_, stream));
  }

  std::size_t algo_workspace_bytes() const { return heuristic_.workspaceSize; }

 private:
  std::size_t workspace_bytes_;
  LtPtr<cublasLtHandle_t> handle_;
  LtPtr<cublasLtMatmulDesc_t> desc_;
  LtPtr<cublasLtMatrixLayout_t> layout_a_, layout_b_, layout_c_;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

class GemmPoint final : public RankPoint {
 public:
  explicit GemmPoint(RankEnv& env)
      : stream_(env.stream), rank_(env.rank), params_(*env.params),
        m_(gemm_dims(params_).m), n_(gemm_dims(params_).n), k_(gemm_dims(params_).k),
        dtype_(dtype_info(params_.text("dtype"))),
        impl_(params_.choice<Impl>("impl",
                                   {{"cublas", Impl::cublas}, {"mgbench", Impl::mgbench}})) {
    if (m_ < 1 || n_ < 1 || k_ < 1) throw UsageError("gemm needs m, n, k >= 1");
    MGBENCH_CUDA_CHECK(cudaSetDevice(env.device));
    if (dtype_.name == "fp8") {
      int major = 0, minor = 0;
      MGBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                                env.device));
      MGBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                                env.device));
      if (major * 10 + minor < 89) throw WaivedError("fp8 needs compute capability >= 8.9");
    }

    const std::size_t in_size = kernels::dtype_size(dtype_.input);
    const std::size_t out_size = kernels::dtype_size(dtype_.output);
    const auto um = static_cast<std::size_t>(m_), un = static_cast<std::size_t>(n_),
               uk = static_cast<std::size_t>(k_);
    const GemmBufferBytes bytes = gemm_buffer_bytes(m_, n_, k_, in_size, out_size);
    a_ = std::make_unique<DeviceBuffer>(bytes.a);
    b_ = std::make_unique<DeviceBuffer>(bytes.b);
    c_ = std::make_unique<DeviceBuffer>(bytes.c);
    if (impl_ == Impl::cublas) {
      lt_ = std::make_unique<LtMatmul>(dtype_, m_, n_, k_, kWorkspaceBytes);
      workspace_ = std::make_unique<DeviceBuffer>(kWorkspaceBytes);
    } else {
      kernel_ = kernels::gemm_select(dtype_.input, m_, n_, k_, a_->get(), b_->get());
    }

    seed_ = 0x67656d6dULL + 0x100000001ULL * static_cast<std::uint64_t>(rank_);
    MGBENCH_CUDA_CHECK(kernels::fill_uniform(a_->get(), um * uk, dtype_.input, seed_ * 2 + 1,
                                             -1.0, 1.0, stream_));
    MGBENCH_CUDA_CHECK(kernels::fill_uniform(b_->get(), un * uk, dtype_.input, seed_ * 2 + 2,
                                             -1.0, 1.0, stream_));
    MGBENCH_CUDA_CHECK(kernels::fill_poison(c_->get(), um * un, dtype_.output, stream_));
    make_input_copies(env, bytes);
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void enqueue() override {
    const std::size_t set = next_set_;
    next_set_ = (next_set_ + 1) % rotation_.sets;
    const void* a = set == 0 ? a_->get() : copies_->as<char>() + (set - 1) * rotation_.set_bytes;
    const void* b = set == 0 ? b_->get() : static_cast<const char*>(a) + b_offset_;
    if (impl_ == Impl::cublas) {
      lt_->enqueue(a, b, c_->get(), workspace_->get(), stream_);
    } else {
      MGBENCH_CUDA_CHECK(kernels::gemm(dtype_.input, m_, n_, k_, a, b, c_->get(), stream_));
    }
  }

  Verification verify() override;

  Json rank_details() override {
    std::size_t bytes = a_->bytes() + b_->bytes() + c_->bytes() + (copies_ ? copies_->bytes() : 0);
    Json details{{"rotation", rotation_json(rotation_)}};
    if (workspace_) {
      bytes += workspace_->bytes();
      details["cublas_algo_workspace_bytes"] = lt_->algo_workspace_bytes();
    }
    details["peak_bytes"] = bytes;  // device memory this point allocated
    if (impl_ == Impl::mgbench) {
      const kernels::GemmKernelInfo& info = kernels::gemm_kernel_info(kernel_);
      details["implementation"] = {{"name", info.name}, {"version", info.version}};
    }
    return details;
  }

 private:
  // cache=cold with A and B smaller than twice L2: identical copies of them (sets 1..n-1 of
  // the rotation; set 0 is a_ and b_).
  void make_input_copies(RankEnv& env, const GemmBufferBytes& bytes) {
    constexpr std::size_t kAlign = 256;
    b_offset_ = (bytes.a + kAlign - 1) / kAlign * kAlign;
    rotation_ = env.rotation((b_offset_ + bytes.b + kAlign - 1) / kAlign * kAlign);
    if (rotation_.sets < 2) return;
    copies_ = std::make_unique<DeviceBuffer>((rotation_.sets - 1) * rotation_.set_bytes);
    for (std::size_t set = 1; set < rotation_.sets; ++set) {
      char* base = copies_->as<char>() + (set - 1) * rotation_.set_bytes;
      MGBENCH_CUDA_CHECK(cudaMemcpyAsync(base, a_->get(), bytes.a, cudaMemcpyDeviceToDevice, stream_));
      MGBENCH_CUDA_CHECK(cudaMemcpyAsync(base + b_offset_, b_->get(), bytes.b,
                                         cudaMemcpyDeviceToDevice, stream_));
    }
  }

  // Copies rows `rows` of a [rows_total, cols] matrix of `dtype` to the host as doubles.
  std::vector<std::vector<double>> fetch_rows(const DeviceBuffer& buffer, kernels::DType dtype,
                                              std::int64_t cols,
                                              const std::vector<std::int64_t>& rows) const;

  cudaStream_t stream_;
  int rank_;
  Params params_;
  std::int64_t m_, n_, k_;
  DtypeInfo dtype_;
  Impl impl_;
  kernels::GemmKernel kernel_ = kernels::GemmKernel::mma_sync;  // impl=mgbench: what runs
  std::uint64_t seed_ = 0;
  std::unique_ptr<DeviceBuffer> a_, b_, c_, workspace_;
  std::unique_ptr<LtMatmul> lt_;
  Rotation rotation_;
  std::unique_ptr<DeviceBuffer> copies_;  // input sets 1.. of a cold rotation
  std::size_t b_offset_ = 0, next_set_ = 0;
};

std::vector<std::vector<double>> GemmPoint::fetch_rows(
    const DeviceBuffer& buffer, kernels::DType dtype, std::int64_t cols,
    const std::vector<std::int64_t>& rows) const {
  const std::size_t size = kernels::dtype_size(dtype);
  const std::size_t row_bytes = static_cast<std::size_t>(cols) * size;
  std::vector<unsigned char> raw(rows.size() * row_bytes);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto* src = static_cast<const unsigned char*>(buffer.get()) +
                      static_cast<std::size_t>(rows[r]) * row_bytes;
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(raw.data() + r * row_bytes, src, row_bytes,
                                       cudaMemcpyDeviceToHost, stream_));
  }
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<std::vector<double>> out(rows.size(), std::vector<double>(cols));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::int64_t j = 0; j < cols; ++j) {
      out[r][j] = kernels::decode_element(dtype, raw.data() + r * row_bytes, j);
    }
  }
  return out;
}

Verification GemmPoint::verify() {
  Verification result;
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));

  // (a) Every output element was written (the NaN poison is gone) and nothing overflowed.
  std::uint64_t nonfinite = 0;
  const std::size_t elements = static_cast<std::size_t>(m_) * static_cast<std::size_t>(n_);
  MGBENCH_CUDA_CHECK(
      kernels::count_nonfinite_sync(c_->get(), elements, dtype_.output, &nonfinite, stream_));
  result.details["nonfinite"] = nonfinite;
  if (nonfinite != 0) {
    result.ok = false;
    result.message = std::to_string(nonfinite) + " of " + std::to_string(elements) +
                     " output elements are NaN/Inf (not written or overflowed)";
    return result;
  }

  // (b) Sampled elements against an FP64 reference computed from the stored inputs.
  const auto rows = gemm_sample_indices(m_, kSampleRows, seed_ ^ 0x726f7773ULL);
  const auto cols = gemm_sample_indices(n_, kSampleCols, seed_ ^ 0x636f6c73ULL);
  const auto a_rows = fetch_rows(*a_, dtype_.input, k_, rows);
  const auto b_rows = fetch_rows(*b_, dtype_.input, k_, cols);
  const auto c_rows = fetch_rows(*c_, dtype_.output, n_, rows);
  const GemmTolerance tolerance = gemm_tolerance(dtype_.name);

  double max_rel = 0, worst_ratio = -1;
  std::string worst;
  std::size_t checked = 0, failed = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t q = 0; q < cols.size(); ++q) {
      double ref = 0, abs_sum = 0;
      const auto& a = a_rows[r];
      const auto& b = b_rows[q];
      for (std::int64_t kk = 0; kk < k_; ++kk) {
        const double p = a[kk] * b[kk];
        ref += p;
        abs_sum += std::fabs(p);
      }
      const double got = c_rows[r][cols[q]];
      const double err = std::fabs(got - ref);
      const double allowed = gemm_allowed_error(tolerance, ref, abs_sum);
      const double rel = abs_sum > 0 ? err / abs_sum : err;
      const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
      ++checked;
      if (!(ratio <= 1.0)) ++failed;
      max_rel = std::max(max_rel, rel);
      if (ratio > worst_ratio || std::isnan(ratio)) {
        worst_ratio = ratio;
        std::ostringstream text;
        text.precision(6);
        text << "C[" << rows[r] << "][" << cols[q] << "] = " << got << ", reference " << ref
             << " (|error| " << err << ", allowed " << allowed << ", |error|/sum|a*b| " << rel
             << ")";
        worst = text.str();
      }
    }
  }
  result.details["checked"] = checked;
  result.details["wrong"] = failed;
  result.details["max_rel_error"] = max_rel;
  result.details["tolerance"] = {{"value_rel", tolerance.value_rel},
                                 {"sum_rel", tolerance.sum_rel}};
  if (failed != 0) {
    result.ok = false;
    result.message = std::to_string(failed) + " of " + std::to_string(checked) +
                     " sampled elements outside tolerance; worst " + worst;
  }
  return result;
}

}  // namespace

// Default timing host: a GEMM's launch cost is negligible next to its run time, and
// host-launched GEMMs keep a power-capped GPU as busy between samples as a training loop does
// (behind the closed gate it idles, and its clocks rise: docs/METHODOLOGY.md); cold cache:
// operands from HBM as in a real model's layers.
RunnerOptions gemm_runner_options() {
  RunnerOptions options;
  options.default_timing = TimingMethod::host;
  options.default_cache = CacheMode::cold;
  options.limits = {LimitCheck{"tflops_per_gpu", LimitKind::tflops}};
  return options;
}

}  // namespace mgbench::bench

namespace {
// How reports show GEMM: TFLOP/s per GPU and in total, M = N = K as one column, TFLOP/s per GPU
// vs size per shape and dtype (smallest GPU count solid, largest dashed).
mgbench::Presentation gemm_presentation() {
  using namespace mgbench;
  return Presentation()
      .metric(MetricSpec("tflops_per_gpu", "TFLOP/s per GPU", "TFLOP/s")
                  .of_peak(PeakSpec::tflops("dtype")))
      .metric(MetricSpec("tflops_aggregate", "aggregate TFLOP/s", "TFLOP/s")
                  .of_peak(PeakSpec::same_as("tflops_per_gpu")))
      .axis(AxisSpec("size", "matrix size"))
      .axis(AxisSpec("m", "M (batch tokens)")
                .with({"n", "k"}, "matrix size M = N = K")
                .tooltip_word("size"))
      .axis(AxisSpec("batch", "batch tokens").with({"hidden"}))
      .table(TableSpec()
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::params().merged({"m", "n", "k"}, "M=N=K"))
                 .column(ColumnSpec::median_time())
                 .column(ColumnSpec::metric("tflops_per_gpu", "TFLOP/s/GPU"))
                 .column(ColumnSpec::metric("tflops_aggregate", "TFLOP/s total"))
                 .column(ColumnSpec::speedup())
                 .column(ColumnSpec::efficiency())
                 .tail())
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("size", "tflops_per_gpu")
                 .titled("TFLOP/s per GPU vs size")
                 .split_by({"shape", "dtype"})
                 .gpus_dashed())
      .summary(SummarySpec("", "own kernels vs cuBLAS",
                           "TFLOP/s per GPU of the two impls measured in the same run")
                   .column("gpus", "GPUs", ValueFormat::count)
                   .column("shape", "shape")
                   .column("dtype", "dtype")
                   .column("measured", "timing, cache")
                   .column("cublas_tflops", "cuBLAS", ValueFormat::fixed, 1)
                   .column("own_tflops", "own", ValueFormat::fixed, 1)
                   .column("own_vs_cublas", "own / cuBLAS", ValueFormat::fixed, 3)
                   .column("kernel", "own kernel"));
}

// One line per own kernel for `mgbench list`: name, version, GPUs, types.
std::vector<std::string> own_kernel_notes() {
  std::vector<std::string> notes;
  for (const auto& k : mgbench::kernels::kGemmKernels) {
    notes.push_back(std::string("impl=mgbench kernel ") + k.name + " v" +
                    std::to_string(k.version) + ": compute capability " + k.archs + "; " +
                    k.dtypes);
  }
  return notes;
}
}  // namespace

MGBENCH_REGISTER_WORKLOAD(
    mgbench::Workload("gemm")
        .category(mgbench::WorkloadCategory::compute)
        .summary("Dense matrix multiply C = A*B^T on every GPU at once (cuBLASLt and the own "
                 "kernels: wgmma/TMA on Hopper, mma.sync, SIMT)")
        .formulas("TFLOP/s per GPU = 2*M*N*K / t / 1e12 (t = slowest rank's median time per "
                  "GEMM); aggregate = sum over ranks = GPUs x per GPU. Square points: "
                  "M = N = K = size; shape points: MxNxK as given; batch points: M = batch, "
                  "N = K = hidden.")
        .requirements("dtype=fp8 needs compute capability >= 8.9 (else waived); "
                      "tf32/bf16/fp16 of impl=mgbench need sm_80+")
        .notes(own_kernel_notes())
        .axis(mgbench::Axis::text("impl", {"cublas", "mgbench"})
                  .allowed({"cublas", "mgbench"})
                  .describe("cublas: cuBLASLt best heuristic algorithm; mgbench: own kernels"))
        .axis(mgbench::Axis::text("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"})
                  .quick({"bf16", "fp32"})
                  .allowed({"fp32", "tf32", "fp16", "bf16", "fp8"})
                  .describe("input type; fp32/tf32 compute fp32 out, bf16/fp16 out in the "
                            "input type, fp8 = e4m3 in, bf16 out; fp32 accumulation"))
        .axis(mgbench::Axis::integer("size", {"4096", "8192"})
                  .quick({"4096"})
                  .full({"2048", "4096", "8192", "16384"})
                  .at_most(65536)
                  .describe("square points: M = N = K = size"))
        .axis(mgbench::Axis::text("shape", {})
                  .describe("explicit shapes MxNxK, a list (e.g. 8192x6144x4096,8192x4096x4096: "
                            "each GEMM of a transformer layer alone)"))
        .axis(mgbench::Axis::integer("batch", {})
                  .at_most(std::int64_t{1} << 24)
                  .describe("batch points (--batch-sizes): M = batch tokens, N = K = hidden"))
        .axis(mgbench::Axis::integer("hidden", {"8192"})
                  .at_most(65536)
                  .describe("hidden size of the batch points (N = K)"))
        .axis(mgbench::timing_axis("host"))
        .axis(mgbench::cache_axis("cold"))
        .expand(mgbench::bench::expand_gemm_points)
        .summarize(mgbench::bench::own_vs_cublas_summary)
        .throughput("tflops_aggregate", "TFLOP/s")
        .cost(mgbench::bench::gemm_cost)
        .present(gemm_presentation())
        .estimate_seconds_per_point(4.0)
        .sustained(1.0, 0.02)  // power-bound: see Workload::sustained
        .runner(mgbench::bench::make_runner(
            [](mgbench::bench::RankEnv& env) -> std::unique_ptr<mgbench::bench::RankPoint> {
              return std::make_unique<mgbench::bench::GemmPoint>(env);
            },
            mgbench::bench::gemm_metrics, mgbench::bench::gemm_runner_options())));
