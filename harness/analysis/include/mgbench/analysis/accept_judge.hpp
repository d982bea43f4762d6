#pragma once
// The acceptance checklist's items, judged from what each stage recorded: the doctor's checks,
// the communication and scaling sweeps' results (points, % of peak and expected ranges, scaling
// series and their verdicts, telemetry) and the soak's verdict. Pure functions over the results
// model; the items' texts are message keys (accept.hpp). The items and their criteria are listed
// in docs/ACCEPT.md.
#include <map>
#include <string>
#include <vector>

#include "mgbench/analysis/accept.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench {

// The stage's workloads and the part each plays (its declared category; in test mode the
// selftest workload stands in for one).
using AcceptRoles = std::map<std::string, WorkloadCategory>;

// Stage 1: the doctor's checks (doctor_to_json's shape) as one item, a detail per check that
// warns or fails. A doctor that could not run is an item that fails.
AcceptItem judge_configuration(const Json& doctor, const AcceptCriteria& c);

// Stage 2: every point ran and verified; every GPU pair reaches its peer (points waived for
// want of peer access fail where the doctor's checks, `doctor`, found peer access, and warn
// where they did not); the slowest pair of the p2p matrix against the median pair; each
// collective within its expected range; no throttling other than the power cap.
std::vector<AcceptItem> judge_communication(const RunResult& run, const AcceptCriteria& c,
                                            const AcceptRoles& roles, const Json& doctor);

// Stage 3: every point ran and verified; each workload within its expected range; the scaling
// efficiency of compute and training workloads at the largest GPU count; no throttling other
// than the power cap.
std::vector<AcceptItem> judge_scaling(const RunResult& run, const AcceptCriteria& c,
                                      const AcceptRoles& roles);

// Stage 4: the soak's verdict, its degradation, and its health events (XID, ECC, row remapping).
std::vector<AcceptItem> judge_soak(const RunResult& run, const AcceptCriteria& c);

// The shared items of a measuring stage: every point ran and verified ("runs"), each workload
// within its expected range ("range"), no throttling other than the power cap ("throttle").
AcceptItem judge_runs(const RunResult& run, const std::string& stage);
AcceptItem judge_range(const RunResult& run, const std::string& workload, const std::string& stage,
                       const AcceptCriteria& c);
AcceptItem judge_throttle(const RunResult& run, const std::string& stage, const AcceptCriteria& c);

// Whether a failed item makes the stages after it meaningless: the configuration, or a point
// that did not run or verify.
bool accept_stops_after(const std::vector<AcceptItem>& items);

// The best headline figure of each workload at each GPU count, with its share of the peak,
// scaling efficiency, hottest GPU, mean power and peak memory.
std::vector<AcceptFigure> accept_figures(const RunResult& run, const std::string& stage);

// "gemm dtype=bf16 size=4096" for a point (a detail's subject).
std::string accept_point_label(const PointResult& point);

}  // namespace mgbench
