// Where a series' largest GPU count lost its time: the straggler from per-rank times and per-GPU
// telemetry, the loss split, the binding part (verdict_detail.hpp); and the number words.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mgbench/model/point_view.hpp"
#include "mgbench/model/stats.hpp"
#include "verdict_detail.hpp"

namespace mgbench::verdict_detail {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string percent(double fraction) { return fixed(100.0 * fraction, 0) + " %"; }

std::string number(double value) {
  const double a = std::fabs(value);
  if (a >= 1000) return fixed(value, 0);
  if (a >= 100) return fixed(value, 1);
  if (a >= 1) return fixed(value, 2);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

std::string duration(double seconds, double scale) {
  const double a = std::fabs(scale > 0 ? scale : seconds);
  if (a >= 1) return fixed(seconds, 2) + " s";
  if (a >= 1e-3) return fixed(seconds * 1e3, 2) + " ms";
  return fixed(seconds * 1e6, std::fabs(seconds) >= 1e-5 ? 0 : 1) + " us";
}

std::string gpus_text(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

std::string join_words(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

std::optional<double> metric(const PointResult* point, const char* name) {
  if (point == nullptr) return std::nullopt;
  return metric_number(*point, name);
}

namespace {

// Each rank's own work: its compute without communication when every rank records one, else its
// median time; empty when a rank has neither.
std::vector<double> rank_work(const PointResult& p) {
  std::vector<double> work;
  for (std::size_t i = 0; i < p.ranks.size(); ++i) {
    const auto own = rank_metric(p, i, "compute_only_s");
    if (!own || !(*own > 0)) break;
    work.push_back(*own);
  }
  if (work.size() == p.ranks.size()) return work;
  work.clear();
  for (const RankTiming& r : p.ranks) {
    if (!(r.median_s > 0)) return {};
    work.push_back(r.median_s);
  }
  return work;
}

// "power-capped at 500 W (default 700 W), SM clock 1320 MHz against 1550 MHz on the others".
std::string straggler_cause(const PointResult& p, int device, int node, const Json& environment) {
  std::vector<std::string> parts;
  if (node == 0) {  // the environment describes the first node's GPUs
    const PowerLimit limit = power_limit(environment, device);
    if (limit.enforced_w && limit.default_w && *limit.enforced_w < *limit.default_w - 1) {
      parts.push_back("power-capped at " + fixed(*limit.enforced_w, 0) + " W (default " +
                      fixed(*limit.default_w, 0) + " W)");
    }
  }
  for (auto& part : telemetry_causes(p, device, node)) parts.push_back(std::move(part));
  return join_words(parts);
}

}  // namespace

std::vector<std::string> telemetry_causes(const PointResult& p, int device, int node) {
  std::vector<std::string> parts;
  const std::vector<GpuTelemetry> gpus = gpu_telemetry(p);
  const GpuTelemetry* mine = nullptr;
  std::vector<double> others;
  for (const GpuTelemetry& g : gpus) {
    if (g.device == device && g.node == node) {
      mine = &g;
    } else if (g.sm_clock_mhz.median) {
      others.push_back(*g.sm_clock_mhz.median);
    }
  }
  if (mine == nullptr) return parts;
  if (held_by_temperature(*mine)) {
    parts.push_back("held by temperature (up to " + fixed(mine->temp_c.max.value_or(0), 0) +
                    " °C)");
  }
  if (mine->sm_clock_mhz.median && !others.empty()) {
    const double typical = median_of(others);
    if (*mine->sm_clock_mhz.median < 0.97 * typical) {
      parts.push_back("SM clock " + fixed(*mine->sm_clock_mhz.median, 0) + " MHz against " +
                      fixed(typical, 0) + " MHz on the others");
    }
  }
  return parts;
}

const ScalingRow& best_row(const ScalingSeries& series) {
  return *std::max_element(series.rows.begin(), series.rows.end(),
                           [](const ScalingRow& a, const ScalingRow& b) {
                             return a.throughput < b.throughput;
                           });
}

bool held_by_temperature(const GpuTelemetry& g) {
  return std::any_of(g.throttle_reasons.begin(), g.throttle_reasons.end(), [](const auto& r) {
    return r.find("thermal") != std::string::npos || r.find("hw_slowdown") != std::string::npos;
  });
}

std::optional<Straggler> find_straggler(const SeriesPoints& sp) {
  if (sp.last == nullptr || sp.series.rows.size() < 2) return std::nullopt;
  const PointResult& p = *sp.last;
  const std::vector<double> work = rank_work(p);
  if (work.size() < 3 || work.size() != p.ranks.size()) return std::nullopt;
  const auto slowest = static_cast<std::size_t>(
      std::max_element(work.begin(), work.end()) - work.begin());
  const double typical = median_of(work);
  double next = 0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    if (i != slowest) next = std::max(next, work[i]);
  }
  if (!(typical > 0) || !(work[slowest] / typical - 1.0 > kStragglerExcess)) return std::nullopt;
  Straggler s;
  s.rank = p.ranks[slowest].rank;
  s.device = p.ranks[slowest].device;
  s.excess = work[slowest] / typical - 1.0;
  s.saved_s = work[slowest] - next;
  const int per_node = std::max(1, p.placement.gpus_per_node);
  const int node = p.placement.nodes > 1 ? s.rank / per_node : 0;
  if (p.placement.nodes > 1 && node < static_cast<int>(p.placement.hosts.size())) {
    s.host = p.placement.hosts[static_cast<std::size_t>(node)];
  }
  s.cause = straggler_cause(p, s.device, node, sp.environment);
  const PointResult* base = sp.base;
  s.baseline_gpu = base != nullptr && base->gpus == 1 && base->devices.size() == 1 &&
                   base->devices.front() == s.device && node == 0;
  const ScalingRow& last = sp.series.rows.back();
  const double t = metric(sp.last, "step_time_s").value_or(last.time_s);
  if (s.baseline_gpu) {
    s.efficiency_without = last.efficiency / (1.0 + s.excess);  // against a typical GPU
  } else if (t > s.saved_s) {
    s.efficiency_without = last.efficiency * t / (t - s.saved_s);
  }
  return s;
}

std::optional<LossSplit> split_loss(const SeriesPoints& sp, const std::optional<Straggler>& s) {
  const ScalingSeries& series = sp.series;
  if (sp.last == nullptr || sp.base == nullptr || series.rows.size() < 2) return std::nullopt;
  const ScalingRow& b = series.rows.front();
  const ScalingRow& n = series.rows.back();
  // Per-GPU work fixed (weak): ideally every part stays as on the baseline; global work fixed
  // (strong): every part shrinks by b / N.
  const double k = series.mode == "strong" ? static_cast<double>(b.gpus) / n.gpus : 1.0;
  LossSplit loss;
  loss.time_s = metric(sp.last, "step_time_s").value_or(n.time_s);
  const double base_time = metric(sp.base, "step_time_s").value_or(b.time_s);
  if (!(loss.time_s > 0) || !(base_time > 0)) return std::nullopt;
  loss.lost_s = loss.time_s - base_time * k;
  if (!(loss.lost_s > 0)) return std::nullopt;
  loss.straggler_s = s && !s->baseline_gpu ? s->saved_s : 0.0;
  const auto exposed_n = metric(sp.last, "exposed_comm_s"), exposed_b = metric(sp.base, "exposed_comm_s");
  const auto compute_n = metric(sp.last, "compute_only_s"), compute_b = metric(sp.base, "compute_only_s");
  if (exposed_n && exposed_b && compute_n && compute_b) {
    // A straggler's excess shows on the other ranks as time waiting in the all-reduce.
    loss.comm_s = std::max(0.0, *exposed_n - *exposed_b * k - loss.straggler_s);
    loss.compute_s = std::max(0.0, *compute_n - *compute_b * k);
  } else {
    const std::vector<double> work = rank_work(*sp.last);
    if (work.empty()) return std::nullopt;
    loss.compute_s = std::max(0.0, median_of(work) - base_time * k);
  }
  loss.rest_s = std::max(0.0, loss.lost_s - loss.comm_s - loss.compute_s - loss.straggler_s);
  return loss;
}

std::string binding_of(const SeriesPoints& sp, const RunVerdict& v) {
  if (v.straggler && v.straggler->baseline_gpu) return kBindingStraggler;  // E hides it
  if (v.efficiency >= 1.0 - kPartLossTolerance) return "";
  const bool network = v.losing_part == kLosingInterNode;
  if (!v.loss) {
    if (network) return kBindingNetwork;
    return v.straggler ? kBindingStraggler : "";
  }
  const LossSplit& l = *v.loss;
  const double biggest = std::max({l.comm_s, l.compute_s, l.straggler_s, l.rest_s});
  if (l.straggler_s == biggest) return kBindingStraggler;
  if (l.comm_s == biggest) return network ? kBindingNetwork : kBindingCommunication;
  if (l.compute_s == biggest) {
    const bool strong_batch =
        sp.series.mode == "strong" && sp.series.params.contains("global_batch");
    return strong_batch ? kBindingSmallBatch : kBindingCompute;
  }
  return network ? kBindingNetwork : kBindingOther;
}

}  // namespace mgbench::verdict_detail
