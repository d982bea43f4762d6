// The acceptance items every stage shares (configuration, points that ran, expected ranges,
// throttling), the early-stop rule and the figures table. See accept_judge.hpp.
#include "mgbench/analysis/accept_judge.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "mgbench/analysis/soak_analysis.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/model/presentation.hpp"
#include "accept_judge_detail.hpp"

namespace mgbench {
namespace {

using accept_detail::add_detail;
using accept_detail::make_item;
using accept_detail::percent;

std::string num(double v) { return fmt::format("{:.4g}", v); }

// "512 TFLOP/s (52.0 % of peak)", or the figure alone where its peak is unknown.
AcceptText value_text(double value, const std::string& unit, const PeakShare* share) {
  return share != nullptr && share->peak > 0
             ? accept_text("measured.value_peak", {num(value), unit, percent(share->fraction())})
             : accept_text("measured.value", {num(value), unit});
}

AcceptStatus from_severity(Severity s) {
  return s == Severity::fail ? AcceptStatus::fail : AcceptStatus::warn;
}

std::string unit_of(const RunResult& run, const std::string& workload, const std::string& metric) {
  const Presentation p = presentation_for(run, workload);
  const MetricSpec* spec = p.find_metric(metric);
  return spec != nullptr ? spec->unit : "";
}

const PointResult* point_at(const RunResult& run, std::size_t index) {
  for (const auto& p : run.points) {
    if (p.index == index) return &p;
  }
  return nullptr;
}

// The worst share of `workload` against the low end of its expected range (lowest value / low).
const PeakShare* worst_ranged_share(const RunResult& run, const std::string& workload) {
  const PeakShare* worst = nullptr;
  for (const auto& s : run.peaks.shares) {
    const PointResult* p = point_at(run, s.point);
    if (p == nullptr || p->workload != workload || !s.has_range() || s.low <= 0) continue;
    if (worst == nullptr || s.value / s.low < worst->value / worst->low) worst = &s;
  }
  return worst;
}

// The best ok point of `workload` by its headline metric (nullptr when none).
const PointResult* best_point(const RunResult& run, const std::string& workload,
                              const std::string& metric, int gpus) {
  const PointResult* best = nullptr;
  for (const auto& p : run.points) {
    if (p.workload != workload || p.status != Status::ok || (gpus > 0 && p.gpus != gpus)) continue;
    if (!p.metrics.contains(metric) || !p.metrics[metric].is_number()) continue;
    if (best == nullptr || p.metrics[metric].get<double>() > best->metrics[metric].get<double>()) {
      best = &p;
    }
  }
  return best;
}

}  // namespace

std::string accept_point_label(const PointResult& point) {
  std::string label = point.workload;
  for (const auto& [key, value] : point.params) {
    if (key == "timing" || key == "cache") continue;
    label += " " + key + "=" + value.str();
  }
  return one_line(label) + fmt::format(" ({} GPU{})", point.gpus, point.gpus == 1 ? "" : "s");
}

AcceptItem judge_configuration(const Json& doctor, const AcceptCriteria& c) {
  AcceptItem item =
      make_item("doctor", "configuration",
                accept_text(c.doctor_warnings == Severity::fail ? "criterion.doctor_strict"
                                                                : "criterion.doctor"));
  const Json checks = doctor.is_object() ? doctor.value("checks", Json::array()) : Json();
  if (!checks.is_array() || checks.empty()) {
    item.status = AcceptStatus::fail;
    item.measured = accept_text("measured.doctor_missing");
    item.cause = accept_text("cause.doctor_missing");
    item.next = accept_text("next.doctor_missing");
    return item;
  }
  int pass = 0, warn = 0, fail = 0, skip = 0;
  for (const Json& check : checks) {
    if (!check.is_object()) continue;
    const std::string status = check.value("status", "skip");
    const std::string name = one_line(check.value("name", "?"));
    pass += status == "pass";
    warn += status == "warn";
    fail += status == "fail";
    skip += status == "skip";
    if (status != "warn" && status != "fail") continue;
    add_detail(item,
               AcceptDetail{status == "fail" ? AcceptStatus::fail : AcceptStatus::warn, name,
                            one_line(check.value("finding", "")), accept_text("doctor." + name),
                            accept_text("doctor." + name + ".next")});
  }
  item.measured = accept_text("measured.doctor", {std::to_string(pass), std::to_string(warn),
                                                  std::to_string(fail), std::to_string(skip)});
  item.status = fail > 0   ? AcceptStatus::fail
                : warn > 0 ? from_severity(c.doctor_warnings)
                           : AcceptStatus::pass;
  if (item.status != AcceptStatus::pass) {
    item.cause = accept_text("cause.doctor");
    item.next = accept_text("next.doctor");
  }
  return item;
}

AcceptItem judge_runs(const RunResult& run, const std::string& stage) {
  AcceptItem item = make_item("runs", stage, accept_text("criterion.runs"));
  std::size_t ok = 0, counted = 0;
  for (const auto& p : run.points) {
    if (p.status == Status::waived || p.status == Status::skipped) continue;
    ++counted;
    if (p.status == Status::ok) {
      ++ok;
      continue;
    }
    add_detail(item,
               AcceptDetail{AcceptStatus::fail, accept_point_label(p),
                            fmt::format("{}: {}", to_string(p.status), one_line(p.message)),
                            accept_text(p.status == Status::wrong ? "cause.wrong" : "cause.failed"),
                            AcceptText{}});
  }
  item.measured = accept_text("measured.points_ok", {std::to_string(ok), std::to_string(counted)});
  if (counted == 0) {
    item.status = AcceptStatus::fail;
    item.cause = accept_text("cause.no_points");
    item.next = accept_text("next.points_failed");
  } else if (ok < counted) {
    item.status = AcceptStatus::fail;
    item.cause = accept_text("cause.points_failed");
    item.next = accept_text("next.points_failed");
  } else {
    item.status = AcceptStatus::pass;
  }
  return item;
}

AcceptItem judge_range(const RunResult& run, const std::string& workload, const std::string& stage,
                       const AcceptCriteria& c) {
  AcceptItem item = make_item("range", stage, AcceptText{}, workload);
  const PeakShare* worst = worst_ranged_share(run, workload);
  if (worst == nullptr) {
    // No public figure for this GPU model: the best headline figure and its % of peak, unjudged.
    item.status = AcceptStatus::skip;
    item.criterion = accept_text("criterion.range_unknown");
    const auto headline = presentation_for(run, workload).headline_;
    const PointResult* best = headline ? best_point(run, workload, headline->name, 0) : nullptr;
    if (best == nullptr) {
      item.measured = accept_text("measured.none");
      return item;
    }
    item.measured = value_text(best->metrics[headline->name].get<double>(), headline->unit,
                               run.peaks.find(best->index, headline->name));
    return item;
  }
  const std::string unit = unit_of(run, workload, worst->metric);
  item.measured = value_text(worst->value, unit, worst);
  item.criterion =
      accept_text("criterion.range", {num(worst->low), unit, one_line(worst->range_what)});
  item.status = worst->below ? from_severity(c.below_expected_range) : AcceptStatus::pass;
  if (!worst->below) return item;
  item.cause =
      accept_text(worst->causes.empty() ? "cause.below_range_unexplained" : "cause.below_range");
  item.next = accept_text("next.below_range");
  const PointResult* p = point_at(run, worst->point);
  for (const auto& cause : worst->causes) {
    add_detail(item, AcceptDetail{item.status, p != nullptr ? accept_point_label(*p) : "",
                                  one_line(cause), AcceptText{}, AcceptText{}});
  }
  return item;
}

AcceptItem judge_throttle(const RunResult& run, const std::string& stage, const AcceptCriteria& c) {
  AcceptItem item = make_item("throttle", stage, accept_text("criterion.throttling"));
  std::size_t with_telemetry = 0, throttled = 0;
  for (const auto& p : run.points) {
    const std::vector<GpuTelemetry> gpus = gpu_telemetry(p);
    if (p.status != Status::ok || gpus.empty()) continue;
    ++with_telemetry;
    bool any = false;
    for (const GpuTelemetry& g : gpus) {
      std::string severe;
      for (const std::string& r : g.throttle_reasons) {
        if (severe_throttle_reason(r)) severe += (severe.empty() ? "" : ", ") + r;
      }
      if (severe.empty()) continue;
      any = true;
      add_detail(item, AcceptDetail{from_severity(c.throttling),
                                    fmt::format("{}, GPU {}", accept_point_label(p), g.device),
                                    severe, AcceptText{}, AcceptText{}});
    }
    throttled += any;
  }
  if (with_telemetry == 0) {
    item.status = AcceptStatus::skip;
    item.measured = accept_text("measured.no_telemetry");
    return item;
  }
  item.measured = accept_text("measured.throttled_points",
                              {std::to_string(throttled), std::to_string(with_telemetry)});
  item.status = throttled == 0 ? AcceptStatus::pass : from_severity(c.throttling);
  if (throttled > 0) {
    item.cause = accept_text("cause.throttling");
    item.next = accept_text("next.throttling");
  }
  return item;
}

bool accept_stops_after(const std::vector<AcceptItem>& items) {
  static const std::set<std::string> stopping = {"doctor", "runs"};
  return std::any_of(items.begin(), items.end(), [](const AcceptItem& i) {
    return i.status == AcceptStatus::fail && stopping.count(i.id) != 0;
  });
}

namespace {

AcceptFigure figure_of(const RunResult& run, const PointResult& p, const MetricSpec& headline,
                       const std::string& stage) {
  AcceptFigure f;
  f.stage = stage;
  f.workload = p.workload;
  f.metric = headline.name;
  f.unit = headline.unit;
  f.gpus = p.gpus;
  f.value = p.metrics[headline.name].get<double>();
  if (const PeakShare* share = run.peaks.find(p.index, headline.name)) {
    if (share->peak > 0) f.peak_fraction = share->fraction();
  }
  for (const auto& series : run.scaling) {
    for (const auto& row : series.rows) {
      if (row.point_index == p.index && row.gpus > 1) f.efficiency = row.efficiency;
    }
  }
  double power = 0;
  int powered = 0;
  for (const GpuTelemetry& g : gpu_telemetry(p)) {
    if (g.temp_c.max) f.temp_max_c = std::max(f.temp_max_c, *g.temp_c.max);
    if (g.power_w.mean && *g.power_w.mean >= 0) {
      power += *g.power_w.mean;
      ++powered;
    }
  }
  if (powered > 0) f.power_mean_w = power / powered;
  for (const Json& b : p.memory.value("peak_bytes", Json::array())) {
    if (b.is_number()) f.memory_peak_bytes = std::max(f.memory_peak_bytes, b.get<double>());
  }
  return f;
}

}  // namespace

std::vector<AcceptFigure> accept_figures(const RunResult& run, const std::string& stage) {
  std::vector<AcceptFigure> out;
  std::set<std::pair<std::string, int>> done;
  for (const auto& p : run.points) {
    if (!done.insert({p.workload, p.gpus}).second) continue;
    const auto headline = presentation_for(run, p.workload).headline_;
    if (!headline) continue;
    const PointResult* best = best_point(run, p.workload, headline->name, p.gpus);
    if (best != nullptr) out.push_back(figure_of(run, *best, *headline, stage));
  }
  return out;
}

}  // namespace mgbench
