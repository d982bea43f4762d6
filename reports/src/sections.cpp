// Report content shared by the console, Markdown and HTML renderers: lookups into the results
// and the run-level tables (run, verdicts, doctor, all points).
#include "mgbench/reports/sections.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "mgbench/analysis/scaling.hpp"
#include "mgbench/core/json_order.hpp"
#include "mgbench/core/ranges_text.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/reports/doctor_render.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports {
namespace {

void flatten_into(const Json& v, const std::string& key,
                  std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object()) {
    if (v.empty()) {
      if (!key.empty()) out.emplace_back(key, "");
      return;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      flatten_into(it.value(), key.empty() ? it.key() : key + "." + it.key(), out);
    }
    return;
  }
  if (v.is_array()) {
    const bool scalars = std::all_of(v.begin(), v.end(),
                                     [](const Json& e) { return !e.is_object() && !e.is_array(); });
    if (scalars) {
      std::string joined;
      for (const auto& e : v) joined += (joined.empty() ? "" : ", ") + format_json_value(e);
      out.emplace_back(key, joined);
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      flatten_into(v[i], key + "[" + std::to_string(i) + "]", out);
    }
    return;
  }
  out.emplace_back(key, format_json_value(v));
}

}  // namespace

std::string noise_text(const PointResult& p) {
  if (p.stats.n == 0) return {};
  return format_percent(p.stats.rel_stdev, 2);
}

std::string median_text(const PointResult& p) {
  if (p.stats.n == 0) return {};
  return format_seconds(p.stats.median);
}

std::string devices_text(const std::vector<int>& devices) { return ranges_text(devices); }

// --- lookups -------------------------------------------------------------------------------

std::vector<std::string> workloads_of(const RunResult& run) {
  std::vector<std::string> out;
  for (const auto& p : run.points) {
    if (std::find(out.begin(), out.end(), p.workload) == out.end()) out.push_back(p.workload);
  }
  return out;
}

std::vector<const PointResult*> points_of(const RunResult& run, const std::string& workload) {
  // By series (in a strong-scaling run, the global batch rather than the per-GPU one), then GPU
  // count: the rows of one series run 1, 2, 4, 8 GPUs.
  const ScalingMode mode = scaling_mode_of(run);
  std::vector<std::pair<Params, const PointResult*>> keyed;
  for (const auto& p : run.points) {
    if (p.workload == workload) keyed.emplace_back(series_params(p, mode), &p);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (const int c = compare_values(Json(a.first), Json(b.first))) return c < 0;
    if (a.second->gpus != b.second->gpus) return a.second->gpus < b.second->gpus;
    return a.second->devices < b.second->devices;
  });
  std::vector<const PointResult*> out;
  out.reserve(keyed.size());
  for (const auto& k : keyed) out.push_back(k.second);
  return out;
}

std::vector<std::string> varying_params(const std::vector<const PointResult*>& points) {
  std::vector<const Params*> params;
  params.reserve(points.size());
  for (const auto* p : points) params.push_back(&p->params);
  return varying_keys(params);
}

std::string fixed_params_label(const std::vector<const PointResult*>& points) {
  if (points.empty()) return {};
  const auto vary = varying_params(points);
  std::vector<std::string> fixed;
  for (const auto& [key, value] : points.front()->params) {
    if (std::find(vary.begin(), vary.end(), key) == vary.end()) fixed.push_back(key);
  }
  if (fixed.empty()) return {};
  return params_label(points.front()->params, fixed);
}

const ScalingRow* scaling_row(const RunResult& run, const PointResult& point) {
  // Exact: the row names the point it was computed from.
  for (const ScalingSeries& series : run.scaling) {
    if (series.workload != point.workload) continue;
    for (const ScalingRow& row : series.rows) {
      if (row.point_index == point.index && row.gpus == point.gpus) return &row;
    }
  }
  // Otherwise: the series whose parameters are the most specific subset of the point's, unless
  // the row belongs to another point measured with the same parameters on as many GPUs (e.g.
  // with --baseline each, GPU 5 alone must not show GPU 0's 1.00x).
  const auto row_of_twin = [&](const ScalingRow& row) {
    const auto twin = [&](const PointResult& q) {
      return q.index == row.point_index && q.index != point.index &&
             q.workload == point.workload && q.gpus == point.gpus && q.params == point.params;
    };
    const std::size_t i = row.point_index;  // points are usually stored in plan order
    if (i < run.points.size() && run.points[i].index == i) return twin(run.points[i]);
    return std::any_of(run.points.begin(), run.points.end(), twin);
  };
  const ScalingRow* best = nullptr;
  std::size_t best_keys = 0;
  for (const ScalingSeries& series : run.scaling) {
    if (series.workload != point.workload || !params_subset(series.params, point.params)) continue;
    const std::size_t nkeys = series.params.size();
    if (best && nkeys <= best_keys) continue;
    for (const ScalingRow& row : series.rows) {
      if (row.gpus == point.gpus && !row_of_twin(row)) {
        best = &row;
        best_keys = nkeys;
        break;
      }
    }
  }
  return best;
}

bool is_numeric_param(const std::vector<const PointResult*>& points, const std::string& key) {
  for (const auto* p : points) {
    const ParamValue* value = p->params.find(key);
    if (value != nullptr && !value->is_number()) return false;
  }
  return true;
}

std::vector<std::string> order_params(std::vector<std::string> keys,
                                      const std::vector<const PointResult*>& points,
                                      const std::vector<std::string>& grouped) {
  const auto rank = [&](const std::string& k) {
    const auto at = std::find(grouped.begin(), grouped.end(), k);
    const long group = at == grouped.end() ? 0 : 1 + (at - grouped.begin());
    return std::make_tuple(is_numeric_param(points, k) ? 1 : 0, group, k);
  };
  std::stable_sort(keys.begin(), keys.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return keys;
}

std::string format_value(double value, ValueFormat format, int digits) {
  switch (format) {
    case ValueFormat::fixed: return fmt::format("{:.{}f}", value, digits);
    case ValueFormat::time: return format_seconds(value);
    case ValueFormat::bytes: return format_bytes_iec(value);
    case ValueFormat::percent: return format_percent(value, digits);
    case ValueFormat::count: return fmt::format("{:.0f}", value);
    case ValueFormat::text: return format_plain(value);
    case ValueFormat::number:
    case ValueFormat::rate: break;
  }
  return format_sig(value, digits);
}

TelemetrySummary telemetry_summary(const PointResult& point) {
  TelemetrySummary s;
  double power_sum = 0, energy_sum = 0;
  int power_n = 0, energy_n = 0;
  std::vector<double> clocks;
  for (const GpuTelemetry& g : gpu_telemetry(point)) {
    if (const auto clock = g.sm_clock_mhz.median) {
      if (!s.slowest_sm_clock_mhz || *clock < *s.slowest_sm_clock_mhz) {
        s.slowest_sm_clock_mhz = clock;
        s.slowest_sm_device = g.device >= 0 ? std::optional<double>(g.device) : std::nullopt;
      }
      clocks.push_back(*clock);
    }
    if (g.avg_power_w) {
      power_sum += *g.avg_power_w;
      ++power_n;
    }
    if (const auto t = g.temp_c.max) s.max_temp_c = std::max(s.max_temp_c.value_or(*t), *t);
    if (g.throttle_fraction) {
      s.throttle_fraction =
          std::max(s.throttle_fraction.value_or(*g.throttle_fraction), *g.throttle_fraction);
    }
    if (g.energy_j) {
      energy_sum += *g.energy_j;
      ++energy_n;
    }
  }
  if (power_n) s.avg_power_w = power_sum / power_n;
  if (energy_n) s.energy_j = energy_sum;
  if (!clocks.empty()) {
    std::sort(clocks.begin(), clocks.end());
    const std::size_t n = clocks.size();
    s.sm_clock_mhz = n % 2 ? clocks[n / 2] : (clocks[n / 2 - 1] + clocks[n / 2]) / 2;
  }
  return s;
}

std::optional<double> peak_memory_bytes(const PointResult& point) {
  if (point.memory.is_object() && point.memory.contains("peak_bytes")) {
    const Json& pk = point.memory["peak_bytes"];
    if (pk.is_number()) return pk.get<double>();
    if (pk.is_array()) {
      std::optional<double> best;
      for (const auto& v : pk) {
        if (v.is_number()) best = std::max(best.value_or(v.get<double>()), v.get<double>());
      }
      return best;
    }
  }
  for (const char* key : {"peak_memory_bytes", "peak_bytes"}) {
    if (const auto v = json_number(point.metrics, key)) return v;
  }
  return std::nullopt;
}

std::optional<double> point_metric(const PointResult& point, const std::string& name) {
  if (const auto v = json_number(point.metrics, name)) return v;
  const Json& extra = point.extra;
  if (!extra.is_object() || !extra.contains("ranks") || !extra["ranks"].is_array() ||
      extra["ranks"].empty()) {
    return std::nullopt;
  }
  const Json& r0 = extra["ranks"][0];
  if (!r0.is_object() || !r0.contains("details") || !r0["details"].is_object()) return std::nullopt;
  const Json& d = r0["details"];
  if (!d.contains("metrics")) return std::nullopt;
  return json_number(d["metrics"], name);
}

RowTone tone_of(Status status, bool noisy) {
  switch (status) {
    case Status::ok: return noisy ? RowTone::warn : RowTone::good;
    case Status::skipped:
    case Status::waived: return RowTone::normal;
    case Status::oom: return RowTone::warn;
    case Status::wrong:
    case Status::failed:
    case Status::timeout: return RowTone::bad;
  }
  return RowTone::normal;
}

std::string status_text(const PointResult& point) {
  std::string s = to_string(point.status);
  if (point.noisy) s += " (noisy)";
  if (!point.flags.empty()) s += " (flagged)";
  if (!point.message.empty() && point.status != Status::ok) s += ": " + one_line(point.message);
  return s;
}

std::string status_counts(const RunResult& run) {
  std::map<int, std::size_t> counts;
  for (const auto& p : run.points) ++counts[static_cast<int>(p.status)];
  std::string out;
  for (const auto& [status, n] : counts) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", n, to_string(static_cast<Status>(status)));
  }
  std::size_t noisy = 0;
  for (const auto& p : run.points) noisy += p.noisy ? 1 : 0;
  if (noisy) out += fmt::format(" ({} noisy)", noisy);
  return out.empty() ? "no points" : out;
}

// --- tables ------------------------------------------------------------------------------------

Table run_summary_table(const RunResult& run) {
  Table t;
  t.title = "Run";
  t.column("").column("");
  t.columns[0].header = "item";
  t.columns[1].header = "value";
  const auto add = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) t.add_row({k, v});
  };
  std::string tool = json_string(run.tool, "name", "mgbench");
  const std::string version = json_string(run.tool, "version");
  if (!version.empty()) tool += " " + version;
  const std::string rev = json_string(run.tool, "git_revision");
  if (!rev.empty()) tool += " (" + rev + ")";
  add("tool", tool);
  add("host", run.host);
  add("started", run.started_at);
  add("finished", run.finished_at);
  std::string argv;
  for (const auto& a : run.argv) argv += (argv.empty() ? "" : " ") + a;
  add("command", argv);
  add("points", status_counts(run));
  if (run.interrupted) add("interrupted", "yes: the sweep was interrupted; results are partial");
  if (run.settings.is_object()) {
    for (const auto& [k, v] : flatten_json(run.settings)) add("settings." + k, v);
  }
  // NCCL's NVLink SHARP as the workers had it: it changes all-reduce bandwidth on NVSwitch hosts.
  add("NCCL NVLink SHARP (NVLS)", json_string(run.environment, "nccl_nvls"));
  return t;
}

Table verdicts_table(const RunResult& run) {
  Table t;
  t.title = "Verdicts";
  t.column("workload").column("verdict").column("anomalies");
  std::size_t one_gpu_only = 0;
  for (const RunVerdict& v : run.verdicts) {
    // "<label>: measured on 1 GPU only (...); no scaling figure.[ rest]": the count goes into
    // one note; a row remains only for the rest (e.g. the step-time breakdown).
    std::string text = v.text;
    const std::string ending = "no scaling figure.";
    const auto headline_end = text.find(ending);
    if (v.gpus_max <= 1 && v.anomalies.empty() && headline_end != std::string::npos) {
      ++one_gpu_only;
      const auto colon = text.find(": ");
      std::string rest = text.substr(headline_end + ending.size());
      if (rest.find_first_not_of(' ') == std::string::npos) continue;
      text = text.substr(0, colon == std::string::npos ? 0 : colon + 1) +
             rest.substr(colon == std::string::npos ? rest.find_first_not_of(' ') : 0);
    }
    std::string anomalies;
    for (std::string item : v.anomalies) {
      std::replace(item.begin(), item.end(), '_', ' ');  // "slow_gpu" -> "slow gpu"
      anomalies += (anomalies.empty() ? "" : "; ") + item;
    }
    t.add_row({v.workload, text, anomalies},
              anomalies.empty() ? RowTone::normal : RowTone::warn);
  }
  if (one_gpu_only > 0) {
    t.notes.push_back(fmt::format("{} series measured on 1 GPU only: no scaling figure.",
                                  one_gpu_only));
  }
  t.drop_empty_columns();
  return t;
}

Table run_doctor_table(const RunResult& run) {
  // The doctor stores {"checks": [...]}; a bare array of checks is accepted too.
  Table t =
      run.doctor.is_array() ? doctor_table(Json{{"checks", run.doctor}}) : doctor_table(run.doctor);
  t.title = "Doctor";
  return t;
}

Table points_table(const RunResult& run) {
  Table t;
  t.title = "All points";
  t.column("#", Align::right).column("workload").column("parameters");
  t.column("GPUs", Align::right).column("devices").column("median time", Align::right);
  t.column("noise", Align::right).column("status").column("message");
  std::vector<const PointResult*> points;
  for (const auto& p : run.points) points.push_back(&p);
  std::stable_sort(points.begin(), points.end(),
                   [](const PointResult* a, const PointResult* b) { return a->index < b->index; });
  for (const auto* p : points) {
    std::string status = to_string(p->status);
    if (p->noisy) status += " (noisy)";
    if (!p->flags.empty()) status += " (flagged)";
    const std::string note = p->status == Status::ok ? quality_note(p->spread, p->flags) : "";
    t.add_row(
        {std::to_string(p->index), p->workload, params_label(p->params), std::to_string(p->gpus),
         devices_text(p->devices), median_text(*p), noise_text(*p), status,
         one_line(note.empty() ? p->message : note)},
        tone_of(p->status, p->noisy || !p->flags.empty()));
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> flatten_json(const Json& value,
                                                              const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  if (value.is_null()) return out;
  flatten_into(value, prefix, out);
  return out;
}

}  // namespace mgbench::reports
