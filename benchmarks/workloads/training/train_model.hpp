#pragma once
// The model replica of one rank of the training step (train_step.cpp): its configuration,
// the RAII pieces it holds (pinned host memory, events, cuBLASLt matmuls) and MlpReplica,
// which owns the parameters, activations and batch of one MLP and enqueues its training
// step (forward, backward with bucketed gradient all-reduce, SGD with momentum).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "training/lt_gemm.hpp"
#include "training/train_math.hpp"
#include "training/train_reducer.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench::train {

using bench::Event;
using bench::GemmShape;
using bench::LtContext;
using bench::LtGemm;
using bench::stream_wait;

struct ModelConfig {
  int layers = 8;
  std::size_t hidden = 4096;
  std::size_t batch = 4096;  // per GPU, per micro-step
  int accum = 1;
  DType precision = DType::bf16;
  bool overlap = true;
  bool h2d = true;
  std::size_t bucket_bytes = 25ull << 20;
  int test_extra_reductions = 0;  // test hook only: the first bucket is reduced this often more
};

// The point's parameters (layers, hidden, batch, accum, dtype, overlap, h2d, bucket_mb);
// throws UsageError for values out of range.
ModelConfig config_from_params(const Params& p);

inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Page-locked host memory (the batch source for h2d).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      o.ptr_ = nullptr;
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
};

// The model replica of one rank: parameters (fp32 master, momentum, gradients, 16-bit copy),
// activations and the batch, all allocated and initialised by the constructor.
class MlpReplica {
 public:
  MlpReplica(const RankEnv& env, const ModelConfig& cfg, const LtContext& lt,
             std::uint64_t data_seed);

  void set_reducer(GradReducer* reducer) { reducer_ = reducer; }

  // One training step on env.stream (enqueue only).
  void enqueue_step(bool with_allreduce);
  // One step's batch copies (accum micro-batches of x and t).
  void enqueue_h2d_step();
  // Every bucket, one after another, on `stream`.
  void enqueue_allreduce_all(cudaStream_t stream);
  void enqueue_optimizer();

  struct Hash {
    std::uint64_t value = 0;
    std::uint64_t nonfinite = 0;
  };
  // Synchronous: hash of the fp32 master weights.
  Hash master_hash();

  // Host copies (as doubles) of what the GEMMs read and of the gradients, ordered after
  // everything enqueued on the timed stream (synchronous).
  std::vector<double> read_params() const { return read(weights(), dtype_, layout_.total); }
  std::vector<double> read_x() const { return read(x_.get(), dtype_, cfg_.batch * cfg_.hidden); }
  std::vector<double> read_t() const { return read(t_.get(), dtype_, cfg_.batch * cfg_.hidden); }
  std::vector<double> read_grads() const {
    return read(grads_.get(), kernels::DType::fp32, layout_.total);
  }

  const ParamLayout& layout() const { return layout_; }
  const std::vector<Bucket>& buckets() const { return buckets_; }
  std::size_t allocated_bytes() const { return allocated_; }

 private:
  DeviceBuffer alloc(std::size_t bytes);

  // The weights the GEMMs and bias kernels read: the 16-bit copy, or the fp32 master.
  const void* weights() const { return copy_.get() != nullptr ? copy_.get() : master_.get(); }
  const char* weight_bytes(std::size_t element_offset) const {
    return static_cast<const char*>(weights()) + element_offset * elem_;
  }
  char* slab(const DeviceBuffer& buf, std::size_t index) const {
    return static_cast<char*>(buf.get()) + index * slab_ * elem_;
  }

  void plan_gemms(const LtContext& lt);
  void initialise(std::uint64_t data_seed);
  void enqueue_h2d();
  void forward();
  // Loss gradient and backward pass of one micro-step. `accumulate`: add to the gradients of
  // the earlier micro-steps. `launch_buckets`: start each bucket's all-reduce on the comm
  // stream as soon as its lowest layer's gradients are done.
  void backward(bool accumulate, bool launch_buckets);
  void reduce_bucket(const Bucket& b, cudaStream_t stream);
  std::vector<double> read(const void* device, kernels::DType dtype, std::size_t count) const {
    return read_doubles(device, dtype, count, env_.stream);
  }

  const RankEnv& env_;
  ModelConfig cfg_;
  kernels::DType dtype_;
  ParamLayout layout_;
  std::vector<Bucket> buckets_;
  std::size_t slab_;  // elements per activation slab
  std::size_t elem_;  // bytes per stored element
  std::size_t allocated_ = 0;
  DeviceBuffer z_, a_, master_, velocity_, grads_, copy_, x_, t_, d0_, d1_, bias_ws_, hash_;
  PinnedBuffer host_x_, host_t_;
  std::vector<Event> bucket_ready_;
  Event backward_done_, comm_done_;
  std::unique_ptr<LtGemm> fwd_, dgrad_, wgrad_;
  GradReducer* reducer_ = nullptr;
};

}  // namespace mgbench::bench::train
