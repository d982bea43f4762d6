#include "mgbench/model/results.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <set>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_number.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/limits.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/non_finite.hpp"
#include "mgbench/model/group.hpp"

namespace mgbench {

const char* to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::waived: return "waived";
    case Status::oom: return "oom";
    case Status::wrong: return "wrong";
    case Status::failed: return "failed";
    case Status::timeout: return "timeout";
  }
  return "failed";
}

Status status_from_string(const std::string& text) {
  for (Status s : {Status::ok, Status::skipped, Status::waived, Status::oom, Status::wrong,
                   Status::failed, Status::timeout}) {
    if (text == to_string(s)) return s;
  }
  throw UsageError(fmt::format("unknown point status '{}'", text));
}

std::string point_key(const PointResult& point, bool with_devices) {
  std::string key = point.workload + '|' + dump_json(point.params) + "|gpus=" +
                    std::to_string(point.gpus);
  if (with_devices) {
    key += "|devices=";
    for (int d : point.devices) key += std::to_string(d) + ',';
  }
  return key;
}

namespace {

// A number, or NaN for null: a non-finite value was written as null by older versions, and
// such a file must still load.
double number_or_nan(const Json& j) {
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  return j.get<double>();
}

double number_at(const Json& j, const char* key) { return number_or_nan(j.at(key)); }

std::vector<double> numbers_or_nan(const Json& j) {
  if (!j.is_array()) throw UsageError("samples is not an array");
  std::vector<double> out;
  out.reserve(j.size());
  for (const Json& v : j) out.push_back(number_or_nan(v));
  return out;
}

std::string first_non_finite(const Json& metrics) {
  if (!metrics.is_object()) return {};
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    if (it->is_number() && !std::isfinite(it->get<double>())) return it.key();
  }
  return {};
}

}  // namespace

void reject_non_finite(PointResult& point) {
  std::string why;
  for (std::size_t i = 0; i < point.samples.size() && why.empty(); ++i) {
    if (!std::isfinite(point.samples[i])) why = fmt::format("sample {} is not finite", i);
  }
  const Statistics& st = point.stats;
  for (double v : {st.median, st.mean, st.min, st.max, st.stdev, st.rel_stdev, st.p05, st.p95,
                   st.ci_low, st.ci_high}) {
    if (why.empty() && !std::isfinite(v)) why = "a statistic is not finite";
  }
  if (const std::string metric = first_non_finite(point.metrics); why.empty() && !metric.empty()) {
    why = fmt::format("metric '{}' is not finite", metric);
  }
  for (const RankTiming& r : point.ranks) {
    if (why.empty() && !(std::isfinite(r.median_s) && std::isfinite(r.mean_s))) {
      why = fmt::format("rank {} timing is not finite", r.rank);
    }
  }
  if (why.empty()) return;
  point.status = Status::failed;
  point.message = "non-finite result: " + why + (point.message.empty() ? "" : "; " + point.message);
  point.samples.clear();
  point.stats = Statistics{};
  point.ranks.clear();
  if (point.metrics.is_object()) {
    for (auto it = point.metrics.begin(); it != point.metrics.end();) {
      it = it->is_number() && !std::isfinite(it->get<double>()) ? point.metrics.erase(it) : ++it;
    }
  }
}

void to_json(Json& j, const Statistics& s) {
  j = Json{{"n", s.n},           {"median", s.median}, {"mean", s.mean},
           {"min", s.min},       {"max", s.max},       {"stdev", s.stdev},
           {"rel_stdev", s.rel_stdev}, {"p05", s.p05}, {"p95", s.p95},
           {"ci_low", s.ci_low}, {"ci_high", s.ci_high}};
}

void from_json(const Json& j, Statistics& s) {
  s.n = json_integer<std::size_t>(j.at("n"), "n");
  s.median = number_at(j, "median");
  s.mean = number_at(j, "mean");
  s.min = number_at(j, "min");
  s.max = number_at(j, "max");
  s.stdev = number_at(j, "stdev");
  s.rel_stdev = number_at(j, "rel_stdev");
  s.p05 = number_at(j, "p05");
  s.p95 = number_at(j, "p95");
  s.ci_low = number_at(j, "ci_low");
  s.ci_high = number_at(j, "ci_high");
}

void to_json(Json& j, const PointResult& p) {
  Json ranks = Json::array();
  for (const auto& r : p.ranks) {
    ranks.push_back({{"rank", r.rank}, {"device", r.device}, {"median_s", r.median_s},
                     {"mean_s", r.mean_s}});
  }
  j = Json{{"index", p.index},
           {"workload", p.workload},
           {"params", p.params},
           {"gpus", p.gpus},
           {"devices", p.devices},
           {"status", to_string(p.status)},
           {"message", p.message},
           {"noisy", p.noisy},
           {"ops_per_sample", p.ops_per_sample},
           {"samples", p.samples},
           {"stats", p.stats},
           {"ranks", ranks},
           {"metrics", p.metrics},
           {"memory", p.memory},
           {"verification", p.verification},
           {"telemetry", p.telemetry},
           {"extra", p.extra},
           {"wall_s", p.wall_s},
           {"started_at", p.started_at}};
  write_placement(j, p.placement);
  const Measurement& m = p.measured;
  if (m.timing) j["timing"] = to_string(*m.timing);
  if (m.cache) j["cache"] = to_string(*m.cache);
  if (m.warmup_s > 0) j["warmup_s"] = m.warmup_s;
  if (!p.flags.empty()) j["flags"] = p.flags;
  if (p.spread) j["spread"] = *p.spread;
}

namespace {

// A point's timing, cache and warm-up as its writer recorded them (unset when absent).
Measurement read_measurement(const Json& j) {
  Measurement m;
  if (j.contains("timing")) m.timing = timing_from_string(j.at("timing").get<std::string>());
  if (j.contains("cache")) m.cache = cache_from_string(j.at("cache").get<std::string>());
  m.warmup_s = j.contains("warmup_s") ? number_or_nan(j.at("warmup_s")) : 0.0;
  return m;
}

}  // namespace

void from_json(const Json& j, PointResult& p) {
  try {
    p.index = json_integer<std::size_t>(j.at("index"), "index");
    p.workload = j.at("workload").get<std::string>();
    // Axis values are scalars; a nested value would only cost time wherever points are
    // ordered and compared.
    p.params = Params::from_json(j.at("params"));
    p.gpus = json_integer<int>(j.at("gpus"), "gpus", 0);
    p.devices = json_integers<int>(j.at("devices"), "devices");
    p.status = status_from_string(j.at("status").get<std::string>());
    p.message = j.value("message", "");
    p.noisy = j.value("noisy", false);
    p.ops_per_sample = json_integer_or<std::size_t>(j, "ops_per_sample", 1);
    p.samples = numbers_or_nan(j.at("samples"));
    p.stats = j.at("stats").get<Statistics>();
    p.ranks.clear();
    for (const auto& r : j.value("ranks", Json::array())) {
      RankTiming t;
      t.rank = json_integer<int>(r.at("rank"), "rank");
      t.device = json_integer<int>(r.at("device"), "device");
      t.median_s = number_at(r, "median_s");
      t.mean_s = number_at(r, "mean_s");
      p.ranks.push_back(t);
    }
    p.metrics = j.value("metrics", Json::object());
    p.memory = j.value("memory", Json::object());
    p.verification = j.value("verification", Json::object());
    p.telemetry = j.contains("telemetry") ? j.at("telemetry") : Json();
    p.extra = j.value("extra", Json::object());
    p.wall_s = j.contains("wall_s") ? number_or_nan(j.at("wall_s")) : 0.0;
    p.started_at = j.value("started_at", "");
    p.placement = read_placement(j, p.gpus);
    p.measured = read_measurement(j);
    const Json flags = j.value("flags", Json::array());
    if (!flags.is_array()) throw UsageError("point flags is not an array");
    p.flags = flags.get<std::vector<PointFlag>>();
    if (j.contains("spread") && !j.at("spread").is_null()) p.spread = j.at("spread").get<Spread>();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("malformed point: {}", e.what()));
  }
}

void to_json(Json& j, const RunResult& r) {
  j = Json{{"schema_version", kSchemaVersion},  // a version-1 run is written in the current form
           {"tool", r.tool},
           {"argv", r.argv},
           {"started_at", r.started_at},
           {"finished_at", r.finished_at},
           {"host", r.host},
           {"interrupted", r.interrupted},
           {"environment", r.environment},
           {"settings", r.settings},
           {"plan", r.plan},
           {"points", r.points},
           {"scaling", r.scaling},
           {"verdicts", r.verdicts},
           {"summaries", r.summaries},
           {"presentation", r.presentation},
           {"doctor", r.doctor},
           {"telemetry_series", r.telemetry_series}};
  if (!r.soak.is_null()) j["soak"] = r.soak;
  if (!r.screen.is_null()) j["screen"] = r.screen;
  if (!r.accept.is_null()) j["accept"] = r.accept;
  if (!r.peaks.empty()) j["peaks"] = r.peaks;
  if (!r.run_id.empty()) j["run_id"] = r.run_id;
}

namespace {

// A presentation drives the renderers: each of its lists (and each table's columns) is bounded.
void check_presentation_bounds(const Json& j) {
  if (!j.contains("presentation") || !j.at("presentation").is_object()) return;
  const auto too_many = [](const Json& list) {
    return list.is_array() && list.size() > limits::kMaxPresentationItems;
  };
  for (auto it = j.at("presentation").begin(); it != j.at("presentation").end(); ++it) {
    if (!it->is_object()) continue;
    bool over = false;
    for (const char* field : {"metrics", "axes", "tables", "charts", "summaries"}) {
      if (!it->contains(field)) continue;
      const Json& list = it->at(field);
      over = over || too_many(list);
      if (list.is_array()) {
        for (const Json& item : list) {
          over = over || (item.is_object() && item.contains("columns") && too_many(item["columns"]));
        }
      }
    }
    if (over) {
      throw UsageError(fmt::format("presentation of '{}' has a list longer than {}", it.key(),
                                   limits::kMaxPresentationItems));
    }
  }
}

// The counts the renderers multiply: points, and per workload the distinct parameter and
// metric names (each becomes a table column).
void check_result_bounds(const Json& j) {
  check_presentation_bounds(j);
  const Json* points = j.contains("points") ? &j.at("points") : nullptr;
  if (!points || !points->is_array()) return;  // reported by the reader below
  if (points->size() > limits::kMaxPoints) {
    throw UsageError(fmt::format("{} points (at most {} are read)", points->size(),
                                 limits::kMaxPoints));
  }
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> names;
  for (const Json& p : *points) {
    if (!p.is_object() || !p.contains("workload") || !p["workload"].is_string()) continue;
    auto& [params, metrics] = names[p["workload"].get<std::string>()];
    for (const char* field : {"params", "metrics"}) {
      if (!p.contains(field) || !p[field].is_object()) continue;
      auto& set = field[0] == 'p' ? params : metrics;
      for (auto it = p[field].begin(); it != p[field].end(); ++it) set.insert(it.key());
    }
    if (params.size() > limits::kMaxParamNames || metrics.size() > limits::kMaxMetricNames) {
      throw UsageError(fmt::format(
          "workload '{}' has more than {} parameter names or {} metric names",
          p["workload"].get<std::string>(), limits::kMaxParamNames, limits::kMaxMetricNames));
    }
  }
}

}  // namespace

void from_json(const Json& j, RunResult& r) {
  if (!j.is_object()) throw UsageError("results document is not a JSON object");
  if (!j.contains("schema_version") || !j.at("schema_version").is_number_integer()) {
    throw UsageError("results document has no integer schema_version");
  }
  r.schema_version = j.at("schema_version").get<int>();
  if (r.schema_version < kOldestSchemaVersion || r.schema_version > kSchemaVersion) {
    throw UsageError(fmt::format(
        "unsupported results schema_version {} (this mgbench reads {} to {})", r.schema_version,
        kOldestSchemaVersion, kSchemaVersion));
  }
  check_result_bounds(j);
  try {
    r.tool = j.value("tool", Json::object());
    r.argv = j.value("argv", std::vector<std::string>{});
    r.run_id = j.value("run_id", "");
    r.started_at = j.value("started_at", "");
    r.finished_at = j.value("finished_at", "");
    r.host = j.value("host", "");
    r.interrupted = j.value("interrupted", false);
    r.environment = j.value("environment", Json::object());
    r.settings = j.value("settings", Json::object());
    r.plan = j.value("plan", Json::object());
    r.points = j.at("points").get<std::vector<PointResult>>();
    r.scaling = j.value("scaling", std::vector<ScalingSeries>{});
    r.verdicts = j.value("verdicts", std::vector<RunVerdict>{});
    r.summaries = j.value("summaries", Json::object());
    r.presentation = j.value("presentation", std::map<std::string, Presentation>{});
    r.doctor = j.contains("doctor") ? j.at("doctor") : Json();
    r.telemetry_series = j.contains("telemetry_series") ? j.at("telemetry_series") : Json();
    r.soak = j.contains("soak") ? j.at("soak") : Json();
    r.screen = j.contains("screen") ? j.at("screen") : Json();
    r.accept = j.contains("accept") ? j.at("accept") : Json();
    if (j.contains("peaks") && j.at("peaks").is_object()) r.peaks = j.at("peaks").get<PeakReport>();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("malformed results document: {}", e.what()));
  }
}

RunResult load_results(const std::string& path) {
  const Json j = read_json_file(path, fmt::format("results file '{}'", path),
                                limits::kResultsFile);
  try {
    return j.get<RunResult>();
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("results file '{}': {}", path, e.what()));
  }
}

void save_results(const RunResult& run, const std::string& path) {
  write_file_atomic(path, dump_json(Json(run), 1) + "\n");
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
}

// --- group.hpp serialisation ---

void to_json(Json& j, const RunSettings& s) {
  j = Json{{"min_samples", s.stopping.min_samples},
           {"min_time_s", s.stopping.min_time_s},
           {"max_time_s", s.stopping.max_time_s},
           {"max_noise", s.stopping.max_noise},
           {"max_samples", s.stopping.max_samples},
           {"warmup_s", s.warmup_s},
           {"target_sample_s", s.target_sample_s},
           {"gate_timeout_s", s.gate_timeout_s},
           {"group_timeout_s", s.group_timeout_s},
           {"telemetry", s.telemetry},
           {"telemetry_interval_s", s.telemetry_interval_s},
           {"profile", s.profile},
           {"extra", Json::object()}};
  // The file keeps these under "extra", as schema version 1 has them.
  if (s.batch_auto) j["extra"]["batch_auto"] = true;
  if (s.warmup_given) j["extra"]["warmup_given"] = true;
  if (s.test_slowdown != 0) j["extra"]["test_slowdown"] = s.test_slowdown;
}

void from_json(const Json& j, RunSettings& s) {
  s.stopping.min_samples = json_integer<std::size_t>(j.at("min_samples"), "min_samples");
  s.stopping.min_time_s = j.at("min_time_s").get<double>();
  s.stopping.max_time_s = j.at("max_time_s").get<double>();
  s.stopping.max_noise = j.at("max_noise").get<double>();
  s.stopping.max_samples = json_integer_or(j, "max_samples", s.stopping.max_samples);
  s.warmup_s = j.value("warmup_s", s.warmup_s);
  s.target_sample_s = j.value("target_sample_s", s.target_sample_s);
  s.gate_timeout_s = j.value("gate_timeout_s", s.gate_timeout_s);
  s.group_timeout_s = j.value("group_timeout_s", s.group_timeout_s);
  s.telemetry = j.value("telemetry", s.telemetry);
  s.telemetry_interval_s = j.value("telemetry_interval_s", s.telemetry_interval_s);
  s.profile = j.value("profile", s.profile);
  const Json extra = j.value("extra", Json::object());
  s.batch_auto = extra.value("batch_auto", false);
  s.warmup_given = extra.value("warmup_given", false);
  s.test_slowdown = extra.value("test_slowdown", 0.0);
}

void to_json(Json& j, const GroupSpec& g) {
  Json points = Json::array();
  for (const auto& p : g.points) points.push_back({{"index", p.index}, {"params", p.params}});
  j = Json{{"group_index", g.group_index}, {"workload", g.workload}, {"devices", g.devices},
           {"points", points},             {"settings", g.settings}};
  if (g.rounds != 1) j["rounds"] = g.rounds;
  write_placement(j, g.placement);
}

void from_json(const Json& j, GroupSpec& g) {
  g.group_index = json_integer<std::size_t>(j.at("group_index"), "group_index");
  g.workload = j.at("workload").get<std::string>();
  g.devices = json_integers<int>(j.at("devices"), "devices");
  g.points.clear();
  for (const auto& p : j.at("points")) {
    g.points.push_back({json_integer<std::size_t>(p.at("index"), "index"), p.at("params")});
  }
  g.rounds = j.contains("rounds") ? json_integer<std::size_t>(
                                         j.at("rounds"), "rounds", 1,
                                         static_cast<std::int64_t>(limits::kMaxPoints))
                                   : 1;
  g.settings = j.at("settings").get<RunSettings>();
  g.placement = read_placement(j, static_cast<int>(g.devices.size()));
}

}  // namespace mgbench
