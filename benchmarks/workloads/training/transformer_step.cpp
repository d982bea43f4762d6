// transformer_step: one training step of a decoder-layer stack shaped like a real language model
// (Llama 3 presets or explicit dimensions), data-parallel (ddp), sharded (fsdp, ZeRO-3),
// tensor-parallel (tp) or both (tp_dp), per op, on every GPU of the group.
//
// The model, its tokens and the sharding arithmetic are in transformer_math.hpp; the replica and
// the order of its kernels and collectives in transformer_model.hpp; the GEMMs (cuBLASLt, and
// GEMM-based causal attention, and why) in src/transformer_gemms.hpp. No embedding and no LM head
// (the vocab is left out); synthetic tokens (a random input and target per data-parallel group);
// AdamW on fp32 master weights with a 16-bit copy (bf16 or fp16) that the GEMMs read.
//
// Strategies (N GPUs, t the tensor-parallel degree):
//   ddp    every GPU a whole replica; the fp32 gradients all-reduced per layer, overlapped with
//          the rest of the backward pass (overlap=true) or after it;
//   fsdp   ZeRO-3: every GPU 1/N of each layer's parameters, gradients and optimizer state; each
//          layer's 16-bit parameters all-gathered before its forward and again before its
//          backward (the next layer's gather prefetched on the comm stream while this one
//          computes), its fp32 gradients reduce-scattered after its backward;
//   tp     Megatron-style tensor parallelism over all N GPUs of one node (t = N must divide the
//          heads, kv heads and MLP size): two all-reduces of activations per layer forward and
//          two of their gradients backward, on the critical path;
//   tp_dp  tensor-parallel groups of tp_size consecutive GPUs, data-parallel across them (the DP
//          gradient all-reduce as ddp, of each rank's slice).
// On one GPU ddp and fsdp run their collectives on a one-rank communicator (NCCL copies or does
// nothing): the step is the model alone, plus what a one-rank FSDP allocates (gathered layers).
//
// Formulas (t = the slowest rank's median seconds per step, N = GPUs, S = seq):
//   tokens/s = batch * S * accum * N / t;
//   model FLOPs per token = 6 P + 12 L heads*head_dim S (P = the L layers' parameters: PaLM's
//   count; the attention term counts the full score matrices, as computed);
//   model TFLOP/s per GPU = (model FLOPs per token) * batch * S * accum / t / 1e12;
//   MFU = model TFLOP/s per GPU / the GPU's dense peak of the dtype (reports: its % of peak).
// Breakdown (timed after the samples, host-launched like them; slowest rank, median):
//   step_s, compute_only_s (the same step without any collective), comm_s (every collective of
//   a step alone, back to back), optimizer_s; exposed_comm_s = max(0, step - compute_only);
//   overlap_ratio = clamp((comm - exposed_comm) / comm, 0, 1); fsdp and tp_dp also time the
//   step without each of their two kinds (exposed_<kind>_s = max(0, step - step without it)).
// Peak memory per rank as train_step measures it (step_memory.hpp), with the estimate of
// transformer_math.hpp beside it.
// Verification (every point; src/transformer_verify.hpp): replicas and shards agree, the bytes
// handed to NCCL equal the formula, and one step of a tiny model matches an FP64 reference.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "mgbench/bench/executor.hpp"
#include "training/lt_gemm.hpp"
#include "training/step_memory.hpp"
#include "training/training_presentation.hpp"
#include "training/transformer_comm.hpp"
#include "training/transformer_model.hpp"
#include "training/transformer_points.hpp"
#include "work_costs.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"
#include "training/transformer_verify.hpp"

namespace mgbench::bench::transformer {

namespace {

constexpr std::size_t kGemmWorkspaceBytes = 32ull << 20;
constexpr double kBreakdownBudgetS = 2.0;  // device time for the breakdown timings per point
constexpr std::uint64_t kDataSeed = 0x746f6b656e000000ULL;  // mixed with the data-parallel rank

// What the strategy's communication is, for the verdicts ("Exposed communication (...)").
const char* communication_of(Strategy s) {
  switch (s) {
    case Strategy::ddp: return "the data-parallel gradient all-reduce";
    case Strategy::fsdp: return "the FSDP parameter all-gathers and gradient reduce-scatters";
    case Strategy::tp: return "the tensor-parallel all-reduces, on the critical path";
    case Strategy::tp_dp:
      return "the tensor-parallel all-reduces (critical path) and the data-parallel gradient "
             "all-reduce";
  }
  return "";
}

class TransformerPoint final : public RankPoint {
 public:
  explicit TransformerPoint(RankEnv& env)
      : env_(env), cfg_(config_from_params(*env.params, env.nranks)), memory_(env.device) {
    // Allocation may fail on some ranks only (OOM): every rank meets the others exactly once
    // below, failed or not, before any collective of the step.
    std::exception_ptr error;
    try {
      comms_ = std::make_unique<StepComms>(env, cfg_);  // collective (tp_dp splits)
      const std::uint64_t seed = kDataSeed + static_cast<std::uint64_t>(comms_->dp_rank());
      lt_ = std::make_unique<LtContext>(kGemmWorkspaceBytes);
      main_ = std::make_unique<Replica>(env, cfg_, *lt_, *comms_, seed);
      tiny_ = std::make_unique<Replica>(env, tiny_config(cfg_), *lt_, *comms_, seed + 0x51);
    } catch (...) {
      error = std::current_exception();
    }
    meet_after_setup(env, error);
    // Every collective the point issues, once, before anything is measured (NCCL connects its
    // algorithms lazily); what it allocates is reported apart as library_lazy_bytes.
    memory_.warm([this] {
      main_->enqueue_comm_only();
      tiny_->enqueue_comm_only();
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    });
  }

  void enqueue() override {
    memory_.first_ops();
    main_->enqueue_step();
  }

  Verification verify() override {
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.comm_stream));
    memory_.note();
    Verification v;
    const CommVolume counted = comms_->counted();  // of the last measured step
    const auto fold = [&v](const CheckResult& r) {
      if (!r.ok && v.ok) {
        v.ok = false;
        v.message = r.message;
      }
    };
    fold(check_comm_volume(counted, cfg_, v));
    fold(alone(env_, [&] { return check_agreement(env_, *main_, v); }));
    fold(alone(env_, [&] { return check_gradients(env_, *tiny_, v); }));
    measure_breakdown();  // changes the weights: after the checks
    memory_.note();
    return v;
  }

  Json rank_details() override {
    Json d;
    d["peak_bytes"] = memory_.peak_bytes(allocated_bytes());
    d["library_lazy_bytes"] = memory_.lazy_bytes();
    d["allocated_bytes"] = allocated_bytes();
    d["estimate_bytes"] = estimate_memory(cfg_).total() + kGemmWorkspaceBytes +
                          estimate_memory(tiny_config(cfg_)).total();
    d["tp_rank"] = comms_->tp_rank();
    d["dp_rank"] = comms_->dp_rank();
    d["metrics"] = breakdown_;
    d["breakdown_timing"] = breakdown_timing_;
    d["communication"] = communication_;
    return d;
  }

 private:
  std::size_t allocated_bytes() const {
    return main_->allocated_bytes() + tiny_->allocated_bytes() + lt_->workspace_bytes();
  }

  void measure_breakdown();

  RankEnv& env_;
  StepConfig cfg_;
  StepMemory memory_;
  std::unique_ptr<StepComms> comms_;
  std::unique_ptr<LtContext> lt_;
  std::unique_ptr<Replica> main_, tiny_;
  Json breakdown_ = Json::object();
  Json communication_ = Json::object();
  std::string breakdown_timing_;
};

// Timed as the samples are (host-launched after the ranks meet, never behind a closed gate: a
// step holds dozens of collectives). Up to min_samples (3..10) per timing, fewer for long
// steps; the probe's time is the slowest rank's, so every rank picks the same count.
void TransformerPoint::measure_breakdown() {
  const TimingMethod method = env_.timing;
  const auto time = [this, method](const std::function<void()>& enqueue, int n) {
    return env_.collective_time(enqueue, n, method);
  };
  const auto step_with = [this](CommSet c) { return [this, c] { main_->enqueue_step(c); }; };
  const bool two_kinds = cfg_.strategy == Strategy::fsdp || cfg_.strategy == Strategy::tp_dp;
  const int timings = two_kinds ? 6 : 4;
  const double probe = time(step_with(CommSet{}), 1);
  const int most = static_cast<int>(
      std::clamp<std::size_t>(env_.settings->stopping.min_samples, 3, 10));
  const int n = std::clamp(
      static_cast<int>(kBreakdownBudgetS / (timings * std::max(probe, 1e-6))), 3, most);
  const double step = time(step_with(CommSet{}), n);
  const double compute = time(step_with(CommSet::none()), n);
  const double optimizer = time([this] { main_->enqueue_optimizer(); }, n);
  Json parts = Json::array();
  if (two_kinds) {
    const bool fsdp = cfg_.strategy == Strategy::fsdp;
    CommSet first{}, second{};
    (fsdp ? first.gather : first.tp) = false;
    second.grads = false;
    const double without_first = time(step_with(first), n);
    const double without_second = time(step_with(second), n);
    parts.push_back({{"label", fsdp ? "parameter all-gathers" : "tensor-parallel all-reduces"},
                     {"exposed_s", std::max(0.0, step - without_first)}});
    parts.push_back({{"label", fsdp ? "gradient reduce-scatters" : "gradient all-reduce"},
                     {"exposed_s", std::max(0.0, step - without_second)}});
  }
  // Last: the gradient all-reduces of the collectives alone sum the gradients in place.
  const double comm = time([this] { main_->enqueue_comm_only(); }, n);
  const double exposed = std::max(0.0, step - compute);
  const double overlap = comm > 0 ? std::clamp((comm - exposed) / comm, 0.0, 1.0) : 0.0;
  breakdown_ = Json{{"breakdown_step_s", step},   {"compute_only_s", compute},
                    {"comm_s", comm},             {"exposed_comm_s", exposed},
                    {"overlap_ratio", overlap},   {"optimizer_s", optimizer},
                    {"breakdown_samples", n}};
  communication_ = Json{{"what", communication_of(cfg_.strategy)}, {"parts", parts}};
  breakdown_timing_ = to_string(method);
}

// Timed host-side on a hot cache, always, as train_step (a step is launched by the host and
// reuses its weights); communicators for every point (one-rank ones on one GPU).
GroupRunner transformer_runner() {
  RunnerOptions o;
  o.needs_nccl = true;
  o.default_timing = TimingMethod::host;
  o.default_cache = CacheMode::hot;
  // Model FLOPs above the dtype's dense peak cannot come from the hardware: flagged.
  o.limits = {LimitCheck{"model_tflops_per_gpu", LimitKind::tflops}};
  return make_runner(
      [](RankEnv& env) -> std::unique_ptr<RankPoint> {
        return std::make_unique<TransformerPoint>(env);
      },
      metrics, o);
}

// One line per preset for `mgbench list`.
std::vector<std::string> preset_notes() {
  std::vector<std::string> notes;
  const char* sources[] = {"Llama 3.2 1B", "Llama 3.1 8B", "Llama 3.1 70B"};
  std::size_t i = 0;
  for (const ModelShape& p : presets()) {
    notes.push_back("model=" + p.name + " (" + sources[i++] + "): hidden " +
                    std::to_string(p.hidden) + ", " + std::to_string(p.heads) + " heads, " +
                    std::to_string(p.kv_heads) + " kv heads, head dim " +
                    std::to_string(p.head_dim) + ", MLP " + std::to_string(p.mlp) + "; " +
                    std::to_string(p.published_layers) + " layers published (layers is an "
                    "axis); vocab " + std::to_string(p.vocab) + " left out (no embedding, no "
                    "LM head)");
  }
  notes.push_back("model=custom: --param hidden=... heads=... [kv_heads=...] mlp=... (head dim "
                  "= hidden / heads, kv_heads defaults to heads)");
  notes.push_back("strategy=ddp|fsdp run on any GPU count (on one GPU: one-rank collectives); "
                  "tp on 2 or more GPUs of one node that divide heads, kv heads and MLP; tp_dp on "
                  "multiples of 2 x tp_size GPUs; points that cannot run on a GPU count are "
                  "left out of its group with a note");
  notes.push_back("attention: GEMM-based (cuBLASLt strided-batched q k^T and P v, causal "
                  "softmax kernel; the score matrices are kept for the backward pass): no "
                  "FlashAttention or cuDNN dependency");
  return notes;
}

}  // namespace

}  // namespace mgbench::bench::transformer

namespace {
using namespace mgbench;
using namespace mgbench::bench::transformer;

MGBENCH_REGISTER_WORKLOAD(
    Workload("transformer_step")
        .category(WorkloadCategory::training)
        .summary("Training step of a Llama-shaped decoder-layer stack (1B/8B/70B presets or "
                 "explicit dimensions): ddp, fsdp (ZeRO-3), tensor-parallel or tp x dp, AdamW; "
                 "tokens/s and MFU")
        .formulas("tokens/s = batch * seq * accum * GPUs / step time; model FLOPs per token = "
                  "6 P + 12 L heads*head_dim seq (P: the layers' parameters, no embedding); "
                  "model TFLOP/s per GPU = FLOPs per token * batch * seq * accum / step time; "
                  "MFU = that / the dtype's dense peak (% of peak); exposed_comm_s = max(0, "
                  "step - compute_only); bytes per step: ddp 4 P_layer L, fsdp accum (2 L e + "
                  "4 L) P_layer, tp accum 4 L e tokens hidden")
        .requirements("tp: 2 or more GPUs of one node dividing heads, kv heads and MLP size; "
                      "tp_dp: tp_size dividing them and the node, at least two replicas")
        .notes(preset_notes())
        .axis(Axis::text("model", {"llama3-8b"})
                  .quick({"llama3-1b"})
                  .full({"llama3-1b", "llama3-8b", "llama3-70b"})
                  .allowed({"llama3-1b", "llama3-8b", "llama3-70b", "custom"})
                  .describe("preset (published dimensions) or custom (hidden, heads, mlp)"))
        .axis(Axis::integer("hidden", {}).at_most(65536).describe("model=custom: hidden size"))
        .axis(Axis::integer("heads", {}).at_most(1024).describe("model=custom: attention heads"))
        .axis(Axis::integer("kv_heads", {})
                  .at_most(1024)
                  .describe("model=custom: key/value heads (default: heads)"))
        .axis(Axis::integer("mlp", {}).at_most(262144).describe("model=custom: MLP size"))
        .axis(Axis::integer("layers", {"4"}).quick({"2"}).at_most(1024).describe(
            "decoder layers"))
        .axis(Axis::integer("seq", {"4096"}).quick({"2048"}).at_most(131072).describe(
            "tokens per sequence"))
        .axis(Axis::integer("batch", {"2"})
                  .quick({"1"})
                  .full({"1", "2", "4"})
                  .at_most(4096)
                  .describe("sequences per GPU per micro-step"))
        .axis(Axis::integer("accum", {"1"}).full({"1", "4"}).at_most(1024).describe(
            "gradient-accumulation micro-steps per optimizer step"))
        .axis(Axis::text("dtype", {"bf16"})
                  .allowed({"bf16", "fp16"})
                  .describe("16-bit activations and weights, fp32 master weights and gradients"))
        .axis(Axis::text("strategy", {"ddp", "fsdp", "tp", "tp_dp"})
                  .allowed({"ddp", "fsdp", "tp", "tp_dp"})
                  .describe("data-parallel, ZeRO-3, tensor-parallel, tensor x data parallel"))
        .axis(Axis::integer("tp_size", {"2"}).at_most(64).describe(
            "tp_dp: GPUs per tensor-parallel group"))
        .axis(Axis::boolean("overlap", {"true"})
                  .full({"true", "false"})
                  .describe("data-parallel collectives overlapped with compute (not tp)"))
        .expand(expand_points)
        .fits(placement_problem)
        .throughput("tokens_per_s", "tokens/s")
        .cost(mgbench::bench::transformer_step_cost)
        .present(bench::training_presentation(
            {"tokens", "per-GPU micro-batch (sequences)", "micro-batch",
             ColumnSpec::metric("model_tflops_per_gpu", "model TFLOP/s/GPU"), false}))
        .estimate_seconds_per_point(15.0)
        .sustained(1.0, 0.02)  // power-bound: see Workload::sustained
        .runner(transformer_runner()));
}  // namespace
