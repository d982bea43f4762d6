// PeerAllreduce: collective setup of mgbench's own all-reduce and its enqueue (see
// peer_allreduce.hpp and kernels/allreduce.hpp).
#include "collectives/peer_allreduce.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <vector>

#include <fmt/format.h>

#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/dtype.hpp"
#include "mgbench/bench/peer_access.hpp"
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

constexpr std::uint64_t kSetupOk = 1, kSetupOom = 2, kSetupFailed = 3, kSetupNoPeerAccess = 4;

}  // namespace

kernels::DType reduce_dtype_from_string(const std::string& name) {
  using kernels::DType;
  return dtype_from_string(name, {DType::fp32, DType::bf16, DType::fp16, DType::int32},
                           "all-reduce");
}

const std::initializer_list<std::pair<const char*, PeerAlgo>> kPeerAlgoNames{
    {"auto", PeerAlgo::automatic},
    {"one_shot", PeerAlgo::one_shot},
    {"two_shot", PeerAlgo::two_shot}};

const char* to_string(PeerAlgo algo) {
  for (const auto& [name, named] : kPeerAlgoNames) {
    if (named == algo) return name;
  }
  return "?";
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

namespace {

// This rank's local set-up: what failed (if anything) and its SM count.
struct LocalSetup {
  std::string waive;  // why this rank cannot use peer access (then code kSetupNoPeerAccess)
  std::exception_ptr error;
  std::uint64_t code = kSetupOk;
  int sm_count = 0;
};

// The most ranks of the group on one device (1 unless ranks are simulated on one GPU).
int ranks_per_device(const std::vector<int>& devices) {
  int most = 1;
  for (int d : devices) {
    most = std::max(most, static_cast<int>(std::count(devices.begin(), devices.end(), d)));
  }
  return most;
}

std::vector<int> gather_devices(RankEnv& env) {
  std::vector<int> devices;
  for (void* slot : env.all_gather_ptr(encode(static_cast<std::uint64_t>(env.device)))) {
    devices.push_back(static_cast<int>(decode(slot)));
  }
  return devices;
}

// Enables peer access and allocates the staging buffer (two halves) and the sync flags.
// Never throws: the outcome travels to the other ranks first.
LocalSetup set_up_locally(RankEnv& env, const std::vector<int>& devices, std::size_t half,
                          DeviceBuffer& staging, DeviceBuffer& sync) {
  LocalSetup local;
  try {
    local.waive = missing_peer_access(devices, "the own all-reduce");
    if (local.waive.empty()) local.waive = enable_peer_access(env.device, devices);
    if (!local.waive.empty()) {
      local.code = kSetupNoPeerAccess;
    } else {
      MGBENCH_CUDA_CHECK(kernels::allreduce_preload());
      MGBENCH_CUDA_CHECK(
          cudaDeviceGetAttribute(&local.sm_count, cudaDevAttrMultiProcessorCount, env.device));
      staging = DeviceBuffer(2 * half);
      sync = DeviceBuffer(kernels::allreduce_sync_bytes());
      MGBENCH_CUDA_CHECK(
          cudaMemsetAsync(sync.get(), 0, kernels::allreduce_sync_bytes(), env.stream));
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
    }
  } catch (const OutOfMemoryError&) {
    local.error = std::current_exception();
    local.code = kSetupOom;
  } catch (...) {
    local.error = std::current_exception();
    local.code = kSetupFailed;
  }
  return local;
}

// Throws when any rank's set-up failed (every rank throws the same kind); otherwise returns
// the smallest SM count of the group.
int check_outcomes(const RankEnv& env, const std::vector<void*>& outcomes, std::size_t half) {
  int min_sm = INT_MAX;
  for (int r = 0; r < env.nranks; ++r) {
    const std::uint64_t value = decode(outcomes[r]);
    const std::uint64_t other = value & 0xff;
    if (other == kSetupNoPeerAccess) {
      throw WaivedError(fmt::format("rank {} of the group cannot use peer access, which the own "
                                    "all-reduce needs",
                                    r));
    }
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
  return min_sm;
}

}  // namespace

PeerAllreduce::PeerAllreduce(RankEnv& env, std::size_t max_bytes, int max_blocks)
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
  if (env.nranks > 1 && !env.ranks_share_process()) {
    throw WaivedError("the own all-reduce reads its peers' memory: it needs every rank in one "
                      "process (--launcher local)");
  }
  const std::size_t half = (std::max<std::size_t>(max_bytes, 16) + 255) / 256 * 256;

  // Every rank runs the same collectives in the same order, whatever fails locally: the
  // group barrier cannot tell a failed rank from a late one.
  const std::vector<int> devices = gather_devices(env);
  const LocalSetup local = set_up_locally(env, devices, half, s.staging, s.sync);
  const auto outcomes = env.all_gather_ptr(
      encode(local.code | (static_cast<std::uint64_t>(local.sm_count) << 8)));
  if (!local.waive.empty()) throw WaivedError(local.waive);
  if (local.error) std::rethrow_exception(local.error);
  const int min_sm = check_outcomes(env, outcomes, half);

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
  // Ranks sharing a GPU also share it with their start-gate kernels: half the SMs each.
  const int sharing = ranks_per_device(devices);
  int blocks = sharing == 1 ? min_sm : std::max(1, min_sm / (2 * sharing));
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  s.peers.max_blocks = std::clamp(blocks, 1, kernels::kAllreduceMaxBlocks);
  const double timeout_s =
      env.settings != nullptr ? std::max(1.0, env.settings->gate_timeout_s) : 10.0;
  s.peers.timeout_ns = static_cast<std::uint64_t>(timeout_s * 1e9);
}

PeerAllreduce::~PeerAllreduce() = default;

PeerAlgo PeerAllreduce::resolve(std::size_t count, kernels::DType dtype,
                                PeerAlgo algo) const {
  if (algo != PeerAlgo::automatic) return algo;
  const std::size_t bytes = count * kernels::dtype_size(dtype);
  return kernels::allreduce_auto_algo(bytes, impl_->nranks) == kernels::AllreduceAlgo::one_shot
             ? PeerAlgo::one_shot
             : PeerAlgo::two_shot;
}

PeerAlgo PeerAllreduce::run(const void* in, void* out, std::size_t count, kernels::DType dtype,
                            cudaStream_t stream, PeerAlgo algo) {
  const Impl& s = *impl_;
  const PeerAlgo chosen = resolve(count, dtype, algo);
  const std::size_t bytes = count * kernels::dtype_size(dtype);
  if (bytes > s.peers.half_bytes) {
    throw UsageError(fmt::format("peer all-reduce of {} bytes exceeds its {}-byte buffer", bytes,
                                 s.max_bytes));
  }
  kernels::AllreduceOp op;
  op.in = in;
  op.out = out;
  op.count = count;
  op.dtype = dtype;
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

void PeerAllreduce::reset(RankEnv& env) {
  Impl& s = *impl_;
  MGBENCH_CUDA_CHECK(cudaSetDevice(s.device));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
  if (env.comm_stream != nullptr) MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.comm_stream));
  env.barrier();  // no rank's op runs any more: nobody writes into a peer's flags
  MGBENCH_CUDA_CHECK(
      cudaMemsetAsync(s.sync.get(), 0, kernels::allreduce_sync_bytes(), env.stream));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
  env.barrier();  // every region is zero before any rank's next op writes a flag
}

std::size_t PeerAllreduce::max_bytes() const { return impl_->max_bytes; }

int PeerAllreduce::nranks() const { return impl_->nranks; }

}  // namespace mgbench::bench
