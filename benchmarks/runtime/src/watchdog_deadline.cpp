// The NCCL watchdog's deadline per window and the ops per timed sample (see
// watchdog_deadline.hpp).
#include "mgbench/bench/watchdog_deadline.hpp"

#include <algorithm>
#include <cmath>

namespace mgbench::bench {

namespace {
constexpr double kWindowSlack = 10.0;  // x the expected window
constexpr double kFloorS = 5.0;        // fixed slack: host scheduling, NCCL's lazy set-up
constexpr double kShareOfGroupTimeout = 0.25;
constexpr double kMinimumS = 1.0;
}  // namespace

double watchdog_deadline_s(const RunSettings& settings, double expected_window_s) {
  const double wanted = settings.gate_timeout_s +
                        kWindowSlack * std::max(0.0, expected_window_s) + kFloorS;
  const double cap = kShareOfGroupTimeout * settings.group_timeout_s;
  return std::max(std::min(wanted, cap), std::min(kMinimumS, cap));
}

int ops_per_sample(const RunSettings& settings, double op_s, bool uses_nccl) {
  const int cap = uses_nccl ? kMaxNcclOpsPerSample : kMaxOpsPerSample;
  const double wanted = std::ceil(settings.target_sample_s / std::max(op_s, 1e-9));
  return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(cap)));
}

}  // namespace mgbench::bench
