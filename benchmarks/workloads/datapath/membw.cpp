// membw: HBM bandwidth of every GPU of the group at once, with buffers far larger than L2.
//
// Measured, per op on each rank's own buffers (arrays of `bytes`, rounded down to 4-byte words):
//   impl=copy    the own copy kernel (kernels/datapath.hpp): dst = src, 16-byte streaming loads
//                and stores, grid-stride with four packs per thread in flight, every SM busy.
//   impl=triad   the own triad kernel: a = b + 3 * c on fp32, the same vector scheme.
//   impl=memcpy  cudaMemcpyAsync device-to-device of one array (the driver's copy).
// Bytes are counted as read + write: copy and memcpy move 2 x bytes per op, triad 3 x bytes.
// Formulas (t = the slowest rank's median seconds per op):
//   GB/s per GPU = bytes moved / t / 1e9;  aggregate = GPUs x per GPU.
// impl=copy also times itself and cudaMemcpyAsync back to back on the same buffers right after
// its samples (median of 10 ops each, every rank together) and reports memcpy_GBps and
// copy_vs_memcpy = memcpy time / copy time: the own kernel's target on an H200 is >= 0.9.
// Verification on every point: sources hold a hashed word pattern (triad: small integers, so
// every result is exact in fp32), destinations are poisoned in setup, and after sampling a
// kernel compares every destination element with its expected value; any mismatch makes the
// point `wrong`.
// Profiles: quick = 1 GiB; standard = 256 MiB and 2 GiB; full = 256 MiB .. 4 GiB in x2 steps.
// Timing: default device. Cache: default cold: arrays whose sets (all arrays of one op) are
// smaller than twice L2 rotate through copies, each filled, used, and checked the same way;
// GB/s per GPU above HBM's traffic peak (bus width x memory clock) is flagged impossible.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "datapath/datapath_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "work_costs.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

constexpr float kTriadScalar = 3.0f;
constexpr int kMemcpyReferenceOps = 10;
constexpr std::size_t kWordsAlign = 64;  // sets start 256-byte aligned

enum class MembwImpl { copy, triad, memcpy };


class MembwPoint final : public RankPoint {
 public:
  explicit MembwPoint(RankEnv& env)
      : env_(env),
        impl_(env.params->choice<MembwImpl>("impl", {{"copy", MembwImpl::copy},
                                                     {"triad", MembwImpl::triad},
                                                     {"memcpy", MembwImpl::memcpy}})),
        words_(datapath::membw_words(static_cast<std::uint64_t>(env.params->integer("bytes")))),
        seed_(0x6d656d00u + static_cast<std::uint32_t>(env.rank)) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(env.device));
    stride_ = (words_ + kWordsAlign - 1) / kWordsAlign * kWordsAlign;
    const std::size_t arrays = impl_ == MembwImpl::triad ? 3 : 2;
    rotation_ = env.rotation(stride_ * 4 * arrays);
    const std::size_t bytes = stride_ * 4 * rotation_.sets;
    src_ = DeviceBuffer(bytes);
    dst_ = DeviceBuffer(bytes);
    if (impl_ == MembwImpl::triad) src2_ = DeviceBuffer(bytes);
    for (std::size_t set = 0; set < rotation_.sets; ++set) {
      if (impl_ == MembwImpl::triad) {
        MGBENCH_CUDA_CHECK(kernels::triad_fill(src_.as<float>() + set * stride_,
                                               src2_.as<float>() + set * stride_, words_, seed_,
                                               env_.stream));
      } else {
        MGBENCH_CUDA_CHECK(kernels::fill_pattern(src_.as<std::uint32_t>() + set * stride_, words_,
                                                 seed_, env_.stream));
      }
    }
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(dst_.get(), 0xff, bytes, env_.stream));
    counter_ = DeviceBuffer(sizeof(unsigned long long));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }

  void enqueue() override {
    enqueue_set(next_set_);
    next_set_ = (next_set_ + 1) % rotation_.sets;
  }

  // Every set of the rotation once more (so each one was written), then each checked.
  Verification verify() override {
    if (impl_ == MembwImpl::copy) time_memcpy_reference();  // collective: every rank
    Verification v;
    for (std::size_t set = 0; set < rotation_.sets; ++set) enqueue_set(set);
    unsigned long long wrong = 0;
    for (std::size_t set = 0; set < rotation_.sets; ++set) wrong += count_wrong(set);
    v.details["checked"] = static_cast<std::uint64_t>(words_ * rotation_.sets);
    v.details["wrong"] = static_cast<std::uint64_t>(wrong);
    if (wrong != 0) {
      v.ok = false;
      v.message = fmt::format("{} of {} destination words differ from the expected value", wrong,
                              words_);
    }
    return v;
  }

  Json rank_details() override {
    Json d{{"peak_bytes", src_.bytes() + src2_.bytes() + dst_.bytes()},
           {"rotation", rotation_json(rotation_)}};
    if (memcpy_s_ > 0) {
      const double copy_bytes = datapath::membw_bytes_moved("memcpy", words_);
      d["memcpy_reference_s"] = memcpy_s_;
      d["copy_reference_s"] = copy_s_;
      d["metrics"] = Json{{"memcpy_GBps", datapath::gbps(copy_bytes, memcpy_s_)},
                          {"copy_vs_memcpy", copy_s_ > 0 ? memcpy_s_ / copy_s_ : 0.0}};
    }
    return d;
  }

 private:
  void enqueue_set(std::size_t set) {
    const std::size_t at = set * stride_;
    switch (impl_) {
      case MembwImpl::copy:
        MGBENCH_CUDA_CHECK(kernels::copy_words(dst_.as<std::uint32_t>() + at,
                                               src_.as<std::uint32_t>() + at, words_, env_.stream));
        break;
      case MembwImpl::triad:
        MGBENCH_CUDA_CHECK(kernels::triad(dst_.as<float>() + at, src_.as<float>() + at,
                                          src2_.as<float>() + at, kTriadScalar, words_,
                                          env_.stream));
        break;
      case MembwImpl::memcpy: enqueue_memcpy(at); break;
    }
  }

  unsigned long long count_wrong(std::size_t set) {
    auto* counter = counter_.as<unsigned long long>();
    const std::size_t at = set * stride_;
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), env_.stream));
    if (impl_ == MembwImpl::triad) {
      MGBENCH_CUDA_CHECK(kernels::count_triad_mismatch(dst_.as<float>() + at, words_, seed_,
                                                       kTriadScalar, counter, env_.stream));
    } else {
      MGBENCH_CUDA_CHECK(kernels::count_pattern_mismatch(dst_.as<std::uint32_t>() + at, words_,
                                                         seed_, counter, env_.stream));
    }
    unsigned long long wrong = 0;
    MGBENCH_CUDA_CHECK(
        cudaMemcpyAsync(&wrong, counter, sizeof wrong, cudaMemcpyDeviceToHost, env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    return wrong;
  }

  void enqueue_memcpy(std::size_t at = 0) {
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(dst_.as<std::uint32_t>() + at, src_.as<std::uint32_t>() + at,
                                       words_ * 4, cudaMemcpyDeviceToDevice, env_.stream));
  }

  // The own copy and the driver's copy timed back to back on the same buffers (collective).
  void time_memcpy_reference() {
    try {
      copy_s_ = env_.collective_time([this] { enqueue(); }, kMemcpyReferenceOps);
      memcpy_s_ = env_.collective_time([this] { enqueue_memcpy(); }, kMemcpyReferenceOps);
    } catch (const std::exception& e) {
      env_.fail_group(std::string("membw memcpy reference: ") + e.what());
      throw;
    }
  }

  RankEnv env_;
  MembwImpl impl_;
  std::size_t words_;
  std::size_t stride_ = 0;  // words between the sets of the rotation
  Rotation rotation_;
  std::size_t next_set_ = 0;
  std::uint32_t seed_;
  DeviceBuffer src_, src2_, dst_, counter_;
  double memcpy_s_ = 0, copy_s_ = 0;
};

}  // namespace

RunnerOptions membw_runner_options() {
  RunnerOptions options;
  options.default_cache = CacheMode::cold;
  options.limits = {LimitCheck{"GBps_per_gpu", LimitKind::hbm_traffic}};
  return options;
}

}  // namespace mgbench::bench

namespace {
// How reports show membw: GB/s per GPU (read + write) per impl and size, the own copy beside
// the driver's memcpy.
mgbench::Presentation membw_presentation() {
  using namespace mgbench;
  return Presentation()
      .metric(MetricSpec("GBps_per_gpu", "GB/s per GPU (read + write)", "GB/s")
                  .format(ValueFormat::fixed, 1)
                  .of_peak(PeakSpec::hbm()))
      .metric(MetricSpec("GBps_aggregate", "aggregate GB/s", "GB/s")
                  .format(ValueFormat::fixed, 1)
                  .of_peak(PeakSpec::same_as("GBps_per_gpu")))
      .metric(MetricSpec("memcpy_GBps", "memcpy GB/s (same point)", "GB/s")
                  .format(ValueFormat::fixed, 1))
      .metric(MetricSpec("copy_vs_memcpy", "copy / memcpy").format(ValueFormat::fixed, 3))
      .axis(AxisSpec("bytes", "array size").format(ValueFormat::bytes).log2())
      .table(TableSpec()
                 .sort_by({"impl", "bytes", "gpus"})
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::param("impl"))
                 .column(ColumnSpec::param("bytes", "array size").format(ValueFormat::bytes))
                 .column(ColumnSpec::median_time())
                 .column(ColumnSpec::metric("GBps_per_gpu", "GB/s/GPU").format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::metric("GBps_aggregate", "GB/s total")
                             .format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::metric("memcpy_GBps", "memcpy GB/s").format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::metric("copy_vs_memcpy", "copy/memcpy")
                             .format(ValueFormat::fixed, 3))
                 .column(ColumnSpec::verification("wrong", "#wrong", "N/A"))
                 .tail())
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("bytes", "GBps_per_gpu")
                 .titled("HBM GB/s per GPU vs array size")
                 .gpus_dashed());
}
}  // namespace

MGBENCH_REGISTER_WORKLOAD(
    mgbench::Workload("membw")
        .category(mgbench::WorkloadCategory::memory)
        .summary("HBM bandwidth per GPU: own copy and triad kernels beside cudaMemcpyAsync "
                 "device-to-device, buffers larger than L2")
        .formulas("Bytes moved = read + write: copy and memcpy 2 x bytes, triad (a = b + s*c) "
                  "3 x bytes. GB/s per GPU = bytes moved / t / 1e9 (t = slowest rank's median "
                  "time per op); aggregate = GPUs x per GPU. impl=copy also reports memcpy_GBps "
                  "(cudaMemcpyAsync timed on the same buffers) and copy_vs_memcpy.")
        .requirements("3 arrays of `bytes` per GPU for triad, 2 for copy and memcpy")
        .axis(mgbench::Axis::text("impl", {"copy", "triad", "memcpy"})
                  .allowed({"copy", "triad", "memcpy"})
                  .describe("copy: own 16-byte copy kernel; triad: own a = b + 3c; memcpy: "
                            "cudaMemcpyAsync device-to-device"))
        .axis(mgbench::Axis::size("bytes", {"268435456", "2147483648"})
                  .quick({"1073741824"})
                  .full({"268435456", "536870912", "1073741824", "2147483648", "4294967296"})
                  .describe("bytes of each array (rounded down to 4-byte words)"))
        .axis(mgbench::timing_axis("device"))
        .axis(mgbench::cache_axis("cold"))
        .throughput("GBps_aggregate", "GB/s")
        .cost(mgbench::bench::membw_cost)
        .present(membw_presentation())
        .estimate_seconds_per_point(1.5)
        .runner(mgbench::bench::make_runner(
            [](mgbench::bench::RankEnv& env) -> std::unique_ptr<mgbench::bench::RankPoint> {
              return std::make_unique<mgbench::bench::MembwPoint>(env);
            },
            mgbench::bench::datapath::membw_metrics, mgbench::bench::membw_runner_options())));
