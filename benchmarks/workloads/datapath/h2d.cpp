// h2d: host <-> device copy bandwidth per GPU over PCIe, alone and with every GPU of the group
// copying at once, from host memory on the GPU's own NUMA node and on a remote one.
//
// Measured, per op on every rank at once: cudaMemcpyAsync of `bytes` between a host buffer and
// the rank's device buffer.
//   direction=h2d    host -> device;  d2h  device -> host;
//   direction=bidir  both at once on two streams (two host and two device buffers).
//   memory=pinned    the host buffer is page-locked (cudaHostRegister);
//   memory=pageable  ordinary memory (the driver stages it through its own pinned buffers). The
//                    driver's pageable copy blocks the calling thread, so a mover thread per
//                    direction issues it while a gate kernel holds the timed stream until the
//                    copy is done (see PageableMover): the time includes a few microseconds
//                    of hand-over.
//   numa=local       host pages bound (mbind, MPOL_BIND) to the GPU's NUMA node (from sysfs);
//   numa=remote      bound to another node with memory; waived on a host with one node, or when
//                    the GPU's node is unknown or the kernel refuses the binding.
// One GPU alone is the 1-GPU group of the sweep; all GPUs at once is the largest group: the
// ratio of their per-GPU figures exposes shared PCIe switches and root ports.
// Formulas (t = the slowest rank's median seconds per op):
//   bytes moved per GPU = bytes (h2d, d2h) or 2 x bytes (bidir);
//   GB/s per GPU = bytes moved / t / 1e9;  aggregate = GPUs x per GPU.
//   link_GBps = PCIe generation x width from NVML (max link of the slot), per direction x 2
//   for bidir (lane rates: mgbench::pcie_lane_GBps, model/point_quality.hpp); absent over
//   NVLink-C2C.
// Summary: one row per point with the ratios to alone, to the link and to local memory, and a
// verdict naming the bottleneck (link, contention, NUMA; thresholds in datapath_math.hpp).
// Verification on every point: sources hold a hashed word pattern (each device source set its
// own), destinations are poisoned in setup; after sampling the host destination is checked as
// the last timed copy left it, then every set is copied once more and checked (device
// destinations by a kernel, host destinations on the host); any mismatch makes it `wrong`.
// Timing: default device; host and graph allowed, graph with pinned memory only (plan-time
// refusal otherwise). Cache: default cold: the device side of a copy rotates through sets
// larger than twice L2 (one set at the default sizes); the host side is one buffer.
// GB/s per GPU above the host link (PCIe gen x width from NVML, x2 for bidir) is flagged
// impossible; over NVLink-C2C or without NVML there is no check.
// Profiles: quick = h2d and d2h, pinned, local, 256 MiB; standard = every direction, both
// memories, both placements, 1 GiB; full adds 64 MiB.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "datapath/datapath_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "work_costs.hpp"
#include "datapath/h2d_host.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/platform/fingerprint.hpp"

namespace mgbench::bench {

namespace {

enum class Direction { h2d, d2h, bidir };
enum class Memory { pinned, pageable };

struct H2dParams {
  Direction direction;
  Memory memory;
  std::string numa;
  std::size_t words;
};

H2dParams h2d_params(const Params& p) {
  H2dParams h{p.choice<Direction>("direction", {{"h2d", Direction::h2d},
                                                {"d2h", Direction::d2h},
                                                {"bidir", Direction::bidir}}),
              p.choice<Memory>("memory",
                               {{"pinned", Memory::pinned}, {"pageable", Memory::pageable}}),
              p.text("numa"), 0};
  const auto bytes = p.integer("bytes");
  if (bytes < 16) throw UsageError("h2d needs bytes >= 16");
  h.words = static_cast<std::size_t>(bytes) / 4;
  return h;
}

// One rank's buffers: "up" is host -> device (h2d, bidir), "down" device -> host (d2h, bidir).
// The device side of each direction is a rotation of buffer sets (cache=cold: more than twice
// the L2 in all; hot: one set); the host side is one buffer, which the GPU's L2 never holds.
class H2dPoint final : public RankPoint {
 public:
  explicit H2dPoint(RankEnv& env) : env_(env), p_(h2d_params(*env.params)) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(env.device));
    bus_id_ = bus_id_of(env.device);
    gpu_node_ = gpu_numa_node(bus_id_);
    host_node_ = target_node(p_.numa, gpu_node_);
    const bool up = p_.direction != Direction::d2h, down = p_.direction != Direction::h2d;
    stride_ = (p_.words * 4 + kSetAlign - 1) / kSetAlign * kSetAlign;
    rotation_ = env.rotation(stride_ * ((up ? 1 : 0) + (down ? 1 : 0)));
    if (up) make_up();
    if (down) make_down();
    counter_ = DeviceBuffer(sizeof(unsigned long long));
    if (p_.memory != Memory::pinned) make_movers(env);
    MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }
  ~H2dPoint() override {
    if (fork_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(fork_));
    if (join_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(join_));
  }
  H2dPoint(const H2dPoint&) = delete;
  H2dPoint& operator=(const H2dPoint&) = delete;

  void enqueue() override {
    copy_set(next_set_);
    last_set_ = next_set_;
    next_set_ = (next_set_ + 1) % rotation_.sets;
  }

  // The destinations as the timed copies left them (the host one holds the last set's), then,
  // with several sets, every set copied once more and checked: device destinations by a
  // kernel, each device source through the host buffer. The counts are every rank's.
  Verification verify() override {
    std::uint64_t wrong = 0, checked = 0;
    std::exception_ptr error;
    try {
      count_wrong(wrong, checked);
      for (auto* mover : {up_mover_.get(), down_mover_.get()}) {
        if (mover != nullptr && !mover->error().empty()) throw EnvironmentError(mover->error());
      }
    } catch (...) {
      error = std::current_exception();
    }
    // Every rank reaches this exchange exactly once, whatever failed above.
    const std::vector<std::uint64_t> sums =
        env_.sum_over_ranks(error ? std::vector<std::uint64_t>{} : std::vector{wrong, checked});
    if (error) std::rethrow_exception(error);
    Verification v;
    v.details["checked"] = sums[1];
    v.details["wrong"] = sums[0];
    v.details["wrong_on_rank"] = wrong;
    if (sums[0] != 0) {
      v.ok = false;
      v.message = fmt::format("{} of {} copied words differ from the source pattern ({} on rank {})",
                              sums[0], sums[1], wrong, env_.rank);
    }
    return v;
  }

  Json rank_details() override {
    // The slot's maximum link (a link trained below it is what the verdict should catch).
    const HardwareLimits hw = env_.hardware_limits();
    const LinkLimit link = host_link_limit(hw);
    Json d{{"pci_bus_id", bus_id_},
           {"gpu_numa_node", gpu_node_},
           {"host_numa_node", host_node_},
           {"host_binding", up_host_ ? up_host_->binding() : down_host_->binding()},
           {"pcie_gen", hw.pcie_gen},
           {"pcie_width", hw.pcie_width},
           {"host_over_c2c", hw.host_over_c2c},
           {"peak_bytes", up_dev_.bytes() + down_dev_.bytes()},
           {"rotation", rotation_json(rotation_)}};
    if (link.GBps > 0) {
      d["metrics"] = Json{{"link_GBps", link.GBps * (p_.direction == Direction::bidir ? 2.0 : 1.0)}};
    }
    return d;
  }

 private:
  // This rank's wrong and checked words: the last set as timed, then every set copied again.
  void count_wrong(std::uint64_t& wrong, std::uint64_t& checked) {
    sync_streams();
    if (down_host_) wrong += host_wrong(last_set_);
    if (up_host_) wrong += device_wrong(last_set_);
    checked += p_.words * ((up_host_ ? 1 : 0) + (down_host_ ? 1 : 0));
    for (std::size_t set = 0; rotation_.sets > 1 && set < rotation_.sets; ++set) {
      copy_set(set);
      sync_streams();
      if (down_host_) wrong += host_wrong(set);
      if (up_host_) wrong += device_wrong(set);
      checked += p_.words * ((up_host_ ? 1 : 0) + (down_host_ ? 1 : 0));
    }
  }

  static constexpr std::uint32_t kUpSeed = 0x68326400u;
  static constexpr std::uint32_t kDownSeed = 0x64326800u;
  static constexpr std::size_t kSetAlign = 256;

  std::uint32_t rank_seed(std::uint32_t base) const {
    return base + static_cast<std::uint32_t>(env_.rank);
  }
  // Each device source set holds its own pattern, so a copy from the wrong set is caught.
  std::uint32_t down_seed(std::size_t set) const {
    return rank_seed(kDownSeed) + static_cast<std::uint32_t>(set) * 0x10000u;
  }
  char* up_dev(std::size_t set) const { return up_dev_.as<char>() + set * stride_; }
  char* down_dev(std::size_t set) const { return down_dev_.as<char>() + set * stride_; }

  // The host source: the pattern made on the device and copied over once; the device sets
  // poisoned.
  void make_up() {
    const std::size_t bytes = p_.words * 4;
    up_host_ = std::make_unique<HostBuffer>(bytes, host_node_, p_.memory == Memory::pinned,
                                            p_.numa == "remote");
    up_dev_ = DeviceBuffer(stride_ * rotation_.sets);
    MGBENCH_CUDA_CHECK(kernels::fill_pattern(up_dev_.as<std::uint32_t>(), p_.words,
                                             rank_seed(kUpSeed), env_.stream));
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(up_host_->get(), up_dev_.get(), bytes,
                                       cudaMemcpyDeviceToHost, env_.stream));
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(up_dev_.get(), 0xff, up_dev_.bytes(), env_.stream));
  }
  void make_down() {
    down_host_ = std::make_unique<HostBuffer>(p_.words * 4, host_node_,
                                              p_.memory == Memory::pinned, p_.numa == "remote");
    down_dev_ = DeviceBuffer(stride_ * rotation_.sets);
    for (std::size_t set = 0; set < rotation_.sets; ++set) {
      MGBENCH_CUDA_CHECK(kernels::fill_pattern(reinterpret_cast<std::uint32_t*>(down_dev(set)),
                                               p_.words, down_seed(set), env_.stream));
    }
  }
  void make_movers(const RankEnv& env) {
    // A gate that is never released gives up well before the group time-out.
    const double timeout_s =
        std::min(env.settings != nullptr ? env.settings->group_timeout_s : 600.0, 120.0);
    const std::size_t bytes = p_.words * 4;
    if (up_host_) {
      up_mover_ = std::make_unique<PageableMover>(env.device, bytes, cudaMemcpyHostToDevice,
                                                  timeout_s);
    }
    if (down_host_) {
      down_mover_ = std::make_unique<PageableMover>(env.device, bytes, cudaMemcpyDeviceToHost,
                                                    timeout_s);
    }
  }

  // One op on buffer set `set`: bidir runs device -> host on the second stream.
  void copy_set(std::size_t set) {
    if (down_host_ && up_host_) {
      MGBENCH_CUDA_CHECK(cudaEventRecord(fork_, env_.stream));
      MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.comm_stream, fork_, 0));
      copy_down(env_.comm_stream, set);
      MGBENCH_CUDA_CHECK(cudaEventRecord(join_, env_.comm_stream));
    } else if (down_host_) {
      copy_down(env_.stream, set);
    }
    if (up_host_) copy_up(env_.stream, set);
    if (down_host_ && up_host_) MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.stream, join_, 0));
  }
  void copy_up(cudaStream_t stream, std::size_t set) {
    if (up_mover_) return up_mover_->enqueue(stream, up_dev(set), up_host_->get());
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(up_dev(set), up_host_->get(), p_.words * 4,
                                       cudaMemcpyHostToDevice, stream));
  }
  void copy_down(cudaStream_t stream, std::size_t set) {
    if (down_mover_) return down_mover_->enqueue(stream, down_host_->get(), down_dev(set));
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(down_host_->get(), down_dev(set), p_.words * 4,
                                       cudaMemcpyDeviceToHost, stream));
  }

  void sync_streams() {
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.comm_stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }
  // Words of the host destination that differ from device source set `set`'s pattern.
  std::uint64_t host_wrong(std::size_t set) const {
    const auto* words = static_cast<const std::uint32_t*>(down_host_->get());
    const std::uint32_t seed = down_seed(set);
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < p_.words; ++i) {
      wrong += words[i] != kernels::pattern_word(i, seed) ? 1 : 0;
    }
    return wrong;
  }
  // Words of device destination set `set` that differ from the host source's pattern.
  std::uint64_t device_wrong(std::size_t set) {
    auto* counter = counter_.as<unsigned long long>();
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), env_.stream));
    auto* words = reinterpret_cast<std::uint32_t*>(up_dev(set));
    MGBENCH_CUDA_CHECK(kernels::count_pattern_mismatch(words, p_.words, rank_seed(kUpSeed),
                                                       counter, env_.stream));
    unsigned long long n = 0;
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(&n, counter, sizeof n, cudaMemcpyDeviceToHost, env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    return n;
  }

  RankEnv env_;
  H2dParams p_;
  std::string bus_id_;
  int gpu_node_ = -1, host_node_ = -1;
  std::size_t stride_ = 0;  // bytes between the device sets of the rotation
  Rotation rotation_;
  std::size_t next_set_ = 0, last_set_ = 0;
  std::unique_ptr<HostBuffer> up_host_, down_host_;
  DeviceBuffer up_dev_, down_dev_, counter_;
  std::unique_ptr<PageableMover> up_mover_, down_mover_;  // pageable memory only
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace

// Default timing device: the start gate starts every GPU's copy together, which the "all GPUs
// at once" figure needs, and at the default 1 GiB (about 20 ms over PCIe gen5) a launch costs
// nothing anyway; host and graph (pinned only) time what a loader that launches or captures
// its copies waits for. Default cache cold: the host side is never in the GPU's L2, but the
// device side of a copy smaller than L2 can be, so small copies rotate their device buffers
// (at the default sizes a single set already exceeds twice the L2: no extra memory).
// GB/s above the host link (PCIe gen x width) is flagged impossible.
RunnerOptions h2d_runner_options() {
  RunnerOptions options;
  options.default_timing = TimingMethod::device;
  options.default_cache = CacheMode::cold;
  options.limits = {LimitCheck{"GBps_per_gpu", LimitKind::host_link, "", "direction"}};
  return options;
}

}  // namespace mgbench::bench

namespace {
// How reports show h2d: GB/s per GPU per direction, memory and placement, the link rate beside
// it, and the verdict summary.
mgbench::Presentation h2d_presentation() {
  using namespace mgbench;
  return Presentation()
      .metric(MetricSpec("GBps_per_gpu", "GB/s per GPU", "GB/s")
                  .format(ValueFormat::fixed, 2)
                  .of_peak(PeakSpec::host_link("direction")))
      .metric(MetricSpec("GBps_aggregate", "aggregate GB/s", "GB/s")
                  .format(ValueFormat::fixed, 2)
                  .of_peak(PeakSpec::same_as("GBps_per_gpu")))
      .metric(MetricSpec("link_GBps", "PCIe link GB/s", "GB/s").format(ValueFormat::fixed, 1))
      .axis(AxisSpec("bytes", "copy size").format(ValueFormat::bytes).log2())
      .table(TableSpec()
                 .split_by({"direction"})
                 .sort_by({"memory", "numa", "bytes", "gpus"})
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::param("memory"))
                 .column(ColumnSpec::param("numa", "host memory"))
                 .column(ColumnSpec::param("bytes", "size").format(ValueFormat::bytes))
                 .column(ColumnSpec::params())
                 .column(ColumnSpec::metric("GBps_per_gpu", "GB/s/GPU").format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("GBps_aggregate", "GB/s total")
                             .format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("link_GBps", "link GB/s").format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::verification("wrong", "#wrong", "N/A"))
                 .tail())
      .chart(ChartSpec::scaling())
      .summary(SummarySpec("", "data path verdict",
                           "alone = 1 GPU; shared = per GPU with the group at once / alone; "
                           "link = alone / PCIe gen x width; NUMA = remote / local")
                   .column("gpus", "GPUs", ValueFormat::count)
                   .column("direction", "direction")
                   .column("memory", "memory")
                   .column("numa", "host memory")
                   .column("measured", "timing, cache")
                   .column("bytes", "size", ValueFormat::bytes)
                   .column("GBps_per_gpu", "GB/s/GPU", ValueFormat::fixed, 2)
                   .column("shared_ratio", "shared", ValueFormat::fixed, 2)
                   .column("link_efficiency", "of link", ValueFormat::fixed, 2)
                   .column("numa_ratio", "remote/local", ValueFormat::fixed, 2)
                   .column("verdict", "bottleneck"));
}
}  // namespace

MGBENCH_REGISTER_WORKLOAD(
    mgbench::Workload("h2d")
        .category(mgbench::WorkloadCategory::host_link)
        .summary("Host <-> device copy bandwidth per GPU (PCIe): directions, pinned and "
                 "pageable, local and remote NUMA node, alone and all GPUs at once")
        .formulas("Bytes moved per GPU = bytes (h2d, d2h) or 2 x bytes (bidir). GB/s per GPU = "
                  "bytes moved / t / 1e9 (t = slowest rank's median time per copy); aggregate "
                  "= GPUs x per GPU; link_GBps = PCIe gen x width rate (x2 for bidir).")
        .requirements("numa=remote needs a second NUMA node with memory (else waived); "
                      "timing=graph needs memory=pinned")
        .axis(mgbench::Axis::text("direction", {"h2d", "d2h", "bidir"})
                  .quick({"h2d", "d2h"})
                  .allowed({"h2d", "d2h", "bidir"})
                  .describe("h2d: host to device; d2h: device to host; bidir: both at once"))
        .axis(mgbench::Axis::text("memory", {"pinned", "pageable"})
                  .quick({"pinned"})
                  .allowed({"pinned", "pageable"})
                  .describe("pinned: page-locked host buffer; pageable: ordinary memory"))
        .axis(mgbench::Axis::text("numa", {"local", "remote"})
                  .quick({"local"})
                  .allowed({"local", "remote"})
                  .describe("host buffer on the GPU's NUMA node or on another node"))
        .axis(mgbench::Axis::size("bytes", {"1073741824"})
                  .quick({"268435456"})
                  .full({"67108864", "1073741824"})
                  .describe("bytes per copy"))
        .axis(mgbench::timing_axis("device"))
        .axis(mgbench::cache_axis("cold"))
        .expand(mgbench::bench::datapath::h2d_expand)
        .summarize(mgbench::bench::datapath::h2d_summary)
        .throughput("GBps_aggregate", "GB/s")
        .cost(mgbench::bench::h2d_cost)
        .present(h2d_presentation())
        .estimate_seconds_per_point(2.0)
        .runner(mgbench::bench::make_runner(
            [](mgbench::bench::RankEnv& env) -> std::unique_ptr<mgbench::bench::RankPoint> {
              return std::make_unique<mgbench::bench::H2dPoint>(env);
            },
            mgbench::bench::datapath::h2d_metrics, mgbench::bench::h2d_runner_options())));
