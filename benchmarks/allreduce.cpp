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

#include "mgbench/bench/allreduce_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/device_restore.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/bench/peer_allreduce.hpp"
#include "mgbench/bench/work_costs.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

constexpr std::uint32_t kSeed = 0x6d676231;
constexpr std::uint64_t kNoCount = ~std::uint64_t{0};
// Buffer sets of a rotation start on this alignment (NCCL and the own kernels like 256).
constexpr std::size_t kSlotAlign = 256;
// Messages below this are also timed with the other launch method (device and host side by
// side): there, launch cost is a large share of the time.
constexpr std::uint64_t kTimeBothBelowBytes = std::uint64_t{1} << 20;

// The kernels move 16-byte packs: every device buffer here has at least 16 bytes.
DeviceBuffer device_buffer(std::size_t bytes) {
  return DeviceBuffer(std::max<std::size_t>(bytes, 16));
}

ncclDataType_t nccl_datatype(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::bf16: return ncclBfloat16;
    case kernels::DType::fp16: return ncclFloat16;
    case kernels::DType::int32: return ncclInt32;
    default: return ncclFloat32;
  }
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
      if (point.params.value("impl", std::string()) == "mgbench" &&
          point.params.contains("bytes")) {
        peer_bytes = std::max(peer_bytes,
                              static_cast<std::size_t>(param_int(point.params, "bytes")));
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

// Shared by both implementations: buffers, initialisation and verification.
// Consecutive ops use the buffer sets of a rotation in turn (cache=cold: more than twice the
// L2 cache in all, so every op reads its input from HBM; cache=hot: one set).
class AllreducePoint : public RankPoint {
 public:
  explicit AllreducePoint(RankEnv& env) : env_(env) {
    const Params& p = *env.params;
    dtype_ = reduce_dtype_from_string(param_str(p, "dtype"));
    count_ = static_cast<std::size_t>(param_int(p, "count"));
    inplace_ = param_bool(p, "inplace");
    const std::size_t bytes = std::max<std::size_t>(count_ * kernels::dtype_size(dtype_), 16);
    stride_ = (bytes + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
    // Every rank the same number of sets: the verification runs one op per set.
    rotation_ = env.agreed_rotation(stride_ * (inplace_ ? 1 : 2));
    send_ = device_buffer(stride_ * rotation_.sets);
    if (!inplace_) recv_ = device_buffer(stride_ * rotation_.sets);
    // Allocated now, not during the verification: a cudaMalloc or cudaFree there, while a
    // faster peer already waits in its verification op, can wait for that peer forever.
    counter_ = device_buffer(sizeof(unsigned long long));
    initialise();
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }

  void enqueue() final {
    last_ = next_;
    run_once(last_);
    next_ = (next_ + 1) % rotation_.sets;
  }

  Json rank_details() override {
    return Json{{"peak_bytes", send_.bytes() + recv_.bytes()},
                {"rotation", rotation_json(rotation_)}};
  }

  // The output the last timed op left (out-of-place: its input is unchanged), then a fresh
  // op on every buffer set (in-place ops have changed the input), checked element by
  // element; the wrong counts are summed over ranks (collective).
  Verification verify() final {
    Verification v;
    std::uint64_t wrong = 0;
    std::exception_ptr error;
    bool issued = false;
    try {
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
      if (!inplace_) wrong = count_wrong(last_);
      initialise();
      for (std::size_t slot = 0; slot < rotation_.sets; ++slot) run_once(slot);
      issued = true;
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
      after_op(v);
      for (std::size_t slot = 0; slot < rotation_.sets; ++slot) wrong += count_wrong(slot);
    } catch (...) {
      error = std::current_exception();
      if (!issued) abandon_collective();  // the peers' op would wait for this rank forever
    }
    // Every rank reaches this exchange exactly once, whatever failed above.
    void* mine = reinterpret_cast<void*>(static_cast<std::uintptr_t>(error ? kNoCount : wrong));
    const auto all = env_.all_gather_ptr(mine);
    if (error) std::rethrow_exception(error);
    std::uint64_t total = 0;
    for (void* slot : all) {
      const auto n = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(slot));
      if (n != kNoCount) total += n;
    }
    v.details["wrong"] = total;
    v.details["wrong_on_rank"] = wrong;
    v.details["checked"] = static_cast<std::uint64_t>(count_) *
                           static_cast<std::uint64_t>(env_.nranks) *
                           static_cast<std::uint64_t>(rotation_.sets + (inplace_ ? 0 : 1));
    if (total != 0 && v.ok) {
      v.ok = false;
      v.message = fmt::format("{} of {} elements differ from the exact sum ({} on rank {})",
                              total, v.details["checked"].get<std::uint64_t>(), wrong, env_.rank);
    }
    return v;
  }

 protected:
  virtual void run_once(std::size_t slot) = 0;  // enqueues one op on env_.stream
  virtual void after_op(Verification&) {}  // implementation-specific health checks
  virtual void abandon_collective() {}      // this rank will not join the op it owes

  void* in(std::size_t slot) const { return static_cast<char*>(send_.get()) + slot * stride_; }
  void* out(std::size_t slot) const {
    return static_cast<char*>(inplace_ ? send_.get() : recv_.get()) + slot * stride_;
  }

  RankEnv env_;
  kernels::DType dtype_ = kernels::DType::fp32;
  std::size_t count_ = 0;
  bool inplace_ = false;
  DeviceBuffer send_, recv_;

 private:
  // This rank's input pattern in every set; the outputs poisoned (NaN / INT32_MIN: never a
  // valid sum).
  void initialise() {
    for (std::size_t slot = 0; slot < rotation_.sets; ++slot) {
      MGBENCH_CUDA_CHECK(kernels::allreduce_fill_input(in(slot), count_, dtype_, env_.rank,
                                                       kSeed, env_.stream));
    }
    if (!inplace_) {
      MGBENCH_CUDA_CHECK(kernels::fill_poison(recv_.get(), recv_.bytes() / kernels::dtype_size(dtype_),
                                              dtype_, env_.stream));
    }
  }

  std::uint64_t count_wrong(std::size_t slot) {
    auto* c = static_cast<unsigned long long*>(counter_.get());
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(unsigned long long), env_.stream));
    MGBENCH_CUDA_CHECK(kernels::allreduce_count_wrong(out(slot), count_, dtype_,
                                                      env_.nranks, kSeed, c, env_.stream));
    unsigned long long host = 0;
    MGBENCH_CUDA_CHECK(
        cudaMemcpyAsync(&host, c, sizeof host, cudaMemcpyDeviceToHost, env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    return host;
  }

  std::size_t stride_ = 0;  // bytes between consecutive buffer sets
  Rotation rotation_;
  DeviceBuffer counter_;    // the verification's count of wrong elements
  std::size_t next_ = 0, last_ = 0;  // the set of the next op, of the last op
};

class NcclPoint final : public AllreducePoint {
 public:
  explicit NcclPoint(RankEnv& env) : AllreducePoint(env) {
    if (env.comm == nullptr) throw EnvironmentError("impl=nccl without an NCCL communicator");
    owner_ = NcclComms::owner_of(env.comm, &owner_rank_);
    datatype_ = nccl_datatype(dtype_);
  }

 protected:
  void run_once(std::size_t slot) override {
    if (owner_ != nullptr) {
      owner_->allreduce(owner_rank_, in(slot), out(slot), count_, datatype_, env_.stream);
    } else {
      nccl_allreduce(env_.comm, in(slot), out(slot), count_, datatype_, env_.stream);
    }
  }

  void after_op(Verification&) override {
    if (owner_ != nullptr && owner_->aborted()) {
      throw EnvironmentError("NCCL communicators aborted: " + owner_->abort_reason());
    }
  }

  void abandon_collective() override {
    if (owner_ != nullptr) {
      owner_->abort(fmt::format("rank {} failed before its verification all-reduce", env_.rank));
    }
  }

 private:
  NcclComms* owner_ = nullptr;
  int owner_rank_ = 0;
  ncclDataType_t datatype_ = ncclFloat32;
};

class PeerPoint final : public AllreducePoint {
 public:
  PeerPoint(RankEnv& env, PeerAllreduce& peer) : AllreducePoint(env), peer_(peer) {
    if (env.params->contains("algo")) algo_ = peer_algo_from_string(param_str(*env.params, "algo"));
    chosen_ = peer_.resolve(count_, dtype_, algo_);
  }

  Json rank_details() override {
    Json d = AllreducePoint::rank_details();
    d["algo"] = to_string(chosen_);
    return d;
  }

 protected:
  void run_once(std::size_t slot) override {
    peer_.run(in(slot), out(slot), count_, dtype_, env_.stream, algo_);
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
  const std::string waived = allreduce::waiver(env.nranks, param_bool(*env.params, "inplace"));
  if (!waived.empty()) throw WaivedError(waived);
  const std::string impl = param_str(*env.params, "impl");
  if (impl == "nccl") return std::make_unique<NcclPoint>(env);
  if (impl != "mgbench") throw UsageError("unknown all-reduce impl '" + impl + "'");
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
    RunnerOptions options;
    // Default host: nccl-tests' method, and the latency an eagerly launching framework waits
    // for; small messages are also timed device-side, shown next to it (docs/METHODOLOGY.md).
    options.default_timing = TimingMethod::host;
    options.default_cache = CacheMode::cold;
    options.time_both = [](const Params& p) {
      return static_cast<std::uint64_t>(param_int(p, "bytes")) < kTimeBothBelowBytes;
    };
    options.limits = {LimitCheck{"algbw_GBps", LimitKind::copy}};
    // Communicators only for NCCL's points; the own points enable peer access themselves
    // (PeerAllreduce), and a group where that fails waives them only.
    for (const auto& point : ctx.spec.points) {
      options.needs_nccl = options.needs_nccl || point.params.value("impl", "") == "nccl";
    }
    GroupRunner run = make_runner(
        [state](RankEnv& env) { return make_point(*state, env); },
        [](const Params& params, int nranks, double seconds) {
          return allreduce::metrics(static_cast<std::uint64_t>(param_int(params, "bytes")),
                                    nranks, seconds);
        },
        options);
    run(ctx);
  };
}

}  // namespace

}  // namespace mgbench::bench

namespace {
// How reports show the all-reduce: nccl-tests style tables per dtype, busbw and time vs message
// size on a log2 axis, and the plateau busbw per GPU count.
mgbench::Presentation allreduce_presentation() {
  using namespace mgbench;
  return Presentation()
      .metric(MetricSpec("busbw_GBps", "busbw", "GB/s")
                  .format(ValueFormat::fixed, 2)
                  .of_peak(PeakSpec::peer_link()))
      .metric(MetricSpec("algbw_GBps", "algbw", "GB/s").format(ValueFormat::fixed, 2))
      .metric(MetricSpec("time_us", "time", "us")
                  .format(ValueFormat::fixed, 2)
                  .better(Better::lower))
      .axis(AxisSpec("bytes", "message size")
                .format(ValueFormat::bytes)
                .log2()
                .with({"count"})
                .tooltip_word("size"))
      .table(TableSpec()
                 .split_by({"dtype"})
                 .sort_by({"gpus", "impl", "inplace", "bytes"})
                 .no_fixed_caption()
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::param("bytes", "size").format(ValueFormat::bytes))
                 .column(ColumnSpec::param("count"))
                 .column(ColumnSpec::param("impl"))
                 .column(ColumnSpec::params())
                 .column(ColumnSpec::param("inplace", "in-place"))
                 .column(ColumnSpec::metric("time_us", "time (us)")
                             .format(ValueFormat::fixed, 2)
                             .or_median(1e6))
                 .column(ColumnSpec::metric("device_time_us", "device (us)")
                             .format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("host_time_us", "host-launched (us)")
                             .format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("algbw_GBps", "algbw (GB/s)")
                             .format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("busbw_GBps", "busbw (GB/s)")
                             .format(ValueFormat::fixed, 2)
                             .when_absent("\u2014"))
                 .column(ColumnSpec::verification("wrong", "#wrong", "N/A"))
                 .tail())
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("busbw", "busbw_GBps")
                 .titled("bus bandwidth vs message size")
                 .y_axis("busbw (GB/s)")
                 .split_by({"dtype"})
                 .or_metric("algbw_GBps", "algorithm bandwidth vs message size",
                            "1 GPU: busbw is 0 by definition"))
      .chart(ChartSpec::line("time", "time_us")
                 .titled("time vs message size")
                 .y_axis("time (us)", AxisScale::log10)
                 .split_by({"dtype"})
                 .or_median(1e6))
      .summary(SummarySpec("plateau", "plateau", "median busbw over message sizes >= 64 MiB")
                   .column("gpus", "GPUs", ValueFormat::count)
                   .column("dtype", "dtype")
                   .column("impl", "impl")
                   .column("inplace", "in-place")
                   .column("measured", "timing, cache")
                   .column("plateau_busbw_GBps", "plateau busbw (GB/s)", ValueFormat::fixed, 2));
}
}  // namespace

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
        .present(allreduce_presentation())
        .estimate_seconds_per_point(1.0)
        .runner(mgbench::bench::allreduce_runner()));
