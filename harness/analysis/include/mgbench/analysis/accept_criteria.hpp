#pragma once
// The acceptance criteria of `mgbench accept`: defaults a beginner can trust, overridable by a
// small file of `name = value` lines (docs/ACCEPT.md, "Criteria"). The criteria used are stored
// with the result and printed with the checklist.
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

// What a broken criterion makes its checklist line.
enum class Severity { warn, fail };

struct AcceptCriteria {
  Severity doctor_warnings = Severity::warn;       // a warning of the doctor's checks
  Severity below_expected_range = Severity::fail;  // a figure below the GPU model's usual range
  double gemm_scaling_min = 0.90;        // scaling efficiency at N GPUs, compute workloads (GEMM)
  double train_scaling_min = 0.80;       // the same, training workloads (the training step)
  double p2p_pair_min = 0.80;            // slowest GPU pair against the median pair
  Severity throttling = Severity::fail;  // clock slowdown other than the power cap
  double soak_degradation_max = 0.03;    // the soak's last minute against its first steady one
  double soak_gpu_spread_max = 0.05;     // the soak's slowest GPU against its fastest
  Severity health_events = Severity::fail;  // XID, new uncorrected ECC, row-remapping trouble
};

// The criteria's names, in the order the file format documents and results store them.
const std::vector<std::string>& accept_criterion_names();
// Each criterion as (name, value as the file writes it: "90 %", "fail").
std::vector<std::pair<std::string, std::string>> accept_criteria_lines(const AcceptCriteria& c);

// Parses a criteria file's text: one `name = value` per line, `#` starts a comment, blank lines
// are ignored; percentages carry a % sign (0 to 100), severities are `warn` or `fail`; names not
// given keep their defaults. Throws UsageError "SOURCE line N: ..." for an unknown or repeated
// name, a missing `=` or a bad value.
AcceptCriteria parse_accept_criteria(const std::string& text, const std::string& source);
// Reads and parses the file (at most 64 KiB). Throws UsageError naming it.
AcceptCriteria read_accept_criteria(const std::string& path);

void to_json(Json& j, const AcceptCriteria& c);
void from_json(const Json& j, AcceptCriteria& c);  // throws UsageError naming the bad entry

}  // namespace mgbench
