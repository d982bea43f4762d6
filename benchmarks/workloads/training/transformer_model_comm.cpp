// The replica's collectives (when each layer's parameters are gathered and its gradients sent),
// the collectives of a step timed alone, and the verification's hashes and host reads (see
// transformer_model.hpp).
#include <utility>

#include "training/transformer_model.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/kernels/train.hpp"
#include "mgbench/kernels/transformer.hpp"

namespace mgbench::bench::transformer {

void Replica::send_gradients(int l, CommSet c, int micro) {
  if (!c.grads || cfg_.strategy == Strategy::tp) return;
  float* mine = grads_.as<float>() + static_cast<std::size_t>(l) * sizes_.layer_params;
  if (cfg_.strategy != Strategy::fsdp) {
    // ddp, tp_dp: once per step, each layer as soon as its gradients are complete.
    if (micro != cfg_.accum - 1 || !cfg_.overlap) return;
    stream_wait(env_.comm_stream, env_.stream, ready_);
    comms_.dp_allreduce(mine, sizes_.layer_params, env_.comm_stream);
    comm_pending_ = true;
    return;
  }
  // fsdp: every micro-step, into the rank's shard (the later micro-steps add theirs).
  const cudaStream_t cs = cfg_.overlap ? env_.comm_stream : env_.stream;
  if (cfg_.overlap) stream_wait(cs, env_.stream, ready_);
  if (micro == 0) {
    comms_.reduce_scatter(grad_target(l), mine, sizes_.layer_params, cs);
  } else {
    comms_.reduce_scatter(grad_target(l), stage_.as<float>(), sizes_.layer_params, cs);
    MGBENCH_CUDA_CHECK(
        kernels::launch_add_f32(mine, stage_.as<float>(), sizes_.layer_params, cs));
  }
  if (cfg_.overlap) {
    MGBENCH_CUDA_CHECK(cudaEventRecord(grads_done_[l % 2].get(), cs));
    comm_pending_ = true;
  }
}

void Replica::gather_now(int l, cudaStream_t stream) {
  comms_.all_gather(copy_.as<char>() + static_cast<std::size_t>(l) * sizes_.layer_params * elem_,
                    gathered_[l % 2].get(), sizes_.layer_params, dtype_, stream);
}

void Replica::prefetch(int l, CommSet c) {
  if (cfg_.strategy != Strategy::fsdp || !c.gather || !cfg_.overlap) return;
  if (!comm_pending_) {
    // The first gather of a step reads what the previous step's optimizer wrote.
    stream_wait(env_.comm_stream, env_.stream, ready_);
  }
  const int slot = l % 2;
  MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.comm_stream, slot_free_[slot].get(), 0));
  gather_now(l, env_.comm_stream);
  MGBENCH_CUDA_CHECK(cudaEventRecord(slot_ready_[slot].get(), env_.comm_stream));
  comm_pending_ = true;
}

void Replica::use_gathered(int l, CommSet c) {
  if (cfg_.strategy != Strategy::fsdp || !c.gather) return;
  if (cfg_.overlap) {
    MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.stream, slot_ready_[l % 2].get(), 0));
  } else {
    gather_now(l, env_.stream);
  }
}

void Replica::release_gathered(int l) {
  if (cfg_.strategy != Strategy::fsdp || !cfg_.overlap) return;
  MGBENCH_CUDA_CHECK(cudaEventRecord(slot_free_[l % 2].get(), env_.stream));
}

void Replica::enqueue_comm_only() {
  cudaStream_t s = env_.stream;
  comms_.reset_count();
  const std::size_t activation = static_cast<std::size_t>(cfg_.local_tokens() * dims_.hidden);
  for (int micro = 0; micro < cfg_.accum; ++micro) {
    for (int l = 0; l < cfg_.layers; ++l) {
      if (cfg_.strategy == Strategy::fsdp) {
        gather_now(l, s);  // forward
        gather_now(l, s);  // backward
        comms_.reduce_scatter(full_grads_[l % 2].as<float>(), stage_.as<float>(),
                              sizes_.layer_params, s);
      }
      if (cfg_.tp > 1) {
        for (int i = 0; i < 4; ++i) comms_.tp_allreduce(dn_.get(), activation, dtype_, s);
      }
    }
  }
  if (cfg_.strategy == Strategy::ddp || cfg_.strategy == Strategy::tp_dp) {
    for (int l = cfg_.layers - 1; l >= 0; --l) {
      comms_.dp_allreduce(grad_target(l), sizes_.layer_params, s);
    }
  }
}

namespace {

Replica::Hash read_hash(const DeviceBuffer& hash, cudaStream_t stream) {
  unsigned long long host[2] = {0, 0};
  MGBENCH_CUDA_CHECK(
      cudaMemcpyAsync(host, hash.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return {host[0], host[1]};
}

void add(Replica::Hash& total, const Replica::Hash& part) {
  total.value += part.value;  // modulo 2^64, as the kernel sums
  total.nonfinite += part.nonfinite;
}

}  // namespace

Replica::Hash Replica::master_hash() {
  MGBENCH_CUDA_CHECK(kernels::launch_weight_hash(master_.as<float>(),
                                                 cfg_.layers * sizes_.layer_params,
                                                 hash_.as<unsigned long long>(), env_.stream));
  return read_hash(hash_, env_.stream);
}

Replica::Hash Replica::norm_hash() {
  Hash total;
  if (cfg_.strategy == Strategy::fsdp) return total;  // nothing replicated
  for (int l = 0; l < cfg_.layers; ++l) {
    float* base = master_.as<float>() + static_cast<std::size_t>(l) * sizes_.layer_params;
    for (const Segment s : {Segment::attn_norm, Segment::mlp_norm}) {
      MGBENCH_CUDA_CHECK(kernels::launch_weight_hash(seg(base, s), layout_.at(s).count(),
                                                     hash_.as<unsigned long long>(), env_.stream));
      Hash part = read_hash(hash_, env_.stream);
      part.value *= 2 * static_cast<std::uint64_t>(l) + (s == Segment::attn_norm ? 1 : 2);
      add(total, part);
    }
  }
  return total;
}

Replica::Hash Replica::gathered_hash() {
  Hash total;
  if (cfg_.strategy != Strategy::fsdp) return total;
  for (int l = 0; l < cfg_.layers; ++l) {
    float* full = full_grads_[0].as<float>();  // scratch: the step is over
    comms_.all_gather(master_.as<float>() + static_cast<std::size_t>(l) * sizes_.layer_params,
                      full, sizes_.layer_params, DType::fp32, env_.stream);
    MGBENCH_CUDA_CHECK(kernels::launch_weight_hash(full, layout_.total,
                                                   hash_.as<unsigned long long>(), env_.stream));
    Hash part = read_hash(hash_, env_.stream);
    part.value *= static_cast<std::uint64_t>(l) + 1;
    add(total, part);
  }
  return total;
}

std::vector<double> Replica::read_weights() const {
  return read_doubles(copy_.get(), dtype_, cfg_.layers * sizes_.layer_params, env_.stream);
}

std::vector<double> Replica::read_grads() const {
  return read_doubles(grads_.get(), DType::fp32, cfg_.layers * sizes_.layer_params, env_.stream);
}

std::vector<double> Replica::read_x() const {
  return read_doubles(xs_.get(), dtype_,
                      static_cast<std::size_t>(cfg_.local_tokens() * dims_.hidden), env_.stream);
}

std::vector<double> Replica::read_t() const {
  return read_doubles(t_.get(), dtype_,
                      static_cast<std::size_t>(cfg_.local_tokens() * dims_.hidden), env_.stream);
}

}  // namespace mgbench::bench::transformer
