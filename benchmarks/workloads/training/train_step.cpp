// train_step: one data-parallel training step of an MLP per op, on every GPU of the group.
//
// The model (see train_math.hpp): L layers of width H, GEMM + bias + GELU per layer (the last
// layer without activation), loss 0.5 * sum (y - t)^2 against a random target. Per GPU and
// per step, on the rank's timed stream:
//   accum times: [h2d: copy the micro-batch x, t from pinned host memory]; forward (cuBLASLt
//   GEMM + bias/activation kernel per layer); loss gradient; backward (weight-gradient GEMM
//   into fp32 gradients, bias-gradient kernel, input-gradient GEMM + activation backward);
//   then the fp32 gradients are summed over the ranks in buckets (bucket_mb, whole layers,
//   PyTorch-DDP style) on the comm stream: with overlap=true each bucket is launched as soon
//   as the backward pass has finished its layers (CUDA events), with overlap=false all
//   buckets after the whole backward; the comm stream is joined back into the timed stream;
//   finally SGD with momentum on the fp32 master weights (lr 1e-3, momentum 0.9, gradients
//   scaled by 1/global batch), refreshing the 16-bit weight copy.
// Precisions: fp32 (COMPUTE_32F), tf32 (COMPUTE_32F_FAST_TF32), bf16 and fp16 (16-bit
// activations and weight copy, fp32 accumulation, fp32 master weights). Gradients are always
// fp32 (the weight-gradient GEMM writes fp32; accumulation steps add in fp32) and the
// all-reduce is fp32 for every precision, as with AMP master gradients: the communication
// volume is 4 bytes per parameter regardless of precision.
// impl=nccl: ncclAllReduce; impl=mgbench: the project's own peer all-reduce (PeerAllreduce).
//
// Timing: host, always (a step is launched by the host, launch cost included, as in a training
// loop); cache: hot, always (the model's weights are reused every step, as in a real job).
// Neither is an axis; both are recorded with every point ("timing", "cache").
// Formulas (t = the slowest rank's median seconds per step, N = GPUs):
//   samples/s = batch * accum * N / t;  model TFLOP/s per GPU = (6L - 2) H^2 batch accum / t.
// Breakdown (timed after the samples and as they are: host-launched after the ranks meet, never
// behind a closed start gate; every part the same way, slowest rank, median; recorded per rank
// as details.breakdown_timing):
//   step_s, compute_only_s (the same step without the all-reduce), comm_s (the bucketed
//   all-reduce alone), h2d_s (one step's batch copies alone), optimizer_s;
//   exposed_comm_s = max(0, step_s - compute_only_s);
//   overlap_ratio = clamp((comm_s - exposed_comm_s) / comm_s, 0, 1).
// Peak memory per rank: device memory in use above the point's set-up baseline, less what the
// libraries allocate lazily (NCCL's buffers, once per group: every collective the point uses,
// the verification's included, runs once at the end of set-up; CUDA's and cuBLAS's on the first
// op), which is reported apart as library_lazy_bytes; at least the bytes the point allocated.
// Verification (every point): the fp32 master weights after the measured steps hash equal on
// every rank (bitwise-identical replicas, and all finite); and a tiny model (L=3, H=32,
// batch 8, the point's precision, accum, overlap, h2d and impl, one bucket per layer) runs one
// step whose all-reduced gradients must match the FP64 host reference summed over the ranks
// within train::gradient_tolerance() (normwise).
// The model replica is in src/train_model.cpp, the gradient all-reduce in src/train_reducer.cpp.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mgbench/bench/executor.hpp"
#include "training/step_memory.hpp"
#include "training/training_presentation.hpp"
#include "training/train_math.hpp"
#include "training/train_model.hpp"
#include "training/train_reducer.hpp"
#include "work_costs.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/kernels/train.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

using train::GradReducer;
using train::LtContext;
using train::MlpReplica;
using train::ModelConfig;
using train::mix64;

constexpr std::size_t kGemmWorkspaceBytes = 32ull << 20;
constexpr double kBreakdownBudgetS = 2.0;  // device time for the breakdown timings per point
constexpr std::uint64_t kDataSeed = 0x6461746100000000ULL;  // mixed with the rank
constexpr train::Activation kReferenceActivation = train::Activation::gelu;
// The tiny model of the gradient check.
constexpr int kTinyLayers = 3;
constexpr std::size_t kTinyHidden = 32;
constexpr std::size_t kTinyBatch = 8;
// The own all-reduce's grid in the training step: enough blocks to saturate the links, the
// other SMs stay with the backward pass it overlaps with.
constexpr int kReducerMaxBlocks = 32;

enum class Impl { nccl, mgbench };

Impl impl_of(const Params& params) {
  return params.choice<Impl>("impl", {{"nccl", Impl::nccl}, {"mgbench", Impl::mgbench}});
}

struct GradCheck {
  train::GradientError error;
  double tolerance = 0;
};

class TrainStepPoint final : public RankPoint {
 public:
  explicit TrainStepPoint(RankEnv& env)
      : env_(env), cfg_(train::config_from_params(*env.params)), memory_(env.device) {
    const Impl impl = impl_of(*env.params);

    ModelConfig tiny = cfg_;
    tiny.layers = kTinyLayers;
    tiny.hidden = kTinyHidden;
    tiny.batch = kTinyBatch;
    // The point's bucketing, in small: one bucket per layer (bucket_mb 0), or merged buckets
    // of two layers each plus a single one, so the FP64 reference checks merged offsets too.
    tiny.bucket_bytes =
        cfg_.bucket_bytes == 0 ? 0 : 2 * kTinyHidden * (kTinyHidden + 1) * sizeof(float);
    tiny.test_extra_reductions = test_hooks::read(test_hooks::kTrainDoubleReduce) ? 1 : 0;

    // Allocation and initialisation may fail on some ranks only (OOM): every rank meets the
    // others exactly once below, failed or not, before any collective set-up.
    std::exception_ptr error;
    try {
      const std::uint64_t data_seed = mix64(kDataSeed + static_cast<std::uint64_t>(env.rank));
      lt_ = std::make_unique<LtContext>(kGemmWorkspaceBytes);
      main_ = std::make_unique<MlpReplica>(env, cfg_, *lt_, data_seed);
      tiny_ = std::make_unique<MlpReplica>(env, tiny, *lt_, mix64(data_seed));
    } catch (...) {
      error = std::current_exception();
    }
    meet_after_setup(env, error);

    const std::size_t staging = std::max(train::max_bucket_count(main_->buckets()),
                                         train::max_bucket_count(tiny_->buckets())) *
                                sizeof(float);
    if (impl == Impl::mgbench) {
      reducer_ = std::make_unique<train::PeerReducer>(env, staging, kReducerMaxBlocks);
      staging_bytes_ = 2 * staging;  // PeerAllreduce keeps two halves of max_bytes
    } else {
      reducer_ = std::make_unique<train::NcclReducer>(env.comm);
    }
    main_->set_reducer(reducer_.get());
    tiny_->set_reducer(reducer_.get());
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
    memory_.warm([this] { warm_collectives(); });
  }

  void enqueue() override {
    memory_.first_ops();
    main_->enqueue_step(/*with_allreduce=*/true);
  }

  Verification verify() override {
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.comm_stream));
    memory_.note();
    Verification v;

    // 1. Replica agreement: every rank's master weights hash the same (the hash travels as
    //    the pointer value of all_gather_ptr).
    const MlpReplica::Hash mine = alone(env_, [this] { return main_->master_hash(); });
    const auto hashes = env_.all_gather_ptr(reinterpret_cast<void*>(
        static_cast<std::uintptr_t>(mine.value)));
    int disagreeing = 0;
    for (void* h : hashes) {
      if (reinterpret_cast<std::uintptr_t>(h) != static_cast<std::uintptr_t>(mine.value)) {
        ++disagreeing;
      }
    }
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(mine.value));
    v.details["weights_hash"] = hex;
    v.details["replicas_agree"] = disagreeing == 0;
    v.details["nonfinite_weights"] = mine.nonfinite;
    if (disagreeing != 0) {
      v.ok = false;
      v.message = std::to_string(disagreeing) +
                  " rank(s) hold different weights after the measured steps";
    } else if (mine.nonfinite != 0) {
      v.ok = false;
      v.message = std::to_string(mine.nonfinite) + " master weights are not finite";
    }

    // 2. Gradient check on the tiny model (collective: every rank runs it).
    const GradCheck check = alone(env_, [this] { return check_gradients(); });
    v.details["grad_rel_l2"] = check.error.rel_l2;
    v.details["max_rel_error"] = check.error.max_rel;
    v.details["grad_tolerance"] = check.tolerance;
    if (!(check.error.rel_l2 <= check.tolerance) && v.ok) {
      v.ok = false;
      v.message = "tiny-model gradients differ from the FP64 reference: relative error " +
                  std::to_string(check.error.rel_l2) + " > " + std::to_string(check.tolerance);
    }

    // 3. Step-time breakdown (collective timings; they change the weights, so they come
    //    after the replica check).
    measure_breakdown();
    memory_.note();
    return v;
  }

  Json rank_details() override {
    Json d;
    d["peak_bytes"] = memory_.peak_bytes(allocated_bytes());
    d["library_lazy_bytes"] = memory_.lazy_bytes();
    d["allocated_bytes"] = allocated_bytes();
    d["estimate_bytes"] =
        train::estimate_memory(cfg_.layers, cfg_.hidden, cfg_.batch, cfg_.precision,
                               kGemmWorkspaceBytes,
                               kernels::bias_grad_workspace_floats(cfg_.batch, cfg_.hidden),
                               staging_bytes_)
            .total();
    d["parameters"] = main_->layout().parameter_count();
    d["buckets"] = main_->buckets().size();
    d["metrics"] = breakdown_;
    d["breakdown_timing"] = breakdown_timing_;  // how the breakdown's parts were launched
    return d;
  }

 private:
  std::size_t allocated_bytes() const {
    return main_->allocated_bytes() + tiny_->allocated_bytes() + lt_->workspace_bytes();
  }

  // Every collective the point will issue, once, before anything is measured: every bucket of
  // the step's model and of the verification's tiny model, in place on the gradients (zero
  // after set-up, so they stay zero). NCCL connects an algorithm on its first use (lazily,
  // since 2.22): what it allocates here is reported apart as library_lazy_bytes, instead of
  // landing in the first point's peak when the verification's small all-reduces connect
  // another algorithm. The point's own buffers are all allocated already: nothing is
  // allocated or freed while a peer may wait inside a collective.
  void warm_collectives() {
    main_->enqueue_allreduce_all(env_.stream);
    tiny_->enqueue_allreduce_all(env_.stream);
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }

  GradCheck check_gradients() {
    GradCheck check;
    check.tolerance = train::gradient_tolerance(cfg_.precision);
    // What the step's GEMMs will read, before the step changes the weights.
    const std::vector<double> params = tiny_->read_params();
    const std::vector<double> x = tiny_->read_x();
    const std::vector<double> t = tiny_->read_t();
    std::vector<double> ref = train::reference_gradients(tiny_->layout(), kTinyBatch, params, x,
                                                         t, kReferenceActivation);
    // Every micro-step sees the same micro-batch: accum times the gradient.
    for (double& g : ref) g *= cfg_.accum;

    tiny_->enqueue_step(/*with_allreduce=*/true);
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    const std::vector<double> got = tiny_->read_grads();

    sum_reference(ref);
    check.error = train::gradient_error(got, ref);
    return check;
  }

  // The reference of the all-reduced gradients: the sum of every rank's FP64 reference, in
  // rank order on the host (every rank sums the same values in the same order): a path
  // independent of both all-reduce implementations, with no device buffer to allocate while a
  // peer may wait in a collective, and no NCCL at all for impl=mgbench.
  void sum_reference(std::vector<double>& ref) const {
    if (env_.nranks == 1) return;
    const std::vector<Json> all = env_.all_gather_json(Json(ref));
    std::fill(ref.begin(), ref.end(), 0.0);
    for (const Json& rank : all) {
      const auto values = rank.get<std::vector<double>>();
      if (values.size() != ref.size()) {
        throw EnvironmentError("train_step: the ranks' reference gradients differ in size");
      }
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] += values[i];
    }
  }

  void measure_breakdown() {
    // Up to min_samples (3..10) per measurement, fewer for long steps: the five measurements
    // stay near kBreakdownBudgetS. The probe's time is the slowest rank's, identical on every
    // rank, so every rank picks the same count.
    // Timed as the step's samples are (env_.timing: host-launched), never behind a closed
    // start gate: a step holds a collective per bucket (one per layer with bucket_mb=0) and
    // dozens of kernels per layer, more than a closed gate lets NCCL and CUDA queue.
    const TimingMethod method = env_.timing;
    const auto time = [this, method](const std::function<void()>& enqueue, int n) {
      return env_.collective_time(enqueue, n, method);
    };
    const auto step = [this] { main_->enqueue_step(true); };
    const double probe = time(step, 1);
    const int most = static_cast<int>(
        std::clamp<std::size_t>(env_.settings->stopping.min_samples, 3, 10));
    const int samples = std::clamp(
        static_cast<int>(kBreakdownBudgetS / (5.0 * std::max(probe, 1e-6))), 3, most);
    train::Breakdown m;
    m.step_s = time(step, samples);
    m.compute_only_s = time([this] { main_->enqueue_step(false); }, samples);
    if (cfg_.h2d) m.h2d_s = time([this] { main_->enqueue_h2d_step(); }, samples);
    m.optimizer_s = time([this] { main_->enqueue_optimizer(); }, samples);
    m.comm_s = time([this] { main_->enqueue_allreduce_all(env_.stream); }, samples);
    m = train::derive_breakdown(m);
    breakdown_ = Json{{"breakdown_step_s", m.step_s},
                      {"compute_only_s", m.compute_only_s},
                      {"comm_s", m.comm_s},
                      {"exposed_comm_s", m.exposed_comm_s},
                      {"overlap_ratio", m.overlap_ratio},
                      {"h2d_s", m.h2d_s},
                      {"optimizer_s", m.optimizer_s},
                      {"breakdown_samples", samples}};
    breakdown_timing_ = to_string(method);
  }

  RankEnv& env_;
  ModelConfig cfg_;
  StepMemory memory_;
  std::size_t staging_bytes_ = 0;
  std::unique_ptr<LtContext> lt_;
  std::unique_ptr<MlpReplica> main_;
  std::unique_ptr<MlpReplica> tiny_;
  std::unique_ptr<GradReducer> reducer_;  // destroyed first: the replicas only point to it
  Json breakdown_ = Json::object();
  std::string breakdown_timing_;
};

Json train_metrics(const Params& p, int nranks, double seconds) {
  const auto batch = static_cast<double>(p.integer("batch"));
  const auto accum = static_cast<double>(p.integer("accum"));
  const double per_gpu = batch * accum;
  const double flops = train::step_flops(static_cast<int>(p.integer("layers")),
                                         static_cast<std::size_t>(p.integer("hidden")),
                                         static_cast<std::size_t>(p.integer("batch")),
                                         static_cast<int>(p.integer("accum")));
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    // No usable step time, no rate: NaN makes reject_non_finite fail the point with the reason.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return Json{{"samples_per_s", nan}, {"global_batch", per_gpu * nranks},
                {"step_time_s", seconds}};
  }
  return Json{{"samples_per_s", per_gpu * nranks / seconds},
              {"samples_per_s_per_gpu", per_gpu / seconds},
              {"global_batch", per_gpu * nranks},
              {"step_time_s", seconds},
              {"model_tflops_per_gpu", flops / seconds / 1e12}};
}

// Communicators only for impl=nccl points: the FP64 gradient reference is summed on the host,
// and the own all-reduce (impl=mgbench) enables the peer access it needs itself, so a group
// where that fails waives those points only.
// Timed host-side, always (no timing axis: the executor records timing=host with every point):
// a step is dozens of kernels, copies and collectives the host launches, so the launch cost
// belongs to the step as in a real training loop; the samples last 20 ms or more, so the
// meeting of the ranks on the host at the start of each is negligible. Cache hot, always
// (recorded as cache=hot): the weights, gradients and batch buffers are reused every step, as
// in a real job; no rotation. Without axes, --param timing=... leaves train_step as it is.
GroupRunner train_runner() {
  return [](GroupContext& ctx) {
    RunnerOptions o;
    for (const auto& point : ctx.spec.points) {
      o.needs_nccl = o.needs_nccl || impl_of(point.params) == Impl::nccl;
    }
    o.default_timing = TimingMethod::host;
    o.default_cache = CacheMode::hot;
    GroupRunner run = make_runner(
        [](RankEnv& env) -> std::unique_ptr<RankPoint> {
          return std::make_unique<TrainStepPoint>(env);
        },
        train_metrics, o);
    run(ctx);
  };
}

}  // namespace


MGBENCH_REGISTER_WORKLOAD(
    Workload("train_step")
        .category(WorkloadCategory::training)
        .summary("Data-parallel MLP training step: forward, backward, bucketed gradient "
                 "all-reduce overlapped with backward, SGD-momentum update")
        .formulas("samples/s = batch * accum * GPUs / step time (slowest rank, median); "
                  "model TFLOP/s per GPU = (6L-2) H^2 batch accum / step time; "
                  "exposed_comm_s = max(0, step - compute_only); "
                  "overlap_ratio = clamp((comm - exposed_comm) / comm, 0, 1)")
        .requirements("impl=mgbench needs peer access between every pair of GPUs of the group")
        .notes({"Timed host-side on a hot cache, always (recorded as timing=host, cache=hot): "
                "a step is launched by the host and reuses its weights, as in a training loop"})
        .axis(Axis::integer("layers", {"8"}).at_most(1024).describe("MLP layers"))
        .axis(Axis::integer("hidden", {"4096"}).at_most(65536).describe("layer width H"))
        .axis(Axis::integer("batch", {"4096"})
                  .at_most(std::int64_t{1} << 24)
                  .quick({"1024"})
                  .full({"1024", "4096", "8192"})
                  .describe("per-GPU batch (samples per micro-step)"))
        .axis(Axis::text("dtype", {"fp32", "tf32", "bf16", "fp16"})
                  .quick({"bf16"})
                  .allowed({"fp32", "tf32", "bf16", "fp16"})
                  .describe("compute precision (16-bit: fp32 master weights and gradients)"))
        .axis(Axis::integer("accum", {"1"}).full({"1", "4"}).at_most(1024).describe(
            "gradient-accumulation micro-steps per optimizer step"))
        .axis(Axis::boolean("overlap", {"true"})
                  .full({"true", "false"})
                  .describe("launch each bucket's all-reduce during the backward pass"))
        .axis(Axis::boolean("h2d", {"true"})
                  .full({"true", "false"})
                  .describe("copy each micro-batch from pinned host memory"))
        .axis(Axis::text("impl", {"nccl"})
                  .full({"nccl", "mgbench"})
                  .allowed({"nccl", "mgbench"})
                  .describe("gradient all-reduce implementation"))
        .axis(Axis::integer("bucket_mb", {"25"}).describe(
            "gradient bucket size in MiB (0: one bucket per layer)"))
        .throughput("samples_per_s", "samples/s")
        .cost(mgbench::bench::train_step_cost)
        .present(training_presentation(
            {"samples", "per-GPU batch size (batch)", "batch size",
             ColumnSpec::metric("samples_per_s_per_gpu", "samples/s/GPU")
                 .or_per_gpu("samples_per_s"),
             true}))
        .estimate_seconds_per_point(10.0)
        .sustained(1.0, 0.02)  // power-bound: see Workload::sustained
        .runner(train_runner()));

}  // namespace mgbench::bench
