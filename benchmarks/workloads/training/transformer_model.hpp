#pragma once
// One rank's replica (or shard, or tensor-parallel slice) of the transformer step's layer stack
// (transformer_step.cpp; the model is in transformer_math.hpp): its parameters, Adam state,
// activations and backward scratch, all allocated and initialised by the constructor, and the
// step it enqueues: forward, backward and AdamW, with the strategy's collectives.
//
// Per rank and micro-step, on the timed stream (T = local tokens):
//   forward, per layer: [fsdp: wait for the layer's all-gather, prefetched on the comm stream
//   while the previous layer computes]; RMSNorm; QKV GEMM; attention (src/transformer_gemms.hpp);
//   output GEMM adding the residual; [tp: all-reduce]; RMSNorm; gate/up GEMM; SwiGLU; down GEMM
//   adding the residual; [tp: all-reduce];
//   loss gradient y - t;
//   backward, last layer first: each GEMM's weight gradient (fp32, accumulated over micro-steps)
//   and input gradient, [tp: all-reduce of the norm-input gradients], RMSNorm backward with the
//   residual gradient and the norm-weight gradient; then the layer's gradients go out on the
//   comm stream: ddp/tp_dp on the last micro-step, an all-reduce per layer (overlap=true: as soon
//   as the layer is done; false: all after the backward pass); fsdp every micro-step, a
//   reduce-scatter per layer into the rank's gradient shard (accumulated over micro-steps);
//   the comm stream joins the timed stream, then AdamW on the rank's fp32 master weights
//   refreshes its 16-bit copy.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "training/lt_gemm.hpp"
#include "training/transformer_comm.hpp"
#include "training/transformer_math.hpp"

namespace mgbench::bench::transformer {

// Which collectives a step issues (the breakdown times steps without some of them).
struct CommSet {
  bool tp = true;      // tensor-parallel all-reduces of activations and their gradients
  bool gather = true;  // fsdp: the parameter all-gathers
  bool grads = true;   // the data-parallel gradient all-reduce or reduce-scatter
  static CommSet none() { return {false, false, false}; }
};

class AttentionGemms;
class LayerGemms;

class Replica {
 public:
  Replica(const RankEnv& env, const StepConfig& cfg, const LtContext& lt, StepComms& comms,
          std::uint64_t data_seed);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // One optimizer step on env.stream (enqueue only).
  void enqueue_step(CommSet comms = CommSet{});
  // Every collective of one step, one after another on env.stream.
  void enqueue_comm_only();
  void enqueue_optimizer();

  struct Hash {
    std::uint64_t value = 0;
    std::uint64_t nonfinite = 0;
  };
  // Synchronous: the hash of the rank's fp32 master weights; of its replicated norm weights
  // (equal on every rank of a tensor-parallel group); for fsdp, of the whole model's master
  // weights gathered from every rank (collective).
  Hash master_hash();
  Hash norm_hash();
  Hash gathered_hash();

  // Synchronous host copies (as doubles) of the rank's 16-bit weights (what the GEMMs read), its
  // fp32 gradients (after the last step's collectives), its input and its target.
  std::vector<double> read_weights() const;
  std::vector<double> read_grads() const;
  std::vector<double> read_x() const;
  std::vector<double> read_t() const;

  const StepConfig& config() const { return cfg_; }
  const LayerLayout& layout() const { return layout_; }
  std::size_t allocated_bytes() const { return allocated_; }

 private:
  struct Layer;  // pointers of one layer's activations
  DeviceBuffer alloc(std::size_t bytes);
  void allocate();
  void initialise(std::uint64_t data_seed);
  Layer layer(int l) const;
  char* weights(int l) const;  // the 16-bit weights layer l computes with
  float* grad_target(int l) const;
  const char* seg(const char* base, Segment s) const;
  float* seg(float* base, Segment s) const;

  void forward(CommSet c);
  void forward_layer(int l, CommSet c);
  void backward(CommSet c, int micro);
  void backward_layer(int l, CommSet c, bool accumulate);
  void norm_backward(const char* x, const char* g, const float* rstd, const char* resid,
                     char* dx, float* dg, bool accumulate);
  void send_gradients(int l, CommSet c, int micro);
  void join_comm();
  // fsdp: start layer l's all-gather on the comm stream; wait for it on the timed stream; mark
  // the timed stream done with its buffer.
  void prefetch(int l, CommSet c);
  void use_gathered(int l, CommSet c);
  void release_gathered(int l);
  void gather_now(int l, cudaStream_t stream);

  const RankEnv& env_;
  StepConfig cfg_;
  LocalDims dims_;
  LayerLayout layout_;
  BufferSizes sizes_;
  StepComms& comms_;
  DType dtype_;
  std::size_t elem_;
  std::size_t allocated_ = 0;
  int step_ = 0;
  bool comm_pending_ = false;  // something was enqueued on the comm stream this step
  DeviceBuffer master_, adam_m_, adam_v_, grads_, copy_;
  DeviceBuffer gathered_[2], full_grads_[2], stage_;  // fsdp
  DeviceBuffer xs_, t_, n1_, h1_, n2_, qkv_, ao_, gu_, act_, probs_, rstd_;
  DeviceBuffer d_a_, d_b_, dn_, dao_, dqkv_, dgu_, dact_, dscores_, gprod_, norm_ws_, hash_;
  Event slot_ready_[2], slot_free_[2], grads_done_[2], ready_, joined_;
  std::unique_ptr<LayerGemms> gemms_;
  std::unique_ptr<AttentionGemms> attention_;
};

}  // namespace mgbench::bench::transformer
