// Report content shared by the console, Markdown and HTML renderers.
#include "mgbench/reports/sections.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/reports/doctor_render.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports {
namespace {

// "0-7", "0,2-3": runs of consecutive ordinals collapsed.
std::string devices_text(const std::vector<int>& devices) {
  std::string out;
  for (std::size_t i = 0; i < devices.size();) {
    std::size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(devices[i]);
    if (j >= i + 2) {
      out += "-" + std::to_string(devices[j]);
    } else if (j == i + 1) {
      out += "," + std::to_string(devices[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string opt_sig(const std::optional<double>& v, int digits = 4) {
  return v ? format_sig(*v, digits) : std::string();
}

std::string fixed2(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v) : std::string();
}

std::string speedup_text(const Json* row) {
  if (!row) return {};
  const auto v = json_number(*row, "speedup");
  return v ? fmt::format("{:.2f}x", *v) : std::string();
}

std::string efficiency_text(const Json* row) {
  if (!row) return {};
  const auto v = json_number(*row, "efficiency");
  return v ? format_percent(*v, 1) : std::string();
}

std::string noise_text(const PointResult& p) {
  if (p.stats.n == 0) return {};
  return format_percent(p.stats.rel_stdev, 2);
}

std::string median_text(const PointResult& p) {
  if (p.stats.n == 0) return {};
  return format_seconds(p.stats.median);
}

bool has_point_telemetry(const std::vector<const PointResult*>& points) {
  for (const auto* p : points) {
    if (p->telemetry.is_object() && !p->telemetry.empty()) return true;
  }
  return false;
}

void add_telemetry_columns(Table& t) {
  t.column("W/GPU", Align::right).column("max °C", Align::right);
  t.column("SM MHz", Align::right).column("throttled", Align::right);
}

void add_telemetry_cells(std::vector<std::string>& row, const PointResult& p) {
  const TelemetrySummary s = telemetry_summary(p);
  row.push_back(s.avg_power_w ? fmt::format("{:.0f}", *s.avg_power_w) : "");
  row.push_back(s.max_temp_c ? fmt::format("{:.0f}", *s.max_temp_c) : "");
  row.push_back(s.sm_clock_mhz ? fmt::format("{:.0f}", *s.sm_clock_mhz) : "");
  row.push_back(s.throttle_fraction ? format_percent(*s.throttle_fraction, 1) : "");
}

// The columns every point table ends with (noise, telemetry when present, status), then the
// row itself, shaded by status.
void add_point_tail(Table& t, std::vector<std::string> row, const PointResult& p, bool tel) {
  row.push_back(noise_text(p));
  if (tel) add_telemetry_cells(row, p);
  row.push_back(status_text(p));
  t.add_row(std::move(row), tone_of(p.status, p.noisy));
}

std::optional<double> metric(const PointResult& p, const std::string& name) {
  if (name.empty()) return std::nullopt;
  return point_metric(p, name);
}

bool subset_of(const Json& series_params, const Json& point_params) {
  if (!series_params.is_object()) return true;
  if (!point_params.is_object()) return series_params.empty();
  for (auto it = series_params.begin(); it != series_params.end(); ++it) {
    const auto found = point_params.find(it.key());
    if (found == point_params.end() || *found != it.value()) return false;
  }
  return true;
}

std::vector<std::string> cells_for_params(const PointResult& p,
                                          const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    const auto it = p.params.is_object() ? p.params.find(k) : p.params.end();
    out.push_back(p.params.is_object() && it != p.params.end() ? format_json_value(*it) : "");
  }
  return out;
}

bool is_numeric_param(const std::vector<const PointResult*>& points, const std::string& key) {
  for (const auto* p : points) {
    if (p->params.is_object() && p->params.contains(key) && !p->params[key].is_number())
      return false;
  }
  return true;
}

void finish(Table& t) { t.drop_empty_columns(); }

std::vector<std::string> without_keys(std::vector<std::string> keys,
                                      const std::set<std::string>& drop) {
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [&](const std::string& k) { return drop.count(k) > 0; }),
             keys.end());
  return keys;
}

// Text and boolean parameters first (by name), then numbers (m, n, k in that order).
std::vector<std::string> order_params(std::vector<std::string> keys,
                                      const std::vector<const PointResult*>& points) {
  const auto rank = [&](const std::string& k) {
    const bool numeric = is_numeric_param(points, k);
    const int mnk = k == "m" ? 1 : k == "n" ? 2 : k == "k" ? 3 : 0;
    return std::make_tuple(numeric ? 1 : 0, mnk, k);
  };
  std::stable_sort(keys.begin(), keys.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return keys;
}

// --- per-workload tables ---------------------------------------------------------------------

Table generic_table(const RunResult& run, const std::string& workload,
                    const std::vector<const PointResult*>& points) {
  Table t;
  t.title = workload;
  const std::string fixed = fixed_params_label(points);
  if (!fixed.empty()) t.caption = "fixed: " + fixed;
  auto vary = order_params(varying_params(points), points);
  // Square GEMMs: M = N = K in one column.
  bool square = std::count_if(vary.begin(), vary.end(), [](const std::string& k) {
                  return k == "m" || k == "n" || k == "k";
                }) == 3;
  for (const auto* p : points) {
    const Json& q = p->params;
    if (!q.contains("m") || !q.contains("n") || !q.contains("k") || q["m"] != q["n"] ||
        q["n"] != q["k"]) {
      square = false;
    }
  }
  if (square) vary = without_keys(vary, {"n", "k"});
  const ThroughputMetric m = throughput_metric(run, workload);
  const bool is_gemm = workload == "gemm";
  t.column("GPUs", Align::right).column("devices");
  for (const auto& k : vary) {
    t.column(square && k == "m" ? "M=N=K" : k,
             is_numeric_param(points, k) ? Align::right : Align::left);
  }
  t.column("median time", Align::right);
  const std::string unit = m.unit.empty() ? "" : m.unit;
  const std::string per_gpu_header = is_gemm ? "TFLOP/s/GPU" : unit + "/GPU";
  const std::string total_header = is_gemm ? "TFLOP/s total" : unit + " total";
  const bool have_per_gpu = !m.per_gpu.empty(), have_total = !m.aggregate.empty();
  if (have_per_gpu)
    t.column(have_total ? per_gpu_header : (unit.empty() ? m.per_gpu : unit), Align::right);
  if (have_total)
    t.column(have_per_gpu ? total_header : (unit.empty() ? m.aggregate : unit), Align::right);
  t.column("speedup", Align::right)
      .column("efficiency", Align::right)
      .column("noise", Align::right);
  const bool tel = has_point_telemetry(points);
  if (tel) add_telemetry_columns(t);
  t.column("status");
  for (const auto* p : points) {
    std::vector<std::string> row{std::to_string(p->gpus), devices_text(p->devices)};
    for (auto& c : cells_for_params(*p, vary)) row.push_back(std::move(c));
    row.push_back(median_text(*p));
    if (have_per_gpu) row.push_back(opt_sig(metric(*p, m.per_gpu)));
    if (have_total) row.push_back(opt_sig(metric(*p, m.aggregate)));
    const Json* s = scaling_row(run, *p);
    row.push_back(speedup_text(s));
    row.push_back(efficiency_text(s));
    add_point_tail(t, std::move(row), *p, tel);
  }
  finish(t);
  return t;
}

Table train_table(const RunResult& run, const std::vector<const PointResult*>& points) {
  Table t;
  t.title = "train_step";
  const std::string fixed = fixed_params_label(points);
  if (!fixed.empty()) t.caption = "fixed: " + fixed;
  const auto vary = order_params(varying_params(points), points);
  t.column("GPUs", Align::right).column("devices");
  for (const auto& k : vary) t.column(k, is_numeric_param(points, k) ? Align::right : Align::left);
  t.column("step time", Align::right).column("samples/s", Align::right);
  t.column("samples/s/GPU", Align::right).column("speedup", Align::right);
  t.column("efficiency", Align::right).column("exposed comm", Align::right);
  t.column("overlap", Align::right).column("peak mem", Align::right);
  t.column("noise", Align::right);
  const bool tel = has_point_telemetry(points);
  if (tel) add_telemetry_columns(t);
  t.column("status");
  for (const auto* p : points) {
    std::vector<std::string> row{std::to_string(p->gpus), devices_text(p->devices)};
    for (auto& c : cells_for_params(*p, vary)) row.push_back(std::move(c));
    auto step = metric(*p, "step_time_s");
    if (!step && p->stats.n > 0) step = p->stats.median;
    row.push_back(step ? format_seconds(*step) : "");
    const auto sps = metric(*p, "samples_per_s");
    row.push_back(opt_sig(sps, 4));
    auto per_gpu = metric(*p, "samples_per_s_per_gpu");
    if (!per_gpu && sps && p->gpus > 0) per_gpu = *sps / p->gpus;
    row.push_back(opt_sig(per_gpu, 4));
    const Json* s = scaling_row(run, *p);
    row.push_back(speedup_text(s));
    row.push_back(efficiency_text(s));
    const auto exposed = metric(*p, "exposed_comm_s");
    std::string exposed_text;
    if (exposed) {
      exposed_text = format_seconds(*exposed);
      if (step && *step > 0) exposed_text += fmt::format(" ({:.0f} %)", *exposed / *step * 100);
    }
    row.push_back(exposed_text);
    const auto overlap = metric(*p, "overlap_ratio");
    row.push_back(overlap ? format_percent(*overlap, 0) : "");
    const auto mem = peak_memory_bytes(*p);
    row.push_back(mem ? format_bytes_iec(*mem) : "");
    add_point_tail(t, std::move(row), *p, tel);
  }
  finish(t);
  return t;
}

std::vector<Table> allreduce_tables(const RunResult& run,
                                    const std::vector<const PointResult*>& all) {
  std::vector<Table> tables;
  // Split by dtype, in order of appearance.
  std::vector<std::string> dtypes;
  for (const auto* p : all) {
    const std::string d = json_string(p->params, "dtype", "");
    if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
  }
  static const std::set<std::string> kOwn = {"bytes", "count", "dtype", "impl", "inplace"};
  for (const auto& dtype : dtypes) {
    std::vector<const PointResult*> points;
    for (const auto* p : all) {
      if (json_string(p->params, "dtype", "") == dtype) points.push_back(p);
    }
    std::stable_sort(points.begin(), points.end(), [](const PointResult* a, const PointResult* b) {
      const auto key = [](const PointResult* p) {
        return std::make_tuple(p->gpus, json_string(p->params, "impl"),
                               json_string(p->params, "inplace"),
                               json_number(p->params, "bytes").value_or(0));
      };
      return key(a) < key(b);
    });
    Table t;
    t.title = dtype.empty() ? "allreduce" : "allreduce " + dtype;
    std::vector<std::string> extra;
    for (const auto& k : varying_params(points)) {
      if (!kOwn.count(k)) extra.push_back(k);
    }
    t.column("GPUs", Align::right).column("size", Align::right).column("count", Align::right);
    t.column("impl");
    for (const auto& k : extra)
      t.column(k, is_numeric_param(points, k) ? Align::right : Align::left);
    t.column("in-place").column("time (us)", Align::right).column("algbw (GB/s)", Align::right);
    t.column("busbw (GB/s)", Align::right).column("#wrong", Align::right);
    t.column("noise", Align::right);
    const bool tel = has_point_telemetry(points);
    if (tel) add_telemetry_columns(t);
    t.column("status");
    for (const auto* p : points) {
      std::vector<std::string> row{std::to_string(p->gpus)};
      const auto bytes = json_number(p->params, "bytes");
      row.push_back(bytes ? format_bytes_iec(*bytes) : "");
      row.push_back(json_string(p->params, "count"));
      row.push_back(json_string(p->params, "impl"));
      for (auto& c : cells_for_params(*p, extra)) row.push_back(std::move(c));
      row.push_back(json_string(p->params, "inplace"));
      auto time_us = metric(*p, "time_us");
      if (!time_us && p->stats.n > 0) time_us = p->stats.median * 1e6;
      row.push_back(fixed2(time_us));
      row.push_back(fixed2(metric(*p, "algbw_GBps")));
      row.push_back(fixed2(metric(*p, "busbw_GBps")));
      const auto wrong = json_number(p->verification, "wrong");
      row.push_back(wrong ? fmt::format("{:.0f}", *wrong) : (p->status == Status::ok ? "" : "N/A"));
      add_point_tail(t, std::move(row), *p, tel);
    }
    finish(t);
    tables.push_back(std::move(t));
  }
  // Plateau rows from the workload summary.
  const auto sit =
      run.summaries.is_object() ? run.summaries.find("allreduce") : run.summaries.end();
  if (run.summaries.is_object() && sit != run.summaries.end()) {
    const Json* rows = nullptr;
    if (sit->is_array()) {
      rows = &*sit;
    } else if (sit->is_object()) {
      for (const char* key : {"plateau", "rows", "plateaus"}) {
        if (sit->contains(key) && (*sit)[key].is_array()) {
          rows = &(*sit)[key];
          break;
        }
      }
    }
    if (rows && !rows->empty()) {
      Table t;
      t.title = "allreduce plateau";
      t.caption = "median busbw over message sizes >= 64 MiB";
      t.column("GPUs", Align::right).column("dtype").column("impl").column("in-place");
      t.column("plateau busbw (GB/s)", Align::right);
      for (const auto& r : *rows) {
        if (!r.is_object()) continue;
        t.add_row({json_string(r, "gpus"), json_string(r, "dtype"), json_string(r, "impl"),
                   json_string(r, "inplace"), fixed2(json_number(r, "plateau_busbw_GBps"))});
      }
      finish(t);
      tables.push_back(std::move(t));
    }
  }
  return tables;
}

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

// --- lookups -------------------------------------------------------------------------------

std::vector<std::string> workloads_of(const RunResult& run) {
  std::vector<std::string> out;
  for (const auto& p : run.points) {
    if (std::find(out.begin(), out.end(), p.workload) == out.end()) out.push_back(p.workload);
  }
  return out;
}

std::vector<const PointResult*> points_of(const RunResult& run, const std::string& workload) {
  std::vector<const PointResult*> out;
  for (const auto& p : run.points) {
    if (p.workload == workload) out.push_back(&p);
  }
  std::stable_sort(out.begin(), out.end(), [](const PointResult* a, const PointResult* b) {
    if (a->params != b->params) return a->params < b->params;
    if (a->gpus != b->gpus) return a->gpus < b->gpus;
    return a->devices < b->devices;
  });
  return out;
}

std::vector<std::string> varying_params(const std::vector<const PointResult*>& points) {
  std::map<std::string, std::vector<Json>> seen;
  std::set<std::string> keys;
  for (const auto* p : points) {
    if (!p->params.is_object()) continue;
    for (auto it = p->params.begin(); it != p->params.end(); ++it) keys.insert(it.key());
  }
  std::vector<std::string> out;
  for (const auto& k : keys) {
    std::optional<Json> first;
    bool varies = false;
    for (const auto* p : points) {
      const Json v = p->params.is_object() && p->params.contains(k) ? p->params[k] : Json();
      if (!first) {
        first = v;
      } else if (*first != v) {
        varies = true;
        break;
      }
    }
    if (varies) out.push_back(k);
  }
  return out;
}

std::string fixed_params_label(const std::vector<const PointResult*>& points) {
  if (points.empty()) return {};
  const auto vary = varying_params(points);
  std::vector<std::string> fixed;
  for (auto it = points.front()->params.begin(); it != points.front()->params.end(); ++it) {
    if (std::find(vary.begin(), vary.end(), it.key()) == vary.end()) fixed.push_back(it.key());
  }
  if (fixed.empty()) return {};
  return params_label(points.front()->params, fixed);
}

const Json* scaling_row(const RunResult& run, const PointResult& point) {
  if (!run.scaling.is_array()) return nullptr;
  // Exact: the row names the point it was computed from.
  for (const auto& series : run.scaling) {
    if (!series.is_object() || json_string(series, "workload") != point.workload) continue;
    if (!series.contains("rows") || !series["rows"].is_array()) continue;
    for (const auto& row : series["rows"]) {
      const auto idx = json_number(row, "point_index");
      const auto g = json_number(row, "gpus");
      if (idx && g && static_cast<std::size_t>(*idx) == point.index &&
          static_cast<int>(*g) == point.gpus) {
        return &row;
      }
    }
  }
  // Otherwise: the series whose parameters are the most specific subset of the point's.
  const Json* best = nullptr;
  std::size_t best_keys = 0;
  for (const auto& series : run.scaling) {
    if (!series.is_object() || json_string(series, "workload") != point.workload) continue;
    const Json params = series.contains("params") ? series["params"] : Json::object();
    if (!subset_of(params, point.params)) continue;
    if (!series.contains("rows") || !series["rows"].is_array()) continue;
    const std::size_t nkeys = params.is_object() ? params.size() : 0;
    if (best && nkeys <= best_keys) continue;
    for (const auto& row : series["rows"]) {
      const auto g = json_number(row, "gpus");
      if (g && static_cast<int>(*g) == point.gpus) {
        best = &row;
        best_keys = nkeys;
        break;
      }
    }
  }
  return best;
}

ThroughputMetric throughput_metric(const RunResult& run, const std::string& workload) {
  ThroughputMetric m;
  if (workload == "gemm") {
    m = {"tflops_per_gpu", "tflops_aggregate", "TFLOP/s"};
  } else if (workload == "allreduce") {
    m = {"", "busbw_GBps", "GB/s"};
  } else if (workload == "train_step") {
    m = {"", "samples_per_s", "samples/s"};
  }
  if (run.scaling.is_array()) {
    for (const auto& s : run.scaling) {
      if (!s.is_object() || json_string(s, "workload") != workload) continue;
      const std::string metric_name = json_string(s, "metric");
      const std::string unit = json_string(s, "unit");
      if (!unit.empty()) m.unit = unit;
      if (!metric_name.empty() && metric_name != m.per_gpu && metric_name != m.aggregate) {
        m.aggregate = metric_name;
      }
      break;
    }
  }
  return m;
}

TelemetrySummary telemetry_summary(const PointResult& point) {
  TelemetrySummary s;
  const Json& t = point.telemetry;
  if (!t.is_object()) return s;
  const Json* gpus = nullptr;
  if (t.contains("gpus") && t["gpus"].is_array()) gpus = &t["gpus"];
  if (!gpus) return s;
  double power_sum = 0, energy_sum = 0;
  int power_n = 0, energy_n = 0;
  std::vector<double> clocks;
  for (const auto& g : *gpus) {
    auto power = json_number(g, "avg_power_w");
    if (!power) power = json_path_number(g, {"power_w", "mean"});
    if (power) {
      power_sum += *power;
      ++power_n;
    }
    if (const auto temp = json_path_number(g, {"temp_c", "max"})) {
      s.max_temp_c = std::max(s.max_temp_c.value_or(*temp), *temp);
    }
    if (const auto clk = json_path_number(g, {"sm_clock_mhz", "median"})) clocks.push_back(*clk);
    if (const auto thr = json_number(g, "throttle_fraction")) {
      s.throttle_fraction = std::max(s.throttle_fraction.value_or(*thr), *thr);
    }
    if (const auto e = json_number(g, "energy_j")) {
      energy_sum += *e;
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
  return t;
}

std::vector<Table> workload_tables(const RunResult& run, const std::string& workload) {
  const auto points = points_of(run, workload);
  if (points.empty()) return {};
  if (workload == "allreduce") return allreduce_tables(run, points);
  if (workload == "train_step") return {train_table(run, points)};
  return {generic_table(run, workload, points)};
}

std::vector<Table> scaling_tables(const RunResult& run) {
  std::vector<Table> tables;
  if (!run.scaling.is_array()) return tables;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Json*>> by_workload;
  for (const auto& s : run.scaling) {
    if (!s.is_object() || !s.contains("rows") || !s["rows"].is_array()) continue;
    const std::string w = json_string(s, "workload");
    if (!by_workload.count(w)) order.push_back(w);
    by_workload[w].push_back(&s);
  }
  for (const auto& w : order) {
    const auto& series = by_workload[w];
    // Parameters that differ between this workload's series label the rows.
    std::set<std::string> keys;
    for (const auto* s : series) {
      const Json params = s->value("params", Json::object());
      for (auto it = params.begin(); it != params.end(); ++it) keys.insert(it.key());
    }
    std::vector<std::string> vary;
    const Json first = series.front()->value("params", Json::object());
    for (const auto& k : keys) {
      for (const auto* s : series) {
        const Json params = s->value("params", Json::object());
        const Json a = params.contains(k) ? params[k] : Json();
        const Json b = first.contains(k) ? first[k] : Json();
        if (a != b) {
          vary.push_back(k);
          break;
        }
      }
    }
    Table t;
    t.title = w;
    std::string metric_name = json_string(*series.front(), "metric");
    const std::string unit = json_string(*series.front(), "unit");
    const std::string mode = json_string(*series.front(), "mode");
    t.caption = "throughput: " + metric_name + (unit.empty() ? "" : " (" + unit + ")") +
                (mode.empty() ? "" : ", " + mode + " scaling");
    t.column("parameters").column("GPUs", Align::right);
    t.column(unit.empty() ? "throughput" : unit, Align::right);
    t.column("speedup", Align::right).column("efficiency", Align::right);
    t.column("Karp-Flatt", Align::right).column("marginal eff.", Align::right);
    for (const auto* s : series) {
      const std::string params = vary.empty()
                                     ? std::string()
                                     : params_short_label(s->value("params", Json::object()), vary);
      bool first_row = true;
      for (const auto& r : (*s)["rows"]) {
        const auto eff = json_number(r, "efficiency");
        RowTone tone = RowTone::normal;
        if (eff && (*eff < 0.5 || *eff > 1.05)) tone = RowTone::warn;
        const auto kf = json_number(r, "karp_flatt");
        const auto me = json_number(r, "marginal_efficiency");
        t.add_row({first_row ? params : "", json_string(r, "gpus"),
                   opt_sig(json_number(r, "throughput")), speedup_text(&r), efficiency_text(&r),
                   kf ? fmt::format("{:.3f}", *kf) : "", me ? format_percent(*me, 1) : ""},
                  tone);
        first_row = false;
      }
    }
    finish(t);
    tables.push_back(std::move(t));
  }
  return tables;
}

Table verdicts_table(const RunResult& run) {
  Table t;
  t.title = "Verdicts";
  t.column("workload").column("verdict").column("anomalies");
  if (!run.verdicts.is_array()) return t;
  for (const auto& v : run.verdicts) {
    if (v.is_string()) {
      t.add_row({"", v.get<std::string>(), ""});
      continue;
    }
    if (!v.is_object()) continue;
    std::string anomalies;
    if (v.contains("anomalies")) {
      const Json& a = v["anomalies"];
      if (a.is_array()) {
        for (const auto& e : a) {
          std::string item;
          if (e.is_object()) {
            const std::string kind = json_string(e, "kind", json_string(e, "type"));
            const std::string text = json_string(e, "text", json_string(e, "message"));
            item = kind.empty() ? (text.empty() ? e.dump() : text)
                                : (text.empty() ? kind : kind + ": " + text);
          } else {
            item = format_json_value(e);
            std::replace(item.begin(), item.end(), '_', ' ');  // "slow_gpu" -> "slow gpu"
          }
          anomalies += (anomalies.empty() ? "" : "; ") + item;
        }
      } else if (!a.is_null()) {
        anomalies = format_json_value(a);
      }
    }
    t.add_row({json_string(v, "workload"), json_string(v, "text"), anomalies},
              anomalies.empty() ? RowTone::normal : RowTone::warn);
  }
  finish(t);
  return t;
}

Table run_doctor_table(const RunResult& run) {
  // The doctor stores {"checks": [...]}; a bare array of checks is accepted too.
  Table t =
      run.doctor.is_array() ? doctor_table(Json{{"checks", run.doctor}}) : doctor_table(run.doctor);
  t.title = "Doctor";
  return t;
}

namespace {

bool array_of_objects(const Json& v) {
  return v.is_array() && !v.empty() &&
         std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_object(); });
}

// Scalars and small arrays go to `kv`; every array of objects (per-GPU records...) becomes a
// table of its own with one column per element, so differences between GPUs line up.
void split_environment(const Json& v, const std::string& key, Table& kv,
                       std::vector<Table>& lists) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      split_environment(it.value(), key.empty() ? it.key() : key + "." + it.key(), kv, lists);
    }
    return;
  }
  if (array_of_objects(v)) {
    Table t;
    t.title = key;
    t.column("field");
    std::vector<std::string> fields;
    std::vector<std::map<std::string, std::string>> values;
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::string label = std::to_string(i);
      for (const char* id : {"index", "device", "rank"}) {
        if (v[i].contains(id) && v[i][id].is_number_integer()) {
          label = format_json_value(v[i][id]);
          break;
        }
      }
      const bool gpus = key == "gpus" || (key.size() >= 5 && key.substr(key.size() - 5) == ".gpus");
      t.column(gpus ? "GPU " + label : label);
      values.emplace_back();
      for (const auto& [k, val] : flatten_json(v[i])) {
        if (std::find(fields.begin(), fields.end(), k) == fields.end()) fields.push_back(k);
        values.back()[k] = val;
      }
    }
    // Fields that differ between elements are marked, identities (uuid, bus id...) aside.
    const auto identity = [](const std::string& f) {
      for (const char* id :
           {"index", "uuid", "serial", "pci", "bus_id", "device", "rank", "minor"}) {
        if (f.find(id) != std::string::npos) return true;
      }
      return false;
    };
    for (const auto& f : fields) {
      std::vector<std::string> row{f};
      std::set<std::string> distinct;
      for (const auto& m : values) {
        const auto it = m.find(f);
        row.push_back(it == m.end() ? "" : it->second);
        distinct.insert(row.back());
      }
      t.add_row(std::move(row),
                distinct.size() > 1 && !identity(f) ? RowTone::warn : RowTone::normal);
    }
    lists.push_back(std::move(t));
    return;
  }
  for (const auto& [k, val] : flatten_json(v, key)) kv.add_row({k, val});
}

}  // namespace

std::vector<Table> environment_tables(const RunResult& run) {
  Table kv;
  kv.title = "Environment";
  kv.column("key").column("value");
  std::vector<Table> lists;
  if (run.environment.is_object()) split_environment(run.environment, "", kv, lists);
  std::vector<Table> out;
  if (!kv.empty()) out.push_back(std::move(kv));
  for (auto& t : lists) out.push_back(std::move(t));
  return out;
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
    t.add_row(
        {std::to_string(p->index), p->workload, params_label(p->params), std::to_string(p->gpus),
         devices_text(p->devices), median_text(*p), noise_text(*p), status, one_line(p->message)},
        tone_of(p->status, p->noisy));
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
