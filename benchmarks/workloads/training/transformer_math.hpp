#pragma once
// Host-side arithmetic of the transformer training step (training/transformer_step.cpp) that
// needs no GPU: the model presets, a point's configuration and where it can run, the per-rank
// dimensions under tensor parallelism, the flat parameter layout of a layer and its FSDP shards,
// the model FLOPs (MFU), the bytes each strategy communicates per step, the memory per GPU and
// the gradient tolerance of the FP64 check.
//
// The model: L pre-norm decoder layers of the Llama family (no embedding, no LM head: the vocab
// is left out; the step's loss is 0.5 * sum (y - t)^2 of the last layer's output y against a
// random target t). Layer l, with x its input (tokens x hidden, row-major):
//   n1 = rmsnorm(x) * g1;  [q k v] = n1 Wqkv^T;  a = softmax(q k^T / sqrt(d), causal) v per head
//   (grouped-query: q head h reads kv head h / (heads / kv_heads));  h1 = x + a Wo^T;
//   n2 = rmsnorm(h1) * g2;  [g u] = n2 Wgu^T;  y = h1 + (silu(g) * u) Wdown^T.
// Weights are row-major (out x in). No biases, no rotary embedding (an element-wise rotation of
// q and k: it changes no GEMM shape and no byte communicated), no dropout.
//
// Tokens: `batch` sequences of `seq` tokens per GPU per micro-step for every strategy, so that the
// tokens per GPU are the same whatever the strategy (weak scaling keeps them, strong scaling
// divides the global batch). A tensor-parallel group of t GPUs therefore computes its layers for
// t * batch sequences (the tokens of its t GPUs), each GPU a 1/t slice of every layer.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench::transformer {

using kernels::DType;

// ---- presets and configuration ---------------------------------------------------------------

// One decoder layer's dimensions, as published (hidden, attention heads, key/value heads, head
// dimension, MLP intermediate size) with the published layer count and vocab (both recorded,
// neither used: the layer count is an axis and the vocab is left out).
struct ModelShape {
  std::string name;  // "llama3-8b", or "custom"
  std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, mlp = 0;
  std::int64_t published_layers = 0, vocab = 0;  // 0 for custom shapes
};
// llama3-1b (Llama 3.2 1B), llama3-8b (Llama 3.1 8B), llama3-70b (Llama 3.1 70B).
const std::vector<ModelShape>& presets();
const ModelShape* find_preset(const std::string& name);  // nullptr when unknown
// A custom shape: head_dim = hidden / heads. Throws UsageError when the numbers do not make a
// layer (heads not dividing hidden, kv_heads not dividing heads, a value below 1).
ModelShape custom_shape(std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t mlp);

enum class Strategy { ddp, fsdp, tp, tp_dp };
// Their names, "ddp", "fsdp", "tp", "tp_dp": the "strategy" axis (read with Params::choice) and
// to_string.
extern const std::initializer_list<std::pair<const char*, Strategy>> kStrategyNames;
const char* to_string(Strategy strategy);

struct StepConfig {
  ModelShape shape;
  int layers = 1;
  std::int64_t seq = 0;    // tokens per sequence
  std::int64_t batch = 0;  // sequences per GPU per micro-step
  int accum = 1;           // micro-steps per optimizer step
  DType precision = DType::bf16;  // 16-bit storage and GEMM inputs, fp32 master weights
  Strategy strategy = Strategy::ddp;
  bool overlap = true;  // data-parallel communication overlapped with compute
  int gpus = 1;         // ranks of the group
  int tp = 1;           // tensor-parallel degree (gpus for tp, tp_size for tp_dp, else 1)
  int dp() const { return gpus / tp; }
  // Sequences and tokens one rank's layers compute per micro-step (t * batch sequences).
  std::int64_t local_sequences() const { return batch * tp; }
  std::int64_t local_tokens() const { return batch * tp * seq; }
};

// The point's configuration on `gpus` ranks. Throws UsageError for values out of range and for a
// strategy that cannot run on that many GPUs (placement_problem's reason).
StepConfig config_from_params(const Params& params, int gpus);
// Why the point cannot run on `gpus` GPUs of nodes of `gpus_per_node` ("" when it can): tp needs
// 2..gpus_per_node GPUs that divide the heads, the kv heads and the MLP size; tp_dp a tp_size
// >= 2 that does so and divides the GPU count and the node, with at least two replicas.
std::string placement_problem(const Params& params, int gpus, int gpus_per_node);

// ---- per-rank dimensions and the flat layout ---------------------------------------------------

struct LocalDims {
  std::int64_t hidden = 0, q_heads = 0, kv_heads = 0, head_dim = 0, mlp = 0;
  std::int64_t group() const { return q_heads / kv_heads; }       // q heads per kv head
  std::int64_t qkv_width() const { return (q_heads + 2 * kv_heads) * head_dim; }
  std::int64_t attn_width() const { return q_heads * head_dim; }  // the attention output
};
// One tensor-parallel rank's slice: heads, kv heads and MLP divided by `tp`, hidden whole.
LocalDims local_dims(const ModelShape& shape, int tp);

// Segments of a layer's flat parameter array, in storage order.
enum class Segment { attn_norm, qkv, out, mlp_norm, gate_up, down };
inline constexpr int kSegments = 6;
const char* to_string(Segment segment);

struct SegmentSlot {
  Segment kind = Segment::attn_norm;
  std::size_t offset = 0;        // elements from the layer's start (a multiple of kAlign)
  std::size_t rows = 0, cols = 0;  // row-major out x in (a norm: 1 x hidden)
  std::size_t count() const { return rows * cols; }
  std::size_t fan_in() const { return cols; }
};

// Every segment starts at a multiple of kAlign elements (256 bytes of 16-bit values: cuBLASLt's
// preferred alignment); padding elements are zero and stay zero.
inline constexpr std::size_t kAlign = 128;

struct LayerLayout {
  SegmentSlot segments[kSegments];
  std::size_t total = 0;       // padded length, a multiple of `pad_multiple`
  std::size_t parameters = 0;  // without padding
  const SegmentSlot& at(Segment s) const { return segments[static_cast<int>(s)]; }
};
// The layout of one rank's layer; the total is padded to a multiple of pad_multiple (kAlign,
// or kAlign * ranks for FSDP, so that every shard is kAlign-aligned).
LayerLayout layer_layout(const LocalDims& dims, std::size_t pad_multiple = kAlign);
// The layout a strategy's rank holds per layer (FSDP: the padded whole layer it gathers).
LayerLayout layout_for(const StepConfig& cfg);

// A piece of one segment inside the element range [begin, end) of a layer (an FSDP shard):
// the layer offsets [begin, end) that belong to `segment`.
struct SegmentPiece {
  Segment segment = Segment::attn_norm;
  std::size_t begin = 0, end = 0;
};
std::vector<SegmentPiece> pieces_in(const LayerLayout& layout, std::size_t begin,
                                    std::size_t end);

// ---- FLOPs, communication, memory --------------------------------------------------------------

// Parameters of the L layers of the whole model (no embedding): L * (the layer's matrices and
// norm weights), tensor-parallel degree 1.
double model_parameters(const ModelShape& shape, int layers);
// Model FLOPs per token, PaLM's count: 6 N + 12 L (heads * head_dim) seq. The attention term
// counts q k^T and the weighted sum over the whole sequence (forward 4 seq heads*head_dim per
// token, backward twice that), as computed here: the causal mask is applied to full score
// matrices, so no FLOP is skipped.
double model_flops_per_token(const ModelShape& shape, int layers, std::int64_t seq);
// Per GPU and optimizer step: model_flops_per_token x batch x seq x accum.
double step_model_flops_per_gpu(const StepConfig& cfg);

// Bytes one rank hands to NCCL per optimizer step, per collective kind, as nccl-tests counts
// them (the all-reduce buffer, the all-gather output, the reduce-scatter input). With P the
// padded layer length of layout_for(cfg), e the 16-bit element size, T the local tokens:
//   ddp:   all_reduce_dp  = L * 4 P                      (fp32 gradients, once per step)
//   fsdp:  all_gather     = accum * 2 L * e P            (forward and backward, every layer)
//          reduce_scatter = accum * L * 4 P              (fp32 gradients, every micro-step)
//   tp:    all_reduce_tp  = accum * 4 L * e T hidden     (two in the forward, two in the backward)
//   tp_dp: all_reduce_tp as tp, all_reduce_dp = L * 4 P (the rank's slice)
struct CommVolume {
  double all_reduce_tp = 0, all_reduce_dp = 0, all_gather = 0, reduce_scatter = 0;
  double total() const { return all_reduce_tp + all_reduce_dp + all_gather + reduce_scatter; }
};
CommVolume comm_volume(const StepConfig& cfg);

// Device memory one rank allocates for the point (the replica: parameters, optimizer state,
// activations kept for the backward pass, backward scratch), excluding the GEMM workspace.
struct MemoryEstimate {
  std::size_t parameters = 0;   // fp32 master, Adam moments, fp32 gradients, 16-bit copy
  std::size_t gathered = 0;     // FSDP: two gathered layers and two full-layer gradients
  std::size_t activations = 0;  // kept per layer for the backward pass (scores included)
  std::size_t scratch = 0;      // backward-pass buffers reused by every layer
  std::size_t total() const { return parameters + gathered + activations + scratch; }
};
MemoryEstimate estimate_memory(const StepConfig& cfg);

// The elements one rank's buffers hold, shared by the replica's allocation and the estimate.
struct BufferSizes {
  std::size_t layer_params = 0;  // per layer, in the rank's arrays (FSDP: its shard)
  std::size_t probs = 0;         // attention probabilities kept per layer (sequences x heads x S^2)
  std::size_t score_scratch = 0; // one (sequence, q-head-in-group) batch of score gradients
  std::size_t per_layer_16 = 0;  // 16-bit activation elements kept per layer, scores excluded
  std::size_t per_layer_32 = 0;  // fp32 elements kept per layer (the norms' 1/rms)
  std::size_t scratch_16 = 0;    // 16-bit backward scratch (excluding score_scratch)
  std::size_t scratch_32 = 0;    // fp32 backward scratch (norm-weight products, their sums)
};
BufferSizes buffer_sizes(const StepConfig& cfg);

// ---- verification -------------------------------------------------------------------------------

// The tiny model of the gradient check for a point: 3 layers, hidden 64, 16 heads of 8 over 8 kv
// heads (attention width 128, grouped 2 to 1), MLP 128, 16 tokens per sequence, one sequence per
// GPU, the point's strategy, GPUs, tensor-parallel degree, precision, accum and overlap. A
// tensor-parallel degree that does not divide 8 (3, 5, 6, 7) gets that many kv heads instead,
// twice as many heads and an MLP of 16 per kv head, so that it divides them all.
StepConfig tiny_config(const StepConfig& point);
// Normwise relative tolerance of every parameter tensor's gradient against the FP64 reference
// (see the derivation in transformer_math.cpp). Throws UsageError for other precisions.
double gradient_tolerance(DType precision);

}  // namespace mgbench::bench::transformer
