#pragma once
// How a point is measured, recorded with it: the timing method, the cache mode and the
// rotation of buffer sets that makes the cache cold.
//
//   timing=device  the ops of a sample are queued behind the start gate and timed on the GPU:
//                  launch cost and launch skew stay out (the time the GPU needs).
//   timing=host    nccl-tests' method: the host launches the ops back to back, one event pair
//                  around them; launch cost is included (what an eagerly launching framework
//                  waits for).
//   timing=graph   the ops of a sample captured once in a CUDA graph, the graph launched and
//                  timed (nccl-tests -G; what a graph-captured training step waits for).
//   cache=cold     every op uses the next of a rotation of buffer sets whose total exceeds
//                  twice the L2 cache (nvbench's cold-cache idea), so operands come from HBM.
//   cache=hot      the same buffers every op.
#include <cstddef>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/measured.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench {

// The point's choice: its "timing" / "cache" parameter when present, else `fallback`.
TimingMethod timing_of(const Params& params, TimingMethod fallback);
CacheMode cache_of(const Params& params, CacheMode fallback);

// Axis values a workload declares (strings as on the command line).
std::vector<std::string> timing_names();
std::vector<std::string> cache_names();
// The "timing" and "cache" axes of a workload: `standard` by default, `allowed` accepted
// (a method the workload cannot honour is left out of `allowed`: the planner refuses it).
Axis timing_axis(const std::string& standard, std::vector<std::string> allowed = timing_names());
Axis cache_axis(const std::string& standard, std::vector<std::string> allowed = cache_names());
// Each point once per chosen timing and cache value (for a workload's own ExpandFn; axes
// absent from `values` add nothing).
std::vector<Params> with_measurement_axes(const std::vector<Params>& points,
                                          const AxisValues& values);

// The buffer sets one point cycles through.
struct Rotation {
  std::size_t sets = 1;         // distinct buffer sets, used in turn by consecutive ops
  std::size_t set_bytes = 0;    // bytes of one set (all operands of one op)
  std::size_t total_bytes = 0;  // sets x set_bytes: what the rotation costs in memory
  bool exceeds_l2 = false;      // total_bytes > 2 x L2 (false when L2 is unknown)
  std::string limited_by;       // "", "memory" or "set cap" when fewer sets than wanted
};

// Most buffer sets a rotation uses (bounds verification and bookkeeping for tiny messages).
inline constexpr std::size_t kMaxRotationSets = 4096;

// cold: the fewest sets whose total exceeds 2 x l2_bytes, at most `max_sets` and at most
// what `budget_bytes` holds (always at least one set); hot, or an unknown L2 (0): one set.
Rotation plan_rotation(CacheMode mode, std::size_t set_bytes, std::size_t l2_bytes,
                       std::size_t budget_bytes, std::size_t max_sets = kMaxRotationSets);
Json rotation_json(const Rotation& rotation);

}  // namespace mgbench
