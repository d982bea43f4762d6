#pragma once
// Helpers shared by the GPU and multi-GPU tests: run a registered workload in this process on
// given devices and collect what it reports, the settings the tests run it with, and the
// CUDA device queries the multi-GPU tests need.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mgbench/model/group.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"  // skip_test

namespace mgbench::test {

// Captures every result a workload reports.
class CapturingSink : public PointSink {
 public:
  void point_started(std::size_t) override {}
  void point_finished(const PointResult& result) override { results.push_back(result); }
  std::vector<PointResult> results;
};

// Quick settings for the gemm and train_step tests: 3 samples, 0.01 s minimum, 0.5 s maximum,
// max noise 0.5, 0.01 s warm-up, no telemetry, profile "quick", group timeout 120 s.
RunSettings fast_settings();

// Settings for the all-reduce tests: 3 samples, no minimum time, 0.05 s maximum, 0.002 s
// warm-up, no telemetry, group timeout 60 s (everything else the RunSettings defaults).
RunSettings allreduce_settings();

// Runs `points` (indexed 0..n-1) of the registered `workload` on `devices` (rank order) in this
// process and returns the results it reported; REQUIREs that the workload exists. The group and
// gate time-outs of `settings` are stretched by gpu_time_scale().
std::vector<PointResult> run_workload(const std::string& workload, const std::vector<int>& devices,
                                      const std::vector<Params>& points,
                                      const RunSettings& settings = fast_settings());
// run_workload("allreduce", devices, points, allreduce_settings()).
std::vector<PointResult> run_allreduce(const std::vector<int>& devices,
                                       const std::vector<Params>& points);

// All-reduce points: for each dtype, `counts` elements (as bytes), the given impl, in-place and
// out-of-place, and each of `algos` (none: the workload's default), through the workload's own
// expansion.
std::vector<Params> allreduce_points(const std::vector<std::string>& dtypes,
                                     const std::vector<std::uint64_t>& counts,
                                     const std::string& impl,
                                     const std::vector<std::string>& algos);

// Points of the registered collective `workload` for a group of `gpus`, through its own expansion:
// `bytes`, every dtype (fp32, bf16, fp16, int32), in and out of place where it has both, root 0,
// NCCL's own algorithm and protocol, timing=host, cache=hot; `extra` replaces any of these axes.
std::vector<Params> collective_points(const std::string& workload, int gpus,
                                      const std::vector<std::uint64_t>& bytes,
                                      const AxisValues& extra = {});

// Number of visible CUDA devices (0 when the query fails).
int cuda_device_count();
// Ordinals 0..n-1.
std::vector<int> first_devices(int n);
// True when every ordered pair of distinct devices can access each other's memory.
bool all_pairs_have_peer_access(const std::vector<int>& devices);

// Whether CUDA device `device` has an active primary context in this process (the driver's
// cuDevicePrimaryCtxGetState through dlopen; the tests link only the static runtime).
// REQUIREs that the driver answers.
bool primary_context_active(int device);

}  // namespace mgbench::test
