// All-reduce: sum all-reduce across the GPUs of the group, NCCL and mgbench's own kernels.
//
// Measured: one sum all-reduce of `count` elements (bytes = count x element size, the same
// on every rank) per op, on every rank at once. Two implementations:
//   impl=nccl     ncclAllReduce on non-blocking communicators created once per group
//                 (NcclComms; the watchdog aborts them past --group-timeout).
//   impl=mgbench  the own one-shot / two-shot kernels over peer pointers
//                 (kernels/allreduce.hpp); algo=auto picks by size. The algorithm used is
//                 reported per rank in extra.ranks[].details.algo. Waived without peer access.
// Formulas, as nccl-tests (t = the slowest rank's median seconds per op):
//   time_us = t * 1e6;  algbw = bytes / t / 1e9 GB/s;  busbw = algbw * 2(n-1)/n (absent on
//   1 GPU: undefined, shown as a dash). A 1-GPU in-place point is waived (NCCL moves nothing).
// Timing (measurement.hpp): default host, as nccl-tests; below 1 MiB the point is also timed
// device-side (metrics host_time_us and device_time_us). Cache: default cold, every op on the
// next of a rotation of buffer sets larger than twice the L2 cache; algbw above HBM's copy
// limit is flagged impossible.
// Summary: plateau busbw = median busbw over the ok points of >= 64 MiB, per (gpus, impl,
// dtype, inplace).
// Verification on every point, as nccl-tests: inputs are small integers (-2, -1, 1, 2 from
// a hash of rank and index), so every sum is exact in every dtype. After sampling, each
// rank re-initialises its input, poisons its output (out-of-place), runs one fresh op and
// counts the elements that differ from the exact sum; verification.wrong is the total over
// ranks and any mismatch makes the point `wrong`.
// Profiles: quick = fp32, out-of-place, x8 sizes from 8 B plus 64/128/256 MiB; standard =
// fp32 and bf16, out-of-place, 8 B .. 1 GiB in x2 steps; full = all four dtypes, in- and
// out-of-place. Sizes smaller than one element are skipped.
#include <cuda_bf16.h>  // before nccl.h: older NCCL headers declare ncclBfloat16 only then
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/allreduce_math.hpp"
#include "collectives/collective_point.hpp"
#include "collectives/collective_workload.hpp"
#include "mgbench/bench/device_restore.hpp"
#include "mgbench/bench/executor.hpp"
#include "collectives/peer_allreduce.hpp"
#include "work_costs.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

enum class Impl { nccl, mgbench };

Impl impl_of(const Params& params) {
  return params.choice<Impl>("impl", {{"nccl", Impl::nccl}, {"mgbench", Impl::mgbench}});
}

// The own all-reduce of one rank for the whole group, from its first mgbench point on.
struct PeerSlot {
  int device = -1;
  std::unique_ptr<PeerAllreduce> peer;
  std::string waived;  // why this rank's group has no peer access ("" until it failed)
};

// State of one group run: the own all-reduce's buffers live for the whole group, one per rank
// of this process (every rank with threads, its own with a process per GPU).
struct GroupState {
  explicit GroupState(const GroupContext& ctx) : peers(ctx) {
    for (const auto& point : ctx.spec.points) {
      if (impl_of(point.params) == Impl::mgbench) {
        peer_bytes = std::max(peer_bytes, static_cast<std::size_t>(point.params.integer("bytes")));
      }
    }
  }
  ~GroupState() {
    // A peer may read another rank's staging buffer until its own op finishes: quiesce
    // every GPU before any rank's buffers are freed.
    std::vector<int> devices;
    for (const PeerSlot& slot : peers) {
      if (slot.peer) devices.push_back(slot.device);
    }
    DeviceRestore restore(devices);
    for (int device : devices) {
      MGBENCH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
      MGBENCH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    }
    for (PeerSlot& slot : peers) slot.peer.reset();
  }
  GroupState(const GroupState&) = delete;
  GroupState& operator=(const GroupState&) = delete;

  std::size_t peer_bytes = 0;
  RankSlots<PeerSlot> peers;
};

// The own one-shot / two-shot kernels; buffers, initialisation and verification are the
// collectives' (CollectivePoint).
class PeerPoint final : public CollectivePoint {
 public:
  PeerPoint(RankEnv& env, PeerAllreduce& peer)
      : CollectivePoint(env, collective::Kind::allreduce), peer_(peer) {
    // Absent without the algo axis (the default: auto).
    if (env.params->contains("algo")) algo_ = env.params->choice<PeerAlgo>("algo", kPeerAlgoNames);
    chosen_ = peer_.resolve(layout_.count, dtype_, algo_);
  }

  Json rank_details() override {
    Json d = CollectivePoint::rank_details();
    d["algo"] = to_string(chosen_);
    return d;
  }

 protected:
  void run_once(std::size_t slot) override {
    peer_.run(in(slot), out(slot), layout_.count, dtype_, env_.stream, algo_);
  }

  // abandon_collective: nothing to do, the peers' barriers give up after the gate timeout.
  void after_op(Verification& v) override {
    if (peer_.timed_out()) {
      v.ok = false;
      v.message = "a barrier of the own all-reduce timed out (a peer never arrived)";
      v.details["timed_out"] = true;
    }
  }

 private:
  PeerAllreduce& peer_;
  PeerAlgo algo_ = PeerAlgo::automatic;
  PeerAlgo chosen_ = PeerAlgo::one_shot;
};

std::unique_ptr<RankPoint> make_point(GroupState& state, RankEnv& env) {
  const std::string waived = allreduce::waiver(env.nranks, env.params->boolean("inplace"));
  if (!waived.empty()) throw WaivedError(waived);
  if (impl_of(*env.params) == Impl::nccl) {
    return std::make_unique<NcclCollectivePoint>(env, collective::Kind::allreduce);
  }
  PeerSlot& slot = state.peers[env.slot()];
  if (slot.peer) {
    // Collective: every rank reaches each later mgbench point together. A barrier timeout
    // of an earlier point left the error word set and the op counters apart: start over.
    slot.peer->reset(env);
  } else {
    // Collective: every rank reaches its first mgbench point together.
    if (!slot.waived.empty()) throw WaivedError(slot.waived);
    try {
      slot.device = env.device;
      slot.peer = std::make_unique<PeerAllreduce>(env, state.peer_bytes);
    } catch (const WaivedError& e) {
      slot.waived = e.what();
      throw;
    }
  }
  return std::make_unique<PeerPoint>(env, *slot.peer);
}

GroupRunner allreduce_runner() {
  return [](GroupContext& ctx) {
    auto state = std::make_shared<GroupState>(ctx);
    RunnerOptions options = collective_runner_options();
    // Communicators only for NCCL's points; the own points enable peer access themselves
    // (PeerAllreduce), and a group where that fails waives them only.
    for (const auto& point : ctx.spec.points) {
      options.needs_nccl = options.needs_nccl || impl_of(point.params) == Impl::nccl;
    }
    GroupRunner run = make_runner(
        [state](RankEnv& env) { return make_point(*state, env); },
        [](const Params& params, int nranks, double seconds) {
          return allreduce::metrics(static_cast<std::uint64_t>(params.integer("bytes")), nranks,
                                    seconds);
        },
        options);
    run(ctx);
  };
}

}  // namespace

}  // namespace mgbench::bench

MGBENCH_REGISTER_WORKLOAD(
    mgbench::Workload("allreduce")
        .category(mgbench::WorkloadCategory::collective)
        .summary("Sum all-reduce across the group: NCCL and the own peer-to-peer kernels, "
                 "nccl-tests' metrics")
        .formulas("t = slowest rank's median time per op; algbw = bytes / t / 1e9 GB/s; "
                  "busbw = algbw * 2(n-1)/n (nccl-tests; undefined on one GPU). Summary: plateau "
                  "busbw = median busbw over sizes >= 64 MiB.")
        .requirements("impl=mgbench: peer access between every pair of GPUs of the group "
                      "(else waived), at most 16 GPUs")
        .axis(mgbench::Axis::size("bytes", mgbench::bench::allreduce::size_strings(
                                               mgbench::bench::allreduce::default_sizes(
                                                   mgbench::Profile::standard)))
                  .quick(mgbench::bench::allreduce::size_strings(
                      mgbench::bench::allreduce::default_sizes(mgbench::Profile::quick)))
                  .describe("message size per rank (rounded down to whole elements)"))
        .axis(mgbench::Axis::text("dtype", {"fp32", "bf16"})
                  .quick({"fp32"})
                  .full({"fp32", "bf16", "fp16", "int32"})
                  .allowed({"fp32", "bf16", "fp16", "int32"})
                  .describe("element type (sum in fp32 for bf16/fp16 in the own kernels)"))
        .axis(mgbench::Axis::text("impl", {"nccl", "mgbench"})
                  .allowed({"nccl", "mgbench"})
                  .describe("nccl: ncclAllReduce; mgbench: own one-shot/two-shot P2P kernels"))
        .axis(mgbench::Axis::boolean("inplace", {"false"})
                  .full({"false", "true"})
                  .describe("in-place (recvbuff == sendbuff) or out-of-place"))
        .axis(mgbench::Axis::text("algo", {"auto"})
                  .allowed({"auto", "one_shot", "two_shot"})
                  .describe("impl=mgbench only: auto picks one-shot for small messages"))
        .axis(mgbench::timing_axis("host"))
        .axis(mgbench::cache_axis("cold"))
        .expand(mgbench::bench::allreduce::expand_points)
        .summarize(mgbench::bench::allreduce::plateau_summary)
        .throughput("busbw_GBps", "GB/s")
        .cost(mgbench::bench::allreduce_cost)
        .present(mgbench::bench::collective_presentation({"impl"}))
        .estimate_seconds_per_point(1.0)
        .runner(mgbench::bench::allreduce_runner()));
