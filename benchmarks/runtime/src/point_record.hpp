#pragma once
// What the executor writes into a finished point beyond its samples: where its ranks ran, how
// it was measured, whether its median is uncertain, and its impossible values. Also the check
// of the stop rule's criteria.
#include <string>
#include <vector>

#include "mgbench/bench/executor.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench::bench {

// Processes on nodes the plan did not name (srun): the nodes the ranks reported.
void record_hosts(PointResult& result, const std::vector<Json>& details);
// How the point was measured, and whether its median is uncertain (point_quality.hpp).
void record_method_and_noise(PointResult& result, const RankEnv& env, double max_noise);
// The point's time per op with each method it was timed with (`second_s` > 0: the other
// method's), and its values impossible for the group of `devices`.
void add_method_metrics(PointResult& result, double second_s,
                        const std::vector<LimitCheck>& limits, const std::vector<int>& devices);
// Whether `rank` samples telemetry around a point (the GPUs of the spec: with processes, those
// of its node): rank 0 of threads; with processes each node's leader, which alone has an
// observer.
bool observes_telemetry(const GroupContext& ctx, int rank);
// The telemetry of the point that ends on `rank`: its observer's summary, or with processes
// (a collective then, named `step`, when telemetry is on) every node's, merged on rank 0. Null
// on the other ranks.
Json end_point_telemetry(const GroupContext& ctx, int rank, const std::string& step);
// The stop rule on rank 0 refuses criteria no option parser should let through (a NaN would
// never converge); like any rank's throw, this ends every rank of the group.
void check_stopping(const StoppingCriteria& c);

}  // namespace mgbench::bench
