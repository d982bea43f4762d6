#include "mgbench/run/progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mgbench/model/workload.hpp"

namespace mgbench {

double progress_eta_s(double elapsed_s, std::size_t done, std::size_t left, double estimate_s) {
  if (done == 0 || elapsed_s <= 0) return estimate_s;
  return elapsed_s / static_cast<double>(done) * static_cast<double>(left);
}

std::string headline_figure(const PointResult& point) {
  if (point.status != Status::ok) return to_string(point.status);
  const Workload* workload = find_workload(point.workload);
  if (!workload || workload->throughput_metric().empty()) return "";
  const auto it = point.metrics.find(workload->throughput_metric());
  if (it == point.metrics.end() || !it->is_number()) return "";
  const double value = it->get<double>();
  if (!std::isfinite(value)) return "";
  return fmt::format("{:.4g} {}", value, workload->throughput_unit());
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min", (s + 30) / 60);
  const long minutes = (s + 30) / 60;
  return fmt::format("{} h {:02} min", minutes / 60, minutes % 60);
}

std::string progress_line(const ProgressState& state) {
  std::string line = fmt::format("[{}/{}] {}", state.position, state.total, state.what);
  if (state.eta_s >= 0) line += "  ETA " + format_duration(state.eta_s);
  if (!state.last_figure.empty()) line += "  last " + state.last_figure;
  return line;
}

}  // namespace mgbench
