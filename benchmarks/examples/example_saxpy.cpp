// example_saxpy: the template workload. Copy this file to start a new one (docs/ARCHITECTURE.md,
// "Adding a workload"); it is compiled and tested in CI but is not part of mgbench's workloads.
//
// Measured, per op on each rank's own GPU: out = a * x + y on fp32 arrays of `bytes` (rounded
// down to 4-byte elements), a = 3, by the own triad kernel (kernels/datapath.hpp).
// Bytes moved per op = read x + read y + write out = 3 x 4 x elements.
// Formulas (t = the slowest rank's median seconds per op):
//   GB/s per GPU = bytes moved / t / 1e9;  aggregate = GPUs x per GPU.
// Verification on every point: x and y hold small integers, so every output is exact in fp32;
// `out` is poisoned (NaN) in setup, and after sampling a kernel compares every element with its
// expected value; any difference makes the point `wrong`.
// Profiles: quick = 256 MiB; standard = 256 MiB and 1 GiB; full = 64 MiB .. 2 GiB.
// Timing: default device. Cache: hot (one set of arrays; the default sizes are far beyond L2).
#include "example_saxpy.hpp"

#include <memory>

#include <fmt/format.h>

#include "datapath/datapath_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench::example {

std::uint64_t saxpy_elements(std::uint64_t bytes) {
  if (bytes < 4) throw UsageError("example_saxpy needs bytes >= 4 (one fp32 element)");
  return bytes / 4;
}

double saxpy_bytes_moved(std::uint64_t elements) { return 12.0 * static_cast<double>(elements); }

Json saxpy_metrics(const Params& params, int nranks, double seconds) {
  const auto bytes = static_cast<std::uint64_t>(params.integer("bytes"));
  const double per_gpu = datapath::gbps(saxpy_bytes_moved(saxpy_elements(bytes)), seconds);
  return Json{{"GBps_per_gpu", per_gpu}, {"GBps_aggregate", per_gpu * nranks}};
}

Verification saxpy_check(const float* out, std::uint64_t elements, std::uint32_t seed,
                         unsigned long long* counter, cudaStream_t stream) {
  MGBENCH_CUDA_CHECK(kernels::count_triad_mismatch(out, elements, seed, kSaxpyA, counter, stream));
  unsigned long long wrong = 0;
  MGBENCH_CUDA_CHECK(
      cudaMemcpyAsync(&wrong, counter, sizeof wrong, cudaMemcpyDeviceToHost, stream));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  Verification v;
  v.details["checked"] = elements;
  v.details["wrong"] = static_cast<std::uint64_t>(wrong);
  if (wrong != 0) {
    v.ok = false;
    v.message = fmt::format("{} of {} output elements differ from a * x + y", wrong, elements);
  }
  return v;
}

namespace {

// One rank's point. Constructor = setup (outside the timed region), enqueue() = the timed op,
// verify() = the check after sampling.
class SaxpyPoint final : public RankPoint {
 public:
  explicit SaxpyPoint(RankEnv& env)
      : env_(env), n_(saxpy_elements(static_cast<std::uint64_t>(env.params->integer("bytes")))),
        seed_(0x5a790000u + static_cast<std::uint32_t>(env.rank)),
        x_(n_ * 4), y_(n_ * 4), out_(n_ * 4), counter_(sizeof(unsigned long long)) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(env.device));
    MGBENCH_CUDA_CHECK(kernels::triad_fill(y_.as<float>(), x_.as<float>(), n_, seed_, env_.stream));
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(out_.get(), 0xff, out_.bytes(), env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }

  void enqueue() override {
    MGBENCH_CUDA_CHECK(kernels::triad(out_.as<float>(), y_.as<const float>(),
                                      x_.as<const float>(), kSaxpyA, n_, env_.stream));
  }

  Verification verify() override {
    return saxpy_check(out_.as<float>(), n_, seed_, counter_.as<unsigned long long>(), env_.stream);
  }

  Json rank_details() override { return Json{{"peak_bytes", 3 * out_.bytes()}}; }

 private:
  RankEnv env_;
  std::uint64_t n_;
  std::uint32_t seed_;
  DeviceBuffer x_, y_, out_, counter_;
};

RunnerOptions saxpy_options() {
  RunnerOptions options;
  options.limits = {{"GBps_per_gpu", LimitKind::hbm_traffic}};  // flagged above HBM's peak
  return options;
}

// The declaration: what `mgbench list` shows, the axes and their values per profile, how reports
// show the points, and the runner. Registered when the program starts.
MGBENCH_REGISTER_WORKLOAD(
    Workload("example_saxpy")
        .category(WorkloadCategory::memory)
        .summary("Template workload: out = a * x + y on fp32 in HBM, every GPU at once")
        .formulas("Bytes moved = 3 x 4 x elements (read x and y, write out). GB/s per GPU = "
                  "bytes moved / t / 1e9 (t = slowest rank's median time per op); aggregate = "
                  "GPUs x per GPU.")
        .axis(Axis::size("bytes", {"268435456", "1073741824"})
                  .quick({"268435456"})
                  .full({"67108864", "268435456", "1073741824", "2147483648"})
                  .describe("bytes of each array (rounded down to 4-byte elements)"))
        .axis(timing_axis("device"))
        .throughput("GBps_aggregate", "GB/s")
        .present(Presentation()
                     .metric(MetricSpec("GBps_per_gpu", "GB/s per GPU", "GB/s")
                                 .of_peak(PeakSpec::hbm()))
                     .metric(MetricSpec("GBps_aggregate", "aggregate GB/s", "GB/s")
                                 .of_peak(PeakSpec::same_as("GBps_per_gpu")))
                     .axis(AxisSpec("bytes", "array size").format(ValueFormat::bytes).log2()))
        .runner(make_runner(
            [](RankEnv& env) -> std::unique_ptr<RankPoint> {
              return std::make_unique<SaxpyPoint>(env);
            },
            saxpy_metrics, saxpy_options())));

}  // namespace
}  // namespace mgbench::bench::example
