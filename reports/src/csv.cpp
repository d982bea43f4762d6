// CSV export: one row per point.
#include "mgbench/reports/csv.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "mgbench/model/telemetry_keys.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {
namespace {

namespace tk = telemetry_keys;

std::string cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return format_exact(v.get<double>());
  if (v.is_string()) return csv_field(v.get<std::string>());
  return csv_field(v.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string cell(const std::optional<double>& v) { return v ? format_exact(*v) : ""; }

std::string cell(const ParamValue& v) { return cell(v.to_json()); }

std::set<std::string> param_keys_of(const RunResult& run) {
  std::set<std::string> keys;
  for (const auto& p : run.points) {
    for (const auto& entry : p.params) keys.insert(entry.first);
  }
  return keys;
}

std::set<std::string> keys_of(const RunResult& run, const Json PointResult::*member, bool scalars) {
  std::set<std::string> keys;
  for (const auto& p : run.points) {
    const Json& j = p.*member;
    if (!j.is_object()) continue;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (scalars && (it->is_object() || it->is_array())) continue;
      keys.insert(it.key());
    }
  }
  return keys;
}

// The columns a run's points share: their parameters, metrics and verification values.
struct CsvColumns {
  std::set<std::string> params, metrics, verification;
};

void write_header(const CsvColumns& c, std::ostream& out) {
  std::vector<std::string> header = {"index",  "workload", "gpus",   "devices",
                                     "status", "noisy",    "message"};
  for (const auto& k : c.params) header.push_back("param." + k);
  for (const char* h : {"samples", "ops_per_sample", "median_s", "mean_s", "min_s", "max_s",
                        "stdev_s", "rel_stdev", "p05_s", "p95_s", "ci_low_s", "ci_high_s"}) {
    header.push_back(h);
  }
  for (const auto& k : c.metrics) header.push_back("metric." + k);
  for (const char* h :
       {"speedup", "efficiency", "karp_flatt", "marginal_efficiency", "peak_memory_bytes"}) {
    header.push_back(h);
  }
  for (const auto& k : c.verification) header.push_back("verification." + k);
  for (const char* h : {tk::kAvgPowerW, "max_temp_c", tk::kSmClock.key, tk::kThrottleFraction,
                        tk::kEnergyJ, "wall_s", "started_at"}) {
    header.push_back(h);
  }
  for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << csv_field(header[i]);
  out << "\r\n";
}

}  // namespace

void write_csv(const RunResult& run, std::ostream& out) {
  const CsvColumns c{param_keys_of(run), keys_of(run, &PointResult::metrics, false),
                     keys_of(run, &PointResult::verification, true)};
  const auto& param_keys = c.params;
  const auto& metric_keys = c.metrics;
  const auto& verify_keys = c.verification;
  write_header(c, out);

  std::vector<const PointResult*> points;
  for (const auto& p : run.points) points.push_back(&p);
  std::stable_sort(points.begin(), points.end(),
                   [](const PointResult* a, const PointResult* b) { return a->index < b->index; });
  for (const auto* p : points) {
    std::vector<std::string> row;
    row.push_back(std::to_string(p->index));
    row.push_back(csv_field(p->workload));
    row.push_back(std::to_string(p->gpus));
    std::string devices;
    for (std::size_t i = 0; i < p->devices.size(); ++i) {
      devices += (i ? " " : "") + std::to_string(p->devices[i]);
    }
    row.push_back(devices);
    row.push_back(to_string(p->status));
    row.push_back(p->noisy ? "true" : "false");
    row.push_back(csv_field(p->message));
    for (const auto& k : param_keys) {
      const ParamValue* v = p->params.find(k);
      row.push_back(v != nullptr ? cell(*v) : "");
    }
    const Statistics& s = p->stats;
    const bool have = s.n > 0;
    row.push_back(std::to_string(s.n));
    row.push_back(std::to_string(p->ops_per_sample));
    for (double v : {s.median, s.mean, s.min, s.max, s.stdev, s.rel_stdev, s.p05, s.p95, s.ci_low,
                     s.ci_high}) {
      row.push_back(have ? format_exact(v) : "");
    }
    for (const auto& k : metric_keys) {
      row.push_back(p->metrics.is_object() && p->metrics.contains(k) ? cell(p->metrics[k]) : "");
    }
    const ScalingRow* sc = scaling_row(run, *p);
    for (const std::optional<double>& v :
         {sc ? std::optional<double>(sc->speedup) : std::nullopt,
          sc ? std::optional<double>(sc->efficiency) : std::nullopt,
          sc ? sc->karp_flatt : std::nullopt, sc ? sc->marginal_efficiency : std::nullopt}) {
      row.push_back(cell(v));
    }
    row.push_back(cell(peak_memory_bytes(*p)));
    for (const auto& k : verify_keys) {
      row.push_back(p->verification.is_object() && p->verification.contains(k)
                        ? cell(p->verification[k])
                        : "");
    }
    const TelemetrySummary t = telemetry_summary(*p);
    row.push_back(cell(t.avg_power_w));
    row.push_back(cell(t.max_temp_c));
    row.push_back(cell(t.sm_clock_mhz));
    row.push_back(cell(t.throttle_fraction));
    row.push_back(cell(t.energy_j));
    row.push_back(format_exact(p->wall_s));
    row.push_back(csv_field(p->started_at));
    for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << row[i];
    out << "\r\n";
  }
}

void CsvPrinter::print(const Printable& what, std::ostream& out) const { write_csv(what.run, out); }

}  // namespace mgbench::reports
