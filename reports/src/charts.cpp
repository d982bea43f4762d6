// Builds the report's charts from a RunResult (see charts.hpp).
#include "mgbench/reports/charts.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/reports/svg.hpp"

namespace mgbench::reports {

std::string gpus_label(int n) { return n == 1 ? "1 GPU" : fmt::format("{} GPUs", n); }

// "aggregate TFLOP/s" for "tflops_aggregate": metric names as axis and chart labels.
std::string metric_label(const std::string& metric) {
  static const std::map<std::string, std::string> kNames = {
      {"tflops_aggregate", "aggregate TFLOP/s"},
      {"tflops_per_gpu", "TFLOP/s per GPU"},
      {"samples_per_s", "samples/s"},
      {"busbw_GBps", "busbw"},
      {"algbw_GBps", "algbw"}};
  const auto it = kNames.find(metric);
  if (it != kNames.end()) return it->second;
  std::string out = metric.empty() ? "throughput" : metric;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

// "aggregate TFLOP/s", "busbw (GB/s)": the unit only where the label does not carry it.
std::string metric_axis_label(const std::string& metric, const std::string& unit) {
  const std::string label = metric_label(metric);
  if (unit.empty() || label.find(unit) != std::string::npos) return label;
  return label + " (" + unit + ")";
}

namespace {

using Points = std::vector<const PointResult*>;
using YFn = std::function<std::optional<double>(const PointResult&)>;

constexpr std::size_t kMaxScalingCharts = 6;
constexpr std::size_t kMaxSeriesPerChart = 8;
constexpr std::size_t kMaxTimelinePoints = 1500;

class ChartList {
 public:
  std::vector<ChartEntry> entries;

  void add(const std::string& section, const std::string& kind, svg::LineChart chart,
           const std::string& key = "") {
    if (!svg::has_data(chart)) return;
    chart.id = make_id(section, kind, key);
    entries.push_back({section, chart.id, chart.title, kind, svg::render(chart), false});
  }
  void add(const std::string& section, const std::string& kind, svg::StackedBarChart chart,
           const std::string& key = "") {
    if (!svg::has_data(chart)) return;
    chart.id = make_id(section, kind, key);
    entries.push_back({section, chart.id, chart.title, kind, svg::render(chart), false});
  }

 private:
  // "gemm-scaling-bf16-cublas-size-8192": section, kind and a distinguishing key, at most
  // 64 characters, unique.
  std::string make_id(const std::string& section, const std::string& kind, const std::string& key) {
    std::string id = slug(section + "-" + kind + (key.empty() ? "" : "-" + key));
    if (id.size() > 64) id.resize(64);
    while (!id.empty() && id.back() == '-') id.pop_back();
    if (used_.insert(id).second) return id;
    for (int k = 2;; ++k) {
      const std::string candidate = id + "-" + std::to_string(k);
      if (used_.insert(candidate).second) return candidate;
    }
  }

  std::set<std::string> used_;
};

svg::Axis make_axis(std::string label, svg::Scale scale, svg::TickFormat format) {
  svg::Axis a;
  a.label = std::move(label);
  a.scale = scale;
  a.format = format;
  return a;
}

std::string series_name(const PointResult& p, const std::vector<std::string>& keys,
                        bool with_gpus) {
  std::string out;
  if (with_gpus) out = gpus_label(p.gpus);
  if (!keys.empty()) {
    const std::string params = params_short_label(p.params, keys);
    if (!params.empty()) out += (out.empty() ? "" : " · ") + params;
  }
  return out.empty() ? "measured" : out;
}

std::optional<double> param_number(const PointResult& p, const std::string& key) {
  return json_number(p.params, key);
}

bool positive_ratio_at_least(const std::vector<double>& xs, double ratio) {
  double lo = INFINITY, hi = 0;
  for (double x : xs) {
    if (!(x > 0)) return false;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  return !xs.empty() && hi / lo >= ratio;
}

// Groups points into series keyed by (GPU count when it varies, `series_keys`), x from the
// parameter `x_key`, y from `y`; points where y is missing are left out.
std::vector<svg::Series> make_series(const Points& points, const std::string& x_key,
                                     const std::vector<std::string>& series_keys, bool with_gpus,
                                     const YFn& y, const std::string& x_desc) {
  std::map<std::string, std::vector<const PointResult*>> groups;
  std::vector<std::string> order;
  for (const auto* p : points) {
    const std::string name = series_name(*p, series_keys, with_gpus);
    if (!groups.count(name)) order.push_back(name);
    groups[name].push_back(p);
  }
  // Order series by GPU count, then by name.
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    const int ga = groups[a].front()->gpus, gb = groups[b].front()->gpus;
    if (ga != gb) return ga < gb;
    return a < b;
  });
  std::vector<svg::Series> out;
  for (const auto& name : order) {
    auto pts = groups[name];
    std::stable_sort(pts.begin(), pts.end(), [&](const PointResult* a, const PointResult* b) {
      return param_number(*a, x_key).value_or(0) < param_number(*b, x_key).value_or(0);
    });
    svg::Series s;
    s.name = name;
    for (const auto* p : pts) {
      const auto x = param_number(*p, x_key);
      const auto v = y(*p);
      if (!x || !v) continue;
      s.x.push_back(*x);
      s.y.push_back(*v);
      s.point_titles.push_back(fmt::format("{}: {} {}, {}", name, x_desc,
                                           format_json_value(p->params[x_key]), format_sig(*v, 4)));
    }
    if (!s.x.empty()) out.push_back(std::move(s));
  }
  if (out.size() > kMaxSeriesPerChart * 2) out.resize(kMaxSeriesPerChart * 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].colour = static_cast<int>(i % 7);
    if (i >= 7) out[i].line = svg::LineStyle::dashed;
  }
  // A single unnamed line needs no legend.
  if (out.size() == 1 && out[0].name == "measured") out[0].in_legend = false;
  return out;
}

bool gpus_vary(const Points& points) {
  std::set<int> g;
  for (const auto* p : points) g.insert(p->gpus);
  return g.size() > 1;
}

std::vector<std::string> without(std::vector<std::string> keys, const std::set<std::string>& drop) {
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [&](const std::string& k) { return drop.count(k) > 0; }),
             keys.end());
  return keys;
}

Points ok_points(const Points& points) {
  Points out;
  for (const auto* p : points) {
    if (p->status == Status::ok) out.push_back(p);
  }
  return out;
}

std::vector<double> x_values(const Points& points, const std::string& key) {
  std::vector<double> xs;
  for (const auto* p : points) {
    if (const auto v = param_number(*p, key)) xs.push_back(*v);
  }
  return xs;
}

// Splits points by the values of `keys` (one chart each), in order of appearance.
std::vector<std::pair<std::string, Points>> split_by(const Points& points,
                                                     const std::vector<std::string>& keys) {
  std::vector<std::pair<std::string, Points>> out;
  for (const auto* p : points) {
    const std::string label = keys.empty() ? std::string() : params_short_label(p->params, keys);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == label; });
    if (it == out.end()) {
      out.push_back({label, {p}});
    } else {
      it->second.push_back(p);
    }
  }
  return out;
}

// --- scaling ---------------------------------------------------------------------------------

struct ScalingSeries {
  Json params;
  std::string metric, unit, mode;
  std::vector<double> gpus, throughput, efficiency;
};

void scaling_charts(const RunResult& run, ChartList& charts) {
  if (!run.scaling.is_array()) return;
  std::map<std::string, std::vector<ScalingSeries>> by_workload;
  std::vector<std::string> order;
  for (const auto& s : run.scaling) {
    if (!s.is_object() || !s.contains("rows") || !s["rows"].is_array()) continue;
    ScalingSeries ss;
    ss.params = s.value("params", Json::object());
    ss.metric = json_string(s, "metric");
    ss.unit = json_string(s, "unit");
    ss.mode = json_string(s, "mode");
    for (const auto& r : s["rows"]) {
      const auto g = json_number(r, "gpus");
      const auto x = json_number(r, "throughput");
      if (!g || !x) continue;
      ss.gpus.push_back(*g);
      ss.throughput.push_back(*x);
      ss.efficiency.push_back(json_number(r, "efficiency").value_or(NAN));
    }
    std::set<double> distinct(ss.gpus.begin(), ss.gpus.end());
    if (distinct.size() < 2) continue;
    const std::string w = json_string(s, "workload");
    if (!by_workload.count(w)) order.push_back(w);
    by_workload[w].push_back(std::move(ss));
  }
  for (const auto& w : order) {
    auto all = by_workload[w];
    // Parameters that differ between this workload's series label the charts.
    std::set<std::string> keys;
    for (const auto& s : all) {
      for (auto it = s.params.begin(); it != s.params.end(); ++it) keys.insert(it.key());
    }
    std::vector<std::string> vary;
    for (const auto& k : keys) {
      for (const auto& s : all) {
        const Json a = s.params.contains(k) ? s.params[k] : Json();
        const Json b = all.front().params.contains(k) ? all.front().params[k] : Json();
        if (a != b) {
          vary.push_back(k);
          break;
        }
      }
    }
    // Too many parameter sets: keep the largest size-like value per other combination.
    std::string size_key;
    for (const char* k : {"bytes", "size", "m", "batch", "batch_size", "per_gpu_batch"}) {
      if (std::find(vary.begin(), vary.end(), k) != vary.end()) {
        size_key = k;
        break;
      }
    }
    // Parameters that move with the size (count with bytes; n, k with m for square GEMMs).
    static const std::set<std::string> kSizeLike = {
        "bytes",      "count",         "size",         "m",     "n", "k", "batch",
        "batch_size", "per_gpu_batch", "global_batch", "tokens"};
    std::size_t total = all.size();
    if (all.size() > kMaxScalingCharts && !size_key.empty()) {
      std::map<std::string, ScalingSeries> best;
      std::vector<std::string> keep_order;
      for (const auto& s : all) {
        Json rest = s.params;
        for (const auto& k : kSizeLike) rest.erase(k);
        const std::string key = rest.dump();
        const double size = json_number(s.params, size_key).value_or(0);
        if (!best.count(key)) {
          keep_order.push_back(key);
          best[key] = s;
        } else if (size > json_number(best[key].params, size_key).value_or(0)) {
          best[key] = s;
        }
      }
      all.clear();
      for (const auto& k : keep_order) all.push_back(best[k]);
    }
    const std::size_t shown = std::min(all.size(), kMaxScalingCharts);
    std::set<double> gpu_ticks;
    for (std::size_t i = 0; i < shown; ++i)
      gpu_ticks.insert(all[i].gpus.begin(), all[i].gpus.end());
    const std::string note =
        shown < total ? fmt::format("showing {} of {} parameter sets", shown, total) : "";

    svg::LineChart eff;
    eff.title = w + ": scaling efficiency";
    eff.subtitle = note;
    eff.x = make_axis("GPUs", svg::Scale::linear, svg::TickFormat::integer);
    eff.x.zero_based = false;
    eff.x.ticks.assign(gpu_ticks.begin(), gpu_ticks.end());
    eff.y = make_axis("efficiency (%)", svg::Scale::linear, svg::TickFormat::number);
    eff.ref_lines.push_back({100.0, "ideal 100 %", false});
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& s = all[i];
      std::string label = vary.empty() ? std::string() : params_short_label(s.params, vary);
      if (label.empty()) label = s.mode.empty() ? "measured" : s.mode;
      svg::LineChart c;
      c.title = w + ": " + metric_label(s.metric) + " vs GPU count";
      c.subtitle = label + (s.mode.empty() ? "" : " · " + s.mode + " scaling");
      c.height = 360;
      c.x = eff.x;
      c.y = make_axis(metric_axis_label(s.metric, s.unit), svg::Scale::linear,
                      svg::TickFormat::number);
      svg::Series measured;
      measured.name = "measured";
      measured.colour = 0;
      measured.x = s.gpus;
      measured.y = s.throughput;
      svg::Series ideal;
      ideal.name = "ideal (linear)";
      ideal.colour = 6;
      ideal.line = svg::LineStyle::dashed;
      ideal.markers = false;
      // Ideal: the smallest GPU count's throughput scaled linearly.
      std::size_t base = 0;
      for (std::size_t k = 1; k < s.gpus.size(); ++k) {
        if (s.gpus[k] < s.gpus[base]) base = k;
      }
      std::vector<std::size_t> idx(s.gpus.size());
      for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = k;
      std::sort(idx.begin(), idx.end(),
                [&](std::size_t a, std::size_t b) { return s.gpus[a] < s.gpus[b]; });
      measured.x.clear();
      measured.y.clear();
      for (std::size_t k : idx) {
        measured.x.push_back(s.gpus[k]);
        measured.y.push_back(s.throughput[k]);
        ideal.x.push_back(s.gpus[k]);
        ideal.y.push_back(s.throughput[base] * s.gpus[k] / s.gpus[base]);
      }
      c.series = {ideal, measured};
      charts.add(w, "scaling", c, label);

      svg::Series e;
      e.name = label;
      e.colour = static_cast<int>(i % 7);
      for (std::size_t k : idx) {
        e.x.push_back(s.gpus[k]);
        e.y.push_back(s.efficiency[k] * 100.0);
      }
      eff.series.push_back(std::move(e));
    }
    // Start the axis below the lowest efficiency (at most at 50 %) so differences show.
    double lowest = 100;
    for (const auto& e : eff.series) {
      for (double v : e.y) {
        if (std::isfinite(v)) lowest = std::min(lowest, v);
      }
    }
    eff.y.zero_based = false;
    eff.y.min = std::max(0.0, std::min(50.0, std::floor((lowest - 5) / 10) * 10));
    charts.add(w, "efficiency", eff);
  }
}

// --- GEMM ------------------------------------------------------------------------------------

void gemm_charts(const RunResult& run, ChartList& charts) {
  const Points all = ok_points(points_of(run, "gemm"));
  if (all.empty()) return;
  // One chart per shape kind ("square": M = N = K; "batch": M = tokens, N = K = hidden) and
  // dtype (their TFLOP/s differ by 10x and more); x is the size axis; one line per
  // implementation at the smallest GPU count, dashed at the largest one.
  std::size_t made = 0;
  for (const auto& [label, points] : split_by(all, {"shape", "dtype"})) {
    if (++made > 8) break;
    const auto vary = varying_params(points);
    std::string x_key;
    for (const char* k : {"size", "m", "n", "k", "batch", "tokens"}) {
      if (std::find(vary.begin(), vary.end(), k) != vary.end()) {
        x_key = k;
        break;
      }
    }
    if (x_key.empty()) continue;
    bool square = x_key == "m";
    for (const auto* p : points) {
      const auto m = param_number(*p, "m"), n = param_number(*p, "n"), k = param_number(*p, "k");
      if (!m || !n || !k || *m != *n || *n != *k) square = false;
    }
    const auto series_keys = without(
        vary, {x_key, "m", "n", "k", "shape", "size", "batch", "hidden", "tokens", "dtype"});
    int lo = points.front()->gpus, hi = lo;
    for (const auto* p : points) {
      lo = std::min(lo, p->gpus);
      hi = std::max(hi, p->gpus);
    }
    Points at_lo, at_hi;
    for (const auto* p : points) {
      if (p->gpus == lo) at_lo.push_back(p);
      if (p->gpus == hi && hi != lo) at_hi.push_back(p);
    }
    svg::LineChart c;
    c.title = "gemm: TFLOP/s per GPU vs size";
    c.subtitle = label;
    if (!square && x_key == "m" && points.front()->params.contains("n")) {
      c.subtitle += " · N = K = " + format_json_value(points.front()->params["n"]);
    }
    c.subtitle += hi != lo ? " · solid " + gpus_label(lo) + ", dashed " + gpus_label(hi)
                           : " · " + gpus_label(lo);
    const auto xs = x_values(points, x_key);
    const bool log = positive_ratio_at_least(xs, 3);
    c.x = make_axis(square ? "matrix size M = N = K" : (x_key == "m" ? "M (batch tokens)" : x_key),
                    log ? svg::Scale::log2 : svg::Scale::linear, svg::TickFormat::integer);
    c.x.zero_based = false;
    if (!log) {
      std::set<double> ticks(xs.begin(), xs.end());
      if (ticks.size() <= 8) c.x.ticks.assign(ticks.begin(), ticks.end());
    }
    c.y = make_axis("TFLOP/s per GPU", svg::Scale::linear, svg::TickFormat::number);
    const YFn tflops = [](const PointResult& p) {
      return json_number(p.metrics, "tflops_per_gpu");
    };
    const std::string desc = square ? "size" : x_key;
    c.series = make_series(at_lo, x_key, series_keys, false, tflops, desc);
    if (!at_hi.empty()) {
      auto dashed = make_series(at_hi, x_key, series_keys, false, tflops, desc);
      for (auto& d : dashed) {
        // Same colour as the line of the same implementation at the smallest count.
        for (const auto& solid : c.series) {
          if (solid.name == d.name) d.colour = solid.colour;
        }
        d.name += " · " + gpus_label(hi);
        d.line = svg::LineStyle::dashed;
      }
      for (auto& solid : c.series) solid.name += " · " + gpus_label(lo);
      for (auto& d : dashed) c.series.push_back(std::move(d));
    }
    charts.add("gemm", "size", c, label);
  }
}

// --- all-reduce ------------------------------------------------------------------------------

void allreduce_charts(const RunResult& run, ChartList& charts) {
  const Points all = ok_points(points_of(run, "allreduce"));
  if (all.empty()) return;
  const auto vary = varying_params(all);
  if (std::find(vary.begin(), vary.end(), "bytes") == vary.end()) return;
  const auto series_keys = without(vary, {"bytes", "count", "dtype"});
  const bool with_gpus = gpus_vary(all);
  for (const auto& [dtype_label, points] : split_by(all, {"dtype"})) {
    bool any_busbw = false;
    for (const auto* p : points) {
      if (json_number(p->metrics, "busbw_GBps").value_or(0) > 0) any_busbw = true;
    }
    const std::string metric = any_busbw ? "busbw_GBps" : "algbw_GBps";
    svg::LineChart c;
    c.title = std::string("allreduce: ") + (any_busbw ? "bus bandwidth" : "algorithm bandwidth") +
              " vs message size";
    c.subtitle = dtype_label.empty() ? "" : "dtype " + dtype_label;
    if (!any_busbw)
      c.subtitle +=
          (c.subtitle.empty() ? "" : " · ") + std::string("1 GPU: busbw is 0 by definition");
    c.x = make_axis("message size", svg::Scale::log2, svg::TickFormat::bytes);
    c.x.zero_based = false;
    c.y = make_axis(any_busbw ? "busbw (GB/s)" : "algbw (GB/s)", svg::Scale::linear,
                    svg::TickFormat::number);
    c.series = make_series(
        points, "bytes", series_keys, with_gpus,
        [&](const PointResult& p) { return json_number(p.metrics, metric); }, "bytes");
    for (auto& s : c.series) {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        s.point_titles[i] =
            fmt::format("{}: {}, {} GB/s", s.name, format_bytes_iec(s.x[i]), format_sig(s.y[i], 4));
      }
    }
    charts.add("allreduce", "busbw", c, dtype_label);

    svg::LineChart t;
    t.title = "allreduce: time vs message size";
    t.subtitle = dtype_label.empty() ? "" : "dtype " + dtype_label;
    t.x = c.x;
    t.y = make_axis("time (us)", svg::Scale::log10, svg::TickFormat::number);
    t.series = make_series(
        points, "bytes", series_keys, with_gpus,
        [](const PointResult& p) -> std::optional<double> {
          if (const auto v = json_number(p.metrics, "time_us")) return v;
          if (p.stats.n > 0) return p.stats.median * 1e6;
          return std::nullopt;
        },
        "bytes");
    for (auto& s : t.series) {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        s.point_titles[i] =
            fmt::format("{}: {}, {} us", s.name, format_bytes_iec(s.x[i]), format_sig(s.y[i], 4));
      }
    }
    charts.add("allreduce", "time", t, dtype_label);
  }
}

// --- training step ---------------------------------------------------------------------------

std::optional<double> first_metric(const PointResult& p, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (const auto v = point_metric(p, n)) return v;
  }
  return std::nullopt;
}

void train_charts(const RunResult& run, ChartList& charts) {
  const Points all = points_of(run, "train_step");
  if (all.empty()) return;
  const auto vary = varying_params(all);
  std::string batch_key;
  for (const auto& k : vary) {
    if (k.find("batch") != std::string::npos && !k.empty()) {
      bool numeric = true;
      for (const auto* p : all) {
        if (p->params.contains(k) && !p->params[k].is_number()) numeric = false;
      }
      if (numeric) {
        batch_key = k;
        break;
      }
    }
  }
  const bool with_gpus = gpus_vary(all);
  const Points ok = ok_points(all);
  if (!batch_key.empty()) {
    const auto series_keys = without(vary, {batch_key});
    const auto xs = x_values(all, batch_key);
    const bool log = positive_ratio_at_least(xs, 3);
    svg::Axis x = make_axis("per-GPU batch size (" + batch_key + ")",
                            log ? svg::Scale::log2 : svg::Scale::linear, svg::TickFormat::integer);
    x.zero_based = false;
    svg::LineChart c;
    c.title = "train_step: samples/s vs batch size";
    c.subtitle = fixed_params_label(all);
    c.x = x;
    c.y = make_axis("samples/s", svg::Scale::linear, svg::TickFormat::number);
    c.series = make_series(
        ok, batch_key, series_keys, with_gpus,
        [](const PointResult& p) { return json_number(p.metrics, "samples_per_s"); }, "batch");
    charts.add("train_step", "throughput", c);

    // Memory vs batch, with the OOM boundary of each series.
    svg::LineChart m;
    m.title = "train_step: peak memory vs batch size";
    m.subtitle = "peak device memory per GPU (max over ranks)";
    m.x = x;
    m.y = make_axis("peak memory (GiB)", svg::Scale::linear, svg::TickFormat::number);
    Points with_memory;
    for (const auto* p : all) {
      if (peak_memory_bytes(*p)) with_memory.push_back(p);
    }
    m.series = make_series(
        with_memory, batch_key, series_keys, with_gpus,
        [](const PointResult& p) -> std::optional<double> {
          const auto b = peak_memory_bytes(p);
          if (!b) return std::nullopt;
          return *b / (1024.0 * 1024.0 * 1024.0);
        },
        "batch");
    // Series with identical points (memory per GPU rarely depends on the GPU count) merge
    // into one line named after all of them.
    std::vector<svg::Series> merged;
    for (auto& series : m.series) {
      auto same = std::find_if(merged.begin(), merged.end(), [&](const svg::Series& o) {
        return o.x == series.x && o.y == series.y;
      });
      if (same == merged.end()) {
        merged.push_back(std::move(series));
      } else {
        same->name += ", " + series.name;
      }
    }
    for (std::size_t i = 0; i < merged.size(); ++i) merged[i].colour = static_cast<int>(i % 7);
    m.series = std::move(merged);
    std::map<double, std::vector<std::string>> oom_at;  // smallest OOM batch per series
    std::map<std::string, double> first_oom;
    for (const auto* p : all) {
      if (p->status != Status::oom) continue;
      const auto b = param_number(*p, batch_key);
      if (!b) continue;
      const std::string name = series_name(*p, series_keys, with_gpus);
      if (!first_oom.count(name) || *b < first_oom[name]) first_oom[name] = *b;
    }
    for (const auto& [name, b] : first_oom) oom_at[b].push_back(name);
    for (const auto& [b, names] : oom_at) {
      std::string label = "OOM at batch " + format_plain(b);
      if (oom_at.size() > 1 || names.size() < m.series.size()) {
        std::string who;
        for (const auto& n : names) who += (who.empty() ? "" : ", ") + n;
        if (names.size() <= 2) label += " (" + who + ")";
      }
      m.ref_lines.push_back({b, label, true});
    }
    if (!m.ref_lines.empty() && m.series.empty()) {
      // Nothing fitted at all: still show where it ran out of memory.
      svg::Series none;
      none.name = "no batch fitted";
      m.series.push_back(none);
    }
    charts.add("train_step", "memory", m);
  }

  // Step-time breakdown: stacked bars per GPU count (and batch), one chart per other setting.
  std::vector<std::string> chart_keys = without(vary, {batch_key});
  std::size_t made = 0;
  for (const auto& [label, points] : split_by(ok, chart_keys)) {
    if (++made > 4) break;
    Points usable;
    for (const auto* p : points) {
      if (point_metric(*p, "exposed_comm_s")) usable.push_back(p);
    }
    if (usable.empty()) continue;
    std::stable_sort(usable.begin(), usable.end(), [&](const PointResult* a, const PointResult* b) {
      if (a->gpus != b->gpus) return a->gpus < b->gpus;
      return param_number(*a, batch_key).value_or(0) < param_number(*b, batch_key).value_or(0);
    });
    if (usable.size() > 12 && !batch_key.empty()) {
      // Keep the largest batch that every GPU count ran.
      std::map<double, std::set<int>> counts;
      std::set<int> all_counts;
      for (const auto* p : usable) {
        counts[param_number(*p, batch_key).value_or(0)].insert(p->gpus);
        all_counts.insert(p->gpus);
      }
      double chosen = counts.rbegin()->first;
      for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
        if (it->second == all_counts) {
          chosen = it->first;
          break;
        }
      }
      Points keep;
      for (const auto* p : usable) {
        if (param_number(*p, batch_key).value_or(0) == chosen) keep.push_back(p);
      }
      usable = keep;
      if (usable.size() > 12) usable.resize(12);
    }
    svg::StackedBarChart c;
    c.title = "train_step: step-time breakdown";
    c.subtitle = label;
    c.x_label = batch_key.empty() ? "GPUs" : "GPUs and per-GPU batch";
    c.y = make_axis("time per step (ms)", svg::Scale::linear, svg::TickFormat::number);
    svg::Stack compute{"compute", {}, 0}, h2d{"host-to-device copy", {}, 2};
    svg::Stack optim{"optimizer", {}, 3}, comm{"exposed communication", {}, 1};
    for (const auto* p : usable) {
      // The breakdown's own step time (same measurement as its parts) when recorded.
      const double step =
          first_metric(*p, {"breakdown_step_s", "step_time_s"}).value_or(p->stats.median);
      const double exposed = first_metric(*p, {"exposed_comm_s"}).value_or(0);
      const double h = first_metric(*p, {"h2d_s", "h2d_time_s", "data_copy_s"}).value_or(0);
      const double o = first_metric(*p, {"optimizer_s", "optimizer_time_s"}).value_or(0);
      compute.values.push_back(std::max(0.0, step - exposed - h - o) * 1e3);
      h2d.values.push_back(h * 1e3);
      optim.values.push_back(o * 1e3);
      comm.values.push_back(exposed * 1e3);
      std::string cat = gpus_label(p->gpus);
      if (!batch_key.empty() && p->params.contains(batch_key)) {
        cat += "\nbatch " + format_json_value(p->params[batch_key]);
      }
      c.categories.push_back(cat);
    }
    c.stacks = {compute};
    if (std::any_of(h2d.values.begin(), h2d.values.end(), [](double v) { return v > 0; })) {
      c.stacks.push_back(h2d);
    }
    if (std::any_of(optim.values.begin(), optim.values.end(), [](double v) { return v > 0; })) {
      c.stacks.push_back(optim);
    }
    c.stacks.push_back(comm);
    charts.add("train_step", "breakdown", c, label);
  }
}

// --- telemetry -------------------------------------------------------------------------------

std::vector<double> numbers_of(const Json& a) {
  std::vector<double> out;
  if (!a.is_array()) return out;
  out.reserve(a.size());
  for (const auto& v : a) out.push_back(v.is_number() ? v.get<double>() : NAN);
  return out;
}

void telemetry_charts(const RunResult& run, ChartList& charts) {
  const Json& ts = run.telemetry_series;
  if (!ts.is_object() || !ts.contains("per_gpu") || !ts["per_gpu"].is_array()) return;
  const std::vector<double> t = numbers_of(ts.value("t_s", Json::array()));
  if (t.size() < 2) return;
  struct Metric {
    const char* key;
    const char* name;
    const char* axis;
    bool zero_based;
  };
  const Metric metrics[] = {{"power_w", "power", "power (W)", true},
                            {"temp_c", "temperature", "temperature (°C)", false},
                            {"sm_clock_mhz", "SM clock", "SM clock (MHz)", false}};
  // Shared y ranges across GPUs so their charts compare at a glance.
  std::map<std::string, std::pair<double, double>> range;
  for (const auto& g : ts["per_gpu"]) {
    for (const auto& m : metrics) {
      for (double v : numbers_of(g.value(m.key, Json::array()))) {
        if (!std::isfinite(v)) continue;
        auto& r = range.try_emplace(m.key, v, v).first->second;
        r.first = std::min(r.first, v);
        r.second = std::max(r.second, v);
      }
    }
  }
  const std::size_t stride = (t.size() + kMaxTimelinePoints - 1) / kMaxTimelinePoints;
  std::size_t gi = 0;
  for (const auto& g : ts["per_gpu"]) {
    if (!g.is_object()) continue;
    const std::string device =
        g.contains("device") ? format_json_value(g["device"]) : std::to_string(gi);
    // Throttled intervals from the 0/1 flags at full resolution.
    std::vector<svg::Band> bands;
    const std::vector<double> thr = numbers_of(g.value("throttled", Json::array()));
    for (std::size_t i = 0; i < std::min(thr.size(), t.size()); ++i) {
      if (!(thr[i] > 0)) continue;
      const double x0 = t[i];
      const double dt = i > 0 ? t[i] - t[i - 1] : t[1] - t[0];
      const double x1 = i + 1 < t.size() ? t[i + 1] : t[i] + dt;
      if (!bands.empty() && std::fabs(bands.back().x1 - x0) < 1e-12) {
        bands.back().x1 = x1;
      } else {
        bands.push_back({x0, x1});
      }
    }
    for (const auto& m : metrics) {
      const std::vector<double> v = numbers_of(g.value(m.key, Json::array()));
      if (v.empty()) continue;
      svg::LineChart c;
      c.title = "GPU " + device + ": " + m.name;
      c.width = 480;
      c.height = 300;
      // The run-level series joins the measured points back to back ("points" lists them).
      c.x = make_axis(ts.contains("points") ? "time in measured points (s)" : "time (s)",
                      svg::Scale::linear, svg::TickFormat::number);
      c.y = make_axis(m.axis, svg::Scale::linear, svg::TickFormat::number);
      c.y.zero_based = m.zero_based;
      if (range.count(m.key)) {
        const auto [lo, hi] = range[m.key];
        const double pad = std::max(1.0, (hi - lo) * 0.05);
        if (!m.zero_based) c.y.min = std::floor(lo - pad);
        c.y.max = hi + pad;
      }
      svg::Series s;
      s.name = "";
      s.colour = static_cast<int>(gi % 7);
      s.markers = false;
      s.in_legend = false;
      for (std::size_t i = 0; i < std::min(v.size(), t.size()); i += stride) {
        s.x.push_back(t[i]);
        s.y.push_back(v[i]);
      }
      c.series.push_back(std::move(s));
      c.bands = bands;
      c.band_label = "throttled";
      charts.add("telemetry", "timeline", c, "gpu-" + device + "-" + m.key);
    }
    ++gi;
  }
}

}  // namespace

std::vector<ChartEntry> build_charts(const RunResult& run) {
  ChartList charts;
  scaling_charts(run, charts);
  gemm_charts(run, charts);
  allreduce_charts(run, charts);
  train_charts(run, charts);
  telemetry_charts(run, charts);
  // Stable order: by workload appearance, then telemetry.
  const auto order = workloads_of(run);
  std::vector<ChartEntry> out;
  for (const auto& w : order) {
    for (const auto& e : charts.entries) {
      if (e.section == w) out.push_back(e);
    }
  }
  for (const auto& e : charts.entries) {
    if (std::find(order.begin(), order.end(), e.section) == order.end()) out.push_back(e);
  }
  return out;
}

}  // namespace mgbench::reports
