// The summary a report opens with: per workload the best figure, the scaling efficiency at the
// largest GPU count and the verdict; then the run's flags (see summary.hpp).
#include "mgbench/reports/summary.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "mgbench/model/point_quality.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/peaks.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {
namespace {

constexpr const char* kDash = "—";
constexpr std::size_t kMaxLinesPerFlag = 12;
constexpr const char* kAllOneGpu =
    "Measured on 1 GPU only: no scaling efficiency and no verdict (sweep --gpus 1,2,... on a "
    "machine with more GPUs for them).";

std::string gpus_text(int n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

// The value a point contributes to the best figure: ok, not flagged, positive.
std::optional<double> usable(const PointResult& p, const std::string& metric) {
  if (p.status != Status::ok || metric_flagged(p.flags, metric)) return std::nullopt;
  const auto v = point_metric(p, metric);
  if (!v || !(*v > 0)) return std::nullopt;
  return v;
}

// The headline metric, else the first declared metric some point has a usable value of.
const MetricSpec* figure_metric(const Presentation& pres,
                                const std::vector<const PointResult*>& points) {
  std::vector<const MetricSpec*> candidates;
  if (pres.headline_) candidates.push_back(pres.find_metric(pres.headline_->name));
  for (const MetricSpec& m : pres.metrics) candidates.push_back(&m);
  for (const MetricSpec* m : candidates) {
    if (m == nullptr) continue;
    for (const PointResult* p : points) {
      if (usable(*p, m->name)) return m;
    }
  }
  return nullptr;
}

const PointResult* best_point(const std::vector<const PointResult*>& points,
                              const MetricSpec& metric) {
  const PointResult* best = nullptr;
  double best_value = 0;
  for (const PointResult* p : points) {
    const auto v = usable(*p, metric.name);
    if (!v) continue;
    const bool better = metric.better_ == Better::higher ? *v > best_value : *v < best_value;
    if (best == nullptr || better) {
      best = p;
      best_value = *v;
    }
  }
  return best;
}

// The scaling series a point belongs to, nullptr when none.
const ScalingSeries* series_of(const RunResult& run, const PointResult& point) {
  for (const ScalingSeries& s : run.scaling) {
    if (s.workload != point.workload) continue;
    for (const ScalingRow& row : s.rows) {
      if (row.point_index == point.index) return &s;
    }
  }
  return nullptr;
}

// A verdict's text without its "<workload> <label>: " prefix.
std::string verdict_body(const RunVerdict& v) {
  const auto colon = v.text.find(": ");
  return one_line(colon == std::string::npos ? v.text : v.text.substr(colon + 2));
}

// The link verdict of a collective's point (RunVerdict::kind "link": its parameters without
// the size axes), nullptr when none.
const RunVerdict* link_verdict_of(const RunResult& run, const PointResult& point) {
  for (const RunVerdict& v : run.verdicts) {
    if (v.kind == "link" && v.workload == point.workload && params_subset(v.params, point.params)) {
      return &v;
    }
  }
  return nullptr;
}

// The efficiency at the largest GPU count and the verdict of a series (without its
// "<workload> <label>: " prefix): from the stored verdict, else from the series itself.
std::pair<std::string, std::string> scaling_of(const RunResult& run, const ScalingSeries& s) {
  for (const RunVerdict& v : run.verdicts) {
    if (v.kind == "link" || v.workload != s.workload || v.params != s.params) continue;
    return {format_percent(v.efficiency, 0) + " at " + gpus_text(v.gpus_max), verdict_body(v)};
  }
  const ScalingRow& last = s.rows.back();
  return {format_percent(last.efficiency, 0) + " at " + gpus_text(last.gpus),
          fmt::format("{} give {:.2f}x ({}).", gpus_text(last.gpus), last.speedup,
                      format_percent(last.efficiency, 0))};
}

// "2 noisy, 1 impossible value, 1 failed": what a row's points need a reader to know.
std::string row_notes(const std::vector<const PointResult*>& points) {
  std::size_t noisy = 0, flagged = 0;
  std::map<std::string, std::size_t> not_ok;
  for (const PointResult* p : points) {
    noisy += p->noisy ? 1 : 0;
    flagged += !p->flags.empty() ? 1 : 0;
    if (p->status != Status::ok) ++not_ok[to_string(p->status)];
  }
  std::vector<std::string> parts;
  if (noisy) parts.push_back(fmt::format("{} noisy", noisy));
  if (flagged) parts.push_back(fmt::format("{} with impossible values", flagged));
  for (const auto& [status, n] : not_ok) parts.push_back(fmt::format("{} {}", n, status));
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

// Text and on/off parameters that vary between the points: what a summary row stands for.
std::vector<std::string> configuration_keys(const std::vector<const PointResult*>& points) {
  std::vector<std::string> keys;
  for (const auto& k : varying_params(points)) {
    if (!is_numeric_param(points, k)) keys.push_back(k);
  }
  return order_params(keys, points);
}

std::vector<std::string> numeric_varying_keys(const std::vector<const PointResult*>& points) {
  std::vector<std::string> keys;
  for (const auto& k : varying_params(points)) {
    if (is_numeric_param(points, k)) keys.push_back(k);
  }
  return keys;
}

// A point's place among its row's points: "size 8192, 8 GPUs", bytes as the axis declares. In a
// strong-scaling series the batch is the global one: "global batch 2048 (256 per GPU)".
std::string where_text(const PointResult& p, const Presentation& pres,
                       const std::vector<std::string>& numeric,
                       const ScalingSeries* series = nullptr) {
  std::string out;
  const bool strong =
      series != nullptr && series->mode == "strong" && series->params.contains("global_batch");
  const auto companion = [&](const std::string& key) {
    return std::any_of(pres.axes.begin(), pres.axes.end(), [&](const AxisSpec& a) {
      return std::find(a.companions.begin(), a.companions.end(), key) != a.companions.end();
    });
  };
  for (const auto& key : numeric) {
    const ParamValue* param = p.params.find(key);
    if (param == nullptr || !param->is_number()) continue;
    if (companion(key)) continue;  // moves with its axis (count with bytes, n and k with m)
    const AxisSpec* axis = pres.find_axis(key);
    const double value = param->number();
    std::string text = key + " " + format_plain(value);
    if (strong && key == "batch") {
      text = "global batch " + param_string(series->params, "global_batch") + " (" +
             format_plain(value) + " per GPU)";
    } else if (axis != nullptr) {
      text = (axis->word.empty() ? axis->label : axis->word) + " " +
             format_value(value, axis->format_);
    }
    out += (out.empty() ? "" : ", ") + text;
  }
  return out + (out.empty() ? "" : ", ") + gpus_text(p.gpus);
}

struct Row {
  std::vector<std::string> cells;
  RowTone tone = RowTone::normal;
  bool one_gpu = false;    // a figure, measured on 1 GPU only
  bool multi_gpu = false;  // a figure, measured on more GPUs
  bool no_baseline = false;  // more GPUs, but no 1-GPU point to scale against
};

Row summary_row(const RunResult& run, const Presentation& pres, const std::string& label,
                const std::vector<const PointResult*>& points,
                const std::vector<std::string>& numeric, const MetricSpec* metric) {
  Row r;
  int gpus_max = 1;
  for (const PointResult* p : points) gpus_max = std::max(gpus_max, p->gpus);
  const PointResult* best = metric ? best_point(points, *metric) : nullptr;
  std::string figure = kDash, where, efficiency = kDash, verdict = kDash, of_peak;
  if (best != nullptr) {
    figure = format_value(*usable(*best, metric->name), metric->format_, metric->digits);
    of_peak = of_peak_cell(run, *best, metric->name);
    const ScalingSeries* s = series_of(run, *best);
    where = where_text(*best, pres, numeric, s);
    const RunVerdict* link = link_verdict_of(run, *best);
    if (s != nullptr && s->rows.back().gpus > s->rows.front().gpus) {
      std::tie(efficiency, verdict) = scaling_of(run, *s);
    } else if (link != nullptr) {
      verdict = verdict_body(*link);
    } else if (s == nullptr && gpus_max > 1) {
      r.no_baseline = true;
    }
  }
  r.one_gpu = gpus_max <= 1 && best != nullptr;
  r.multi_gpu = gpus_max > 1 && best != nullptr;
  const std::string notes = row_notes(points);
  const bool failed = std::any_of(points.begin(), points.end(), [](const PointResult* p) {
    return tone_of(p->status) == RowTone::bad;
  });
  r.tone = failed && best == nullptr ? RowTone::bad
                                      : (notes.empty() ? RowTone::normal : RowTone::warn);
  r.cells = {label, figure, of_peak, where, efficiency, verdict.empty() ? kDash : verdict, notes};
  return r;
}

Table workload_summary(const RunResult& run, const std::string& workload) {
  const auto points = points_of(run, workload);
  const Presentation pres = presentation_for(run, workload);
  const MetricSpec* metric = figure_metric(pres, points);
  const auto keys = configuration_keys(points);
  const auto numeric = numeric_varying_keys(points);
  Table t;
  t.title = workload;
  t.column("configuration").column(metric ? "best " + pres.metric_axis_label(metric->name)
                                          : std::string("best figure"),
                                   Align::right);
  t.column(kOfPeakHeader, Align::right);
  t.column("at").column("scaling efficiency", Align::right).column("verdict").column("notes");
  const auto groups = group_in_order(points, [&](const PointResult* p) {
    return keys.empty() ? std::string("all points") : params_short_label(p->params, keys);
  });
  bool any_one_gpu = false, any_multi_gpu = false, any_no_baseline = false;
  for (const auto& [label, members] : groups) {
    Row r = summary_row(run, pres, label, members, numeric, metric);
    any_one_gpu = any_one_gpu || r.one_gpu;
    any_multi_gpu = any_multi_gpu || r.multi_gpu;
    any_no_baseline = any_no_baseline || r.no_baseline;
    t.add_row(std::move(r.cells), r.tone);
  }
  if (any_one_gpu && !any_multi_gpu) {
    t.notes.push_back(kAllOneGpu);
  } else if (any_one_gpu) {
    t.notes.push_back("Rows with a figure but no scaling efficiency were measured on 1 GPU "
                      "only.");
  }
  if (any_no_baseline) {
    t.notes.push_back("Measured on more GPUs without a 1-GPU point in this run: no baseline, "
                      "so no scaling efficiency and no verdict.");
  }
  t.drop_empty_columns();
  return t;
}

// ---- flags ------------------------------------------------------------------------------------

// What the flag lines need to name a point of a workload.
struct View {
  Presentation pres;
  std::vector<std::string> keys, numeric;
};

class Labeller {
 public:
  explicit Labeller(const RunResult& run) : run_(run) {}
  // "allreduce nccl fp32, message size 16 MiB, 1 GPU".
  std::string operator()(const PointResult& p) {
    const View& v = view(p.workload);
    const std::string config = v.keys.empty() ? "" : " " + params_short_label(p.params, v.keys);
    return p.workload + config + ", " + where_text(p, v.pres, v.numeric);
  }

 private:
  const View& view(const std::string& workload) {
    auto it = views_.find(workload);
    if (it != views_.end()) return it->second;
    const auto points = points_of(run_, workload);
    View v{presentation_for(run_, workload), configuration_keys(points),
           numeric_varying_keys(points)};
    return views_.emplace(workload, std::move(v)).first->second;
  }
  const RunResult& run_;
  std::map<std::string, View> views_;
};

// Appends `line` unless the group is full; counts what was left out.
void add_line(FlagGroup& g, std::size_t& left_out, std::string line) {
  if (g.lines.size() < kMaxLinesPerFlag) {
    g.lines.push_back(one_line(line));
  } else {
    ++left_out;
  }
}

void close_group(FlagGroup& g, std::size_t left_out, std::vector<FlagGroup>& out) {
  if (left_out) g.lines.push_back(fmt::format("... and {} more (see All points).", left_out));
  if (!g.lines.empty()) out.push_back(std::move(g));
}

std::string causes_text(const std::set<std::string>& causes) {
  std::string out;
  for (const auto& c : causes) out += (out.empty() ? "" : ", ") + c;
  return out.empty() ? "" : " (" + out + ")";
}

void throttling_flags(const RunResult& run, std::vector<FlagGroup>& out) {
  FlagGroup g{"Throttling", {}};
  for (const auto& w : workloads_of(run)) {
    const auto points = points_of(run, w);
    std::size_t held = 0;
    double worst = 0;
    std::set<std::string> causes;
    for (const PointResult* p : points) {
      const auto fraction = telemetry_summary(*p).throttle_fraction;
      if (!fraction || !(*fraction > 0)) continue;
      ++held;
      worst = std::max(worst, *fraction);
      const std::string cause = clock_limit_cause(p->telemetry);
      if (!cause.empty()) causes.insert(cause);
    }
    if (held == 0) continue;
    g.lines.push_back(fmt::format("{}: {} of {} points ran with clocks held down, up to {} of "
                                  "their time{}.",
                                  w, held, points.size(), format_percent(worst, 0),
                                  causes_text(causes)));
  }
  close_group(g, 0, out);
}

void noise_flags(const RunResult& run, Labeller& label, std::vector<FlagGroup>& out) {
  FlagGroup g{"Noise", {}};
  std::size_t left_out = 0;
  std::map<std::string, std::pair<std::size_t, std::set<std::string>>> oscillating;
  for (const PointResult& p : run.points) {
    if (p.noisy) {
      const std::string why = p.spread ? p.spread->reason : "";
      add_line(g, left_out, label(p) + ": " + (why.empty() ? "median uncertain" : why));
    } else if (p.spread && p.spread->oscillating) {
      auto& [n, causes] = oscillating[p.workload];
      ++n;
      if (!p.spread->cause.empty()) causes.insert(p.spread->cause);
    }
  }
  for (const auto& [w, entry] : oscillating) {
    add_line(g, left_out,
             fmt::format("{}: {} point{} oscillate{} from sample to sample{}; the medians are "
                         "certain, so they are not noisy.",
                         w, entry.first, entry.first == 1 ? "" : "s", entry.first == 1 ? "s" : "",
                         causes_text(entry.second)));
  }
  close_group(g, left_out, out);
}

void impossible_flags(const RunResult& run, Labeller& label, std::vector<FlagGroup>& out) {
  FlagGroup g{"Impossible values", {}};
  std::size_t left_out = 0;
  for (const PointResult& p : run.points) {
    for (const PointFlag& f : p.flags) {
      add_line(g, left_out, label(p) + ": " + (f.reason.empty() ? f.metric : f.reason));
    }
  }
  close_group(g, left_out, out);
}

void failure_flags(const RunResult& run, Labeller& label, std::vector<FlagGroup>& out) {
  FlagGroup g{"Points without a result", {}};
  std::size_t left_out = 0;
  for (const PointResult& p : run.points) {
    if (p.status == Status::ok || p.status == Status::skipped || p.status == Status::waived) {
      continue;
    }
    add_line(g, left_out, label(p) + ": " + status_text(p));
  }
  close_group(g, left_out, out);
}

void doctor_flags(const RunResult& run, std::vector<FlagGroup>& out) {
  FlagGroup g{"Doctor warnings", {}};
  Json checks = run.doctor;
  if (checks.is_object()) checks = checks.value("checks", Json());
  if (checks.is_array()) {
    for (const Json& c : checks) {
      if (!c.is_object()) continue;
      const std::string status = json_string(c, "status");
      if (status != "warn" && status != "fail") continue;
      const std::string next = json_string(c, "next_step");
      g.lines.push_back(one_line(json_string(c, "name") + " (" + status +
                                 "): " + json_string(c, "finding") +
                                 (next.empty() ? "" : ". Next: " + next)));
    }
  }
  close_group(g, 0, out);
}

}  // namespace

std::vector<FlagGroup> run_flags(const RunResult& run) {
  Labeller label(run);
  std::vector<FlagGroup> out;
  throttling_flags(run, out);
  noise_flags(run, label, out);
  impossible_flags(run, label, out);
  failure_flags(run, label, out);
  doctor_flags(run, out);
  FlagGroup below{"Below what this GPU model usually reaches", {}};
  std::size_t left_out = 0;
  for (std::string& line : below_range_lines(run)) add_line(below, left_out, std::move(line));
  close_group(below, left_out, out);
  return out;
}

// Whether the run measured something, and only ever on 1 GPU (waived and failed points, which
// have no figure, do not count either way).
bool all_ok_on_one_gpu(const RunResult& run) {
  bool any = false;
  for (const auto& p : run.points) {
    if (p.status != Status::ok) continue;
    if (p.gpus != 1) return false;
    any = true;
  }
  return any;
}

Summary run_summary(const RunResult& run) {
  Summary out;
  for (const auto& w : workloads_of(run)) out.tables.push_back(workload_summary(run, w));
  if (all_ok_on_one_gpu(run)) {
    for (auto& t : out.tables) {
      t.notes.erase(std::remove(t.notes.begin(), t.notes.end(), kAllOneGpu), t.notes.end());
    }
    out.note = kAllOneGpu;
  }
  return out;
}

}  // namespace mgbench::reports
