// PeerAllreduce: collective setup of mgbench's own all-reduce and its enqueue (see
// peer_allreduce.hpp and kernels/allreduce.hpp).
#include "mgbench/bench/peer_allreduce.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <vector>

#include <fmt/format.h>

#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/allreduce.hpp"

namespace mgbench::bench {

namespace {

// Small integers travel through RankEnv::all_gather_ptr as pointer-sized values.
void* encode(std::uint64_t value) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(value));
}
std::uint64_t decode(void* value) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(value));
}

constexpr std::uint64_t kSetupOk = 1, kSetupOom = 2, kSetupFailed = 3;

// Why the group cannot use peer access ("" when every pair can). Identical on every rank.
std::string missing_peer_access(const std::vector<int>& devices) {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (std::size_t j = 0; j < devices.size(); ++j) {
      if (devices[i] == devices[j]) continue;
      int can = 0;
      MGBENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, devices[i], devices[j]));
      if (can == 0) {
        return fmt::format(
            "no peer access from GPU {} to GPU {} (cudaDeviceCanAccessPeer): the own "
            "all-reduce needs NVLink or PCIe peer-to-peer between every pair of the group",
            devices[i], devices[j]);
      }
    }
  }
  return {};
}

void enable_peer_access(int device, const std::vector<int>& devices) {
  MGBENCH_CUDA_CHECK(cudaSetDevice(device));
  for (int other : devices) {
    if (other == device) continue;
    const cudaError_t err = cudaDeviceEnablePeerAccess(other, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
      continue;
    }
    MGBENCH_CUDA_CHECK(err);
  }
}

}  // namespace

ReduceDtype reduce_dtype_from_string(const std::string& name) {
  if (name == "fp32") return ReduceDtype::fp32;
  if (name == "bf16") return ReduceDtype::bf16;
  if (name == "fp16") return ReduceDtype::fp16;
  if (name == "int32") return ReduceDtype::int32;
  throw UsageError("unknown all-reduce dtype '" + name + "' (expected fp32, bf16, fp16 or int32)");
}

const char* to_string(ReduceDtype dtype) {
  switch (dtype) {
    case ReduceDtype::fp32: return "fp32";
    case ReduceDtype::bf16: return "bf16";
    case ReduceDtype::fp16: return "fp16";
    case ReduceDtype::int32: return "int32";
  }
  return "?";
}

std::size_t reduce_dtype_size(ReduceDtype dtype) {
  return dtype == ReduceDtype::bf16 || dtype == ReduceDtype::fp16 ? 2 : 4;
}

kernels::DType kernel_dtype(ReduceDtype dtype) {
  switch (dtype) {
    case ReduceDtype::fp32: return kernels::DType::fp32;
    case ReduceDtype::bf16: return kernels::DType::bf16;
    case ReduceDtype::fp16: return kernels::DType::fp16;
    case ReduceDtype::int32: return kernels::DType::int32;
  }
  return kernels::DType::fp32;
}

const char* to_string(PeerAlgo algo) {
  switch (algo) {
    case PeerAlgo::automatic: return "auto";
    case PeerAlgo::one_shot: return "one_shot";
    case PeerAlgo::two_shot: return "two_shot";
  }
  return "?";
}

PeerAlgo peer_algo_from_string(const std::string& name) {
  if (name == "auto") return PeerAlgo::automatic;
  if (name == "one_shot") return PeerAlgo::one_shot;
  if (name == "two_shot") return PeerAlgo::two_shot;
  throw UsageError("unknown all-reduce algorithm '" + name +
                   "' (expected auto, one_shot or two_shot)");
}

struct PeerAllreduce::Impl {
  int rank = 0;
  int nranks = 1;
  int device = 0;
  std::size_t max_bytes = 0;
  DeviceBuffer staging;  // two halves of peers.half_bytes
  DeviceBuffer sync;
  kernels::AllreducePeers peers;
};

PeerAllreduce::PeerAllreduce(RankEnv& env, std::size_t max_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.rank = env.rank;
  s.nranks = env.nranks;
  s.device = env.device;
  s.max_bytes = max_bytes;
  // Group-uniform checks first: every rank decides the same without talking.
  if (env.nranks > kernels::kAllreduceMaxRanks) {
    throw WaivedError(fmt::format("the own all-reduce supports at most {} ranks, the group has {}",
                                  kernels::kAllreduceMaxRanks, env.nranks));
  }
  const std::size_t half = (std::max<std::size_t>(max_bytes, 16) + 255) / 256 * 256;

  // Every rank runs the same collectives in the same order, whatever fails locally: the
  // group barrier cannot tell a failed rank from a late one.
  std::vector<int> devices;
  for (void* slot : env.all_gather_ptr(encode(static_cast<std::uint64_t>(env.device)))) {
    devices.push_back(static_cast<int>(decode(slot)));
  }
  std::string waive;
  std::exception_ptr error;
  std::uint64_t code = kSetupOk;
  int sm_count = 0;
  try {
    waive = missing_peer_access(devices);
    if (waive.empty()) {
      enable_peer_access(env.device, devices);
      MGBENCH_CUDA_CHECK(kernels::allreduce_preload());
      MGBENCH_CUDA_CHECK(
          cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, env.device));
      s.staging = DeviceBuffer(2 * half);
      s.sync = DeviceBuffer(kernels::allreduce_sync_bytes());
      MGBENCH_CUDA_CHECK(
          cudaMemsetAsync(s.sync.get(), 0, kernels::allreduce_sync_bytes(), env.stream));
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
    }
  } catch (const OutOfMemoryError&) {
    error = std::current_exception();
    code = kSetupOom;
  } catch (...) {
    error = std::current_exception();
    code = kSetupFailed;
  }
  const auto outcomes =
      env.all_gather_ptr(encode(code | (static_cast<std::uint64_t>(sm_count) << 8)));
  if (!waive.empty()) throw WaivedError(waive);
  if (error) std::rethrow_exception(error);
  int min_sm = INT_MAX;
  for (int r = 0; r < env.nranks; ++r) {
    const std::uint64_t value = decode(outcomes[r]);
    const std::uint64_t other = value & 0xff;
    if (other == kSetupOom) {
      throw OutOfMemoryError("CUDA", static_cast<int>(cudaErrorMemoryAllocation),
                             "cudaErrorMemoryAllocation", "PeerAllreduce buffers", host_name(),
                             env.rank,
                             fmt::format("rank {} ran out of memory for the peer all-reduce "
                                         "buffers (2 x {} bytes)",
                                         r, half));
    }
    if (other != kSetupOk) {
      throw EnvironmentError(fmt::format("peer all-reduce setup failed on rank {}", r));
    }
    min_sm = std::min(min_sm, static_cast<int>(value >> 8));
  }

  // Everybody is ready: exchange the buffers (no rank throws past this point).
  const auto staging = env.all_gather_ptr(s.staging.get());
  const auto syncs = env.all_gather_ptr(s.sync.get());
  for (int r = 0; r < env.nranks; ++r) {
    s.peers.staging[r] = staging[r];
    s.peers.sync[r] = static_cast<std::uint32_t*>(syncs[r]);
  }
  s.peers.half_bytes = half;
  s.peers.rank = env.rank;
  s.peers.nranks = env.nranks;
  s.peers.max_blocks = std::clamp(min_sm, 1, kernels::kAllreduceMaxBlocks);
  const double timeout_s =
      env.settings != nullptr ? std::max(1.0, env.settings->gate_timeout_s) : 10.0;
  s.peers.timeout_ns = static_cast<std::uint64_t>(timeout_s * 1e9);
}

PeerAllreduce::~PeerAllreduce() = default;

PeerAlgo PeerAllreduce::resolve(std::size_t count, ReduceDtype dtype, PeerAlgo algo) const {
  if (algo != PeerAlgo::automatic) return algo;
  const std::size_t bytes = count * reduce_dtype_size(dtype);
  return kernels::allreduce_auto_algo(bytes, impl_->nranks) == kernels::AllreduceAlgo::one_shot
             ? PeerAlgo::one_shot
             : PeerAlgo::two_shot;
}

PeerAlgo PeerAllreduce::run(const void* in, void* out, std::size_t count, ReduceDtype dtype,
                            cudaStream_t stream, PeerAlgo algo) {
  const Impl& s = *impl_;
  const PeerAlgo chosen = resolve(count, dtype, algo);
  const std::size_t bytes = count * reduce_dtype_size(dtype);
  if (bytes > s.peers.half_bytes) {
    throw UsageError(fmt::format("peer all-reduce of {} bytes exceeds its {}-byte buffer", bytes,
                                 s.max_bytes));
  }
  kernels::AllreduceOp op;
  op.in = in;
  op.out = out;
  op.count = count;
  op.dtype = kernel_dtype(dtype);
  op.algo = chosen == PeerAlgo::two_shot ? kernels::AllreduceAlgo::two_shot
                                         : kernels::AllreduceAlgo::one_shot;
  MGBENCH_CUDA_CHECK(kernels::allreduce_launch(s.peers, op, stream));
  return chosen;
}

bool PeerAllreduce::timed_out() const {
  std::uint32_t status = 0;
  MGBENCH_CUDA_CHECK(kernels::allreduce_read_status(impl_->peers.sync[impl_->rank], &status));
  return status != 0;
}

std::size_t PeerAllreduce::max_bytes() const { return impl_->max_bytes; }

int PeerAllreduce::nranks() const { return impl_->nranks; }

}  // namespace mgbench::bench
