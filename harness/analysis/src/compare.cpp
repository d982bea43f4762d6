// Comparison of runs: environment diff, per-point verdicts, efficiency side by side, and the
// offer comparison. See mgbench/compare.hpp for the rules.
#include "mgbench/analysis/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "mgbench/core/error.hpp"

namespace mgbench {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

double median_value(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::string format_percent(double fraction) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << fraction * 100.0 << " %";
  return out.str();
}

std::string format_p(double p) {
  std::ostringstream out;
  out << std::setprecision(p < 0.001 ? 2 : 3) << p;
  return out.str();
}

// ---- environment diff ----------------------------------------------------------------------

std::string scalar_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "null";
  return value.dump();
}

// One line for a whole subtree present on one side only.
std::string summary_text(const Json& value) {
  if (value.is_object()) {
    if (value.contains("name") && value["name"].is_string())
      return value["name"].get<std::string>();
    return "{" + std::to_string(value.size()) + " fields}";
  }
  if (value.is_array()) return "[" + std::to_string(value.size()) + " entries]";
  return scalar_text(value);
}

bool is_volatile_key(const std::string& key_raw, const std::string& path,
                     const CompareOptions& options) {
  const std::string key = lower(key_raw);
  const std::string full = lower(path);
  if (contains(key, "hostname") || key == "host_name" || key == "nodename") {
    return !options.env_hostname;
  }
  static const char* const kVolatileParts[] = {
      "timestamp",   "uptime",      "serial",      "uuid",       "temperature", "temp_c",
      "utilization", "memory_used", "memory_free", "used_bytes", "free_bytes",  "fan",
      "power_draw",  "power_usage", "boot_id",     "load_avg",   "job_id",      "jobid",
      "step_id",     "nodelist",    "tmpdir",      "_pid"};
  for (const char* part : kVolatileParts) {
    if (contains(key, part)) return true;
  }
  if (key == "time" || key == "date" || key == "pid" || ends_with(key, "_at") ||
      ends_with(key, "_time") || ends_with(key, "_time_s")) {
    return true;
  }
  // Numeric twins of version strings ("cuda_driver_code": 12080 next to "12.8").
  if (ends_with(key, "_code")) return true;
  // Current clocks and the current PCIe link move with load (links downshift at idle); the
  // limits (max, default, application clocks) stay.
  if (contains(key, "current") &&
      (contains(full, "clock") || contains(full, "pcie") || contains(full, "link"))) {
    return true;
  }
  if (contains(full, "clock") && !contains(key, "max") && !contains(key, "default") &&
      !contains(key, "app") && !contains(key, "limit") && !contains(key, "base") &&
      !contains(key, "boost") && !contains(key, "clock")) {
    return true;  // clocks_mhz.sm / .mem: the clock at the moment of collection
  }
  return false;
}

int env_rank(const std::string& path_raw) {
  const std::string path = lower(path_raw);
  const std::size_t dot = path.find_last_of('.');
  std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
  key = key.substr(0, key.find('['));
  if (starts_with(path, "env.") || starts_with(path, "env[")) return 10;  // CUDA_*, NCCL_*...
  if (path == "gpu_count" || path == "gpus.count" ||
      (starts_with(path, "gpus[") && key == "name")) {
    return 0;
  }
  if (key == "driver" || key == "driver_version") return 1;
  if (starts_with(key, "cuda")) return 2;
  if (starts_with(key, "nccl")) return 3;
  if (contains(key, "cublas") || key == "nvml" || key == "nvml_version") return 4;
  if (contains(key, "vbios")) return 5;
  if (contains(path, "power_limit")) return 6;
  if (contains(path, "clock")) return 7;
  if (contains(path, "ecc") || contains(path, ".mig") || starts_with(key, "mig") ||
      contains(path, "persistence")) {
    return 8;
  }
  if (contains(path, "pcie") || contains(path, "nvlink") || contains(path, "topology") ||
      contains(path, "peer")) {
    return 9;
  }
  if (key == "fingerprint_hash") return 14;
  if (starts_with(path, "host")) return 11;
  if (starts_with(path, "tool.")) return 12;
  return 13;
}

void diff_json(const Json& a, const Json& b, const std::string& path, const CompareOptions& options,
               std::vector<EnvChange>& out) {
  auto emit = [&](const std::string& where, std::string before, std::string after) {
    out.push_back(EnvChange{where, std::move(before), std::move(after), env_rank(where), 1});
  };
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
    for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
    for (const std::string& key : keys) {
      const std::string child = path.empty() ? key : path + "." + key;
      if (!options.env_all && is_volatile_key(key, child, options)) continue;
      const bool in_a = a.contains(key), in_b = b.contains(key);
      if (in_a && in_b) {
        diff_json(a[key], b[key], child, options, out);
      } else if (in_a) {
        emit(child, summary_text(a[key]), "(absent)");
      } else {
        emit(child, "(absent)", summary_text(b[key]));
      }
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      emit(path + ".count", std::to_string(a.size()), std::to_string(b.size()));
    }
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) {
      diff_json(a[i], b[i], path + "[" + std::to_string(i) + "]", options, out);
    }
    for (std::size_t i = common; i < a.size(); ++i) {
      emit(path + "[" + std::to_string(i) + "]", summary_text(a[i]), "(absent)");
    }
    for (std::size_t i = common; i < b.size(); ++i) {
      emit(path + "[" + std::to_string(i) + "]", "(absent)", summary_text(b[i]));
    }
    return;
  }
  if (a != b) {
    const bool scalars = !a.is_structured() && !b.is_structured();
    emit(path, scalars ? scalar_text(a) : summary_text(a),
         scalars ? scalar_text(b) : summary_text(b));
  }
}

std::string wildcard_indices(const std::string& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '[') {
      std::size_t j = i + 1;
      while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
      if (j > i + 1 && j < path.size() && path[j] == ']') {
        out += "[*]";
        i = j;
        continue;
      }
    }
    out += path[i];
  }
  return out;
}

// Folds entries that differ only in array indices and changed the same way.
std::vector<EnvChange> fold_indices(const std::vector<EnvChange>& changes) {
  std::vector<EnvChange> out;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> seen;
  for (const EnvChange& change : changes) {
    const std::string wild = wildcard_indices(change.path);
    if (wild == change.path) {
      out.push_back(change);
      continue;
    }
    const auto key = std::make_tuple(wild, change.before, change.after);
    auto it = seen.find(key);
    if (it == seen.end()) {
      seen.emplace(key, out.size());
      out.push_back(change);
    } else {
      EnvChange& folded = out[it->second];
      folded.path = wild;
      folded.count += 1;
    }
  }
  return out;
}

// ---- telemetry walking ---------------------------------------------------------------------

// The per-GPU entries of a point's telemetry summary: telemetry.gpus[], a bare array, or the
// object itself.
std::vector<const Json*> telemetry_gpus(const Json& telemetry) {
  std::vector<const Json*> out;
  if (telemetry.is_object() && telemetry.contains("gpus") && telemetry["gpus"].is_array()) {
    for (const Json& gpu : telemetry["gpus"]) {
      if (gpu.is_object()) out.push_back(&gpu);
    }
  } else if (telemetry.is_array()) {
    for (const Json& gpu : telemetry) {
      if (gpu.is_object()) out.push_back(&gpu);
    }
  } else if (telemetry.is_object()) {
    out.push_back(&telemetry);
  }
  return out;
}

std::string gpu_label(const Json& gpu, std::size_t index) {
  for (const char* key : {"device", "index", "gpu"}) {
    if (gpu.contains(key) && gpu[key].is_number_integer()) {
      return "GPU " + std::to_string(gpu[key].get<long long>());
    }
  }
  return "GPU " + std::to_string(index);
}

bool is_severe_reason(const std::string& name_raw) {
  const std::string name = lower(name_raw);
  return contains(name, "thermal") || contains(name, "power_brake") ||
         contains(name, "powerbrake") || contains(name, "hw_slowdown");
}

// Severe throttle reasons named anywhere under a "...reason..." key: strings, arrays of
// strings, or objects whose keys are reasons with a truthy / non-zero value.
void collect_severe_reasons(const Json& node, bool under_reason, std::set<std::string>& out) {
  if (node.is_string()) {
    if (under_reason && is_severe_reason(node.get<std::string>()))
      out.insert(node.get<std::string>());
    return;
  }
  if (node.is_array()) {
    for (const Json& item : node) collect_severe_reasons(item, under_reason, out);
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const bool reason_key = contains(lower(it.key()), "reason");
    const Json& value = it.value();
    if (under_reason && is_severe_reason(it.key())) {
      const bool seen = (value.is_boolean() && value.get<bool>()) ||
                        (value.is_number() && value.get<double>() > 0) ||
                        (value.is_object() && !value.empty());
      if (seen) out.insert(it.key());
    }
    collect_severe_reasons(value, under_reason || reason_key, out);
  }
}

std::optional<double> gpu_throttle_fraction(const Json& gpu) {
  for (const char* key : {"throttle_fraction", "throttled_fraction"}) {
    if (gpu.contains(key) && gpu[key].is_number()) return gpu[key].get<double>();
  }
  return std::nullopt;
}

std::optional<double> gpu_average_power(const Json& gpu) {
  for (const char* key : {"avg_power_w", "average_power_w", "mean_power_w"}) {
    if (gpu.contains(key) && gpu[key].is_number()) return gpu[key].get<double>();
  }
  for (const char* key : {"power_w", "power"}) {
    if (gpu.contains(key) && gpu[key].is_object()) {
      for (const char* stat : {"mean", "avg"}) {
        if (gpu[key].contains(stat) && gpu[key][stat].is_number()) {
          return gpu[key][stat].get<double>();
        }
      }
    }
  }
  return std::nullopt;
}

// ---- point matching ------------------------------------------------------------------------

struct MatchResult {
  std::vector<std::pair<const PointResult*, const PointResult*>> pairs;
  std::vector<const PointResult*> only_base, only_new;
};

MatchResult match_points(const std::vector<PointResult>& base,
                         const std::vector<PointResult>& next) {
  std::map<std::string, std::vector<const PointResult*>> base_by_key, new_by_key;
  std::vector<std::string> order;
  for (const PointResult& p : base) {
    auto& list = base_by_key[point_key(p)];
    if (list.empty()) order.push_back(point_key(p));
    list.push_back(&p);
  }
  for (const PointResult& p : next) new_by_key[point_key(p)].push_back(&p);

  MatchResult result;
  for (const std::string& key : order) {
    const auto& bs = base_by_key[key];
    auto it = new_by_key.find(key);
    if (it == new_by_key.end()) {
      result.only_base.insert(result.only_base.end(), bs.begin(), bs.end());
      continue;
    }
    const auto& ns = it->second;
    if (bs.size() == 1 && ns.size() == 1) {
      result.pairs.emplace_back(bs[0], ns[0]);
      continue;
    }
    // The same configuration more than once (e.g. every GPU alone): match on the devices.
    std::vector<bool> used(ns.size(), false);
    for (const PointResult* b : bs) {
      bool matched = false;
      for (std::size_t i = 0; i < ns.size(); ++i) {
        if (!used[i] && point_key(*b, true) == point_key(*ns[i], true)) {
          used[i] = true;
          matched = true;
          result.pairs.emplace_back(b, ns[i]);
          break;
        }
      }
      if (!matched) result.only_base.push_back(b);
    }
    for (std::size_t i = 0; i < ns.size(); ++i) {
      if (!used[i]) result.only_new.push_back(ns[i]);
    }
  }
  for (const PointResult& p : next) {
    if (base_by_key.find(point_key(p)) == base_by_key.end()) result.only_new.push_back(&p);
  }
  return result;
}

UnmatchedPoint unmatched(const PointResult& p) {
  return UnmatchedPoint{point_key(p), p.workload, p.params, p.gpus, p.status};
}

PointComparison judge(const PointResult& base, const PointResult& next,
                      const CompareOptions& options, const NoiseMap* noise) {
  PointComparison pc;
  pc.key = point_key(base);
  pc.workload = base.workload;
  pc.params = base.params;
  pc.gpus = base.gpus;
  pc.base_devices = base.devices;
  pc.new_devices = next.devices;
  pc.quantity = quantity_for(base.workload, options);
  std::optional<double> bv = quantity_value(base, pc.quantity);
  std::optional<double> nv = quantity_value(next, pc.quantity);
  const bool usable = bv && nv && *bv > 0 && *nv > 0;
  if (!usable && !pc.quantity.metric.empty()) {
    // Metric missing or zero on a side (e.g. all-reduce busbw on one GPU): compare times.
    pc.quantity = Quantity{"", "s", false};
    bv = quantity_value(base, pc.quantity);
    nv = quantity_value(next, pc.quantity);
  }
  pc.threshold = options.threshold;
  if (noise) {
    auto it = noise->find(pc.key);
    if (it != noise->end() && it->second.runs >= 2) {
      pc.noise = it->second;
      pc.threshold = std::max(options.threshold, options.noise_k * it->second.relative);
    }
  }
  if (!bv || !nv || !(*bv > 0) || !std::isfinite(*nv)) {
    pc.verdict = Verdict::noisy;
    pc.reason = "no usable median on one side";
    return pc;
  }
  pc.base_value = *bv;
  pc.new_value = *nv;
  pc.change = *nv / *bv - 1.0;

  const std::string base_unreliable =
      unreliable_reason(base, options.throttle_limit, options.power_cap_throttles);
  const std::string new_unreliable =
      unreliable_reason(next, options.throttle_limit, options.power_cap_throttles);
  if (!base.samples.empty() && !next.samples.empty()) {
    pc.test = mann_whitney_u(base.samples, next.samples);
  }
  if (!base_unreliable.empty() || !new_unreliable.empty()) {
    pc.verdict = Verdict::noisy;
    if (!base_unreliable.empty()) pc.reason = "base: " + base_unreliable;
    if (!new_unreliable.empty()) {
      pc.reason += (pc.reason.empty() ? "" : "; ") + std::string("new: ") + new_unreliable;
    }
    return pc;
  }
  if (!pc.test) {
    pc.verdict = Verdict::noisy;
    pc.reason = std::string("no raw samples in the ") + (base.samples.empty() ? "base" : "new") +
                " run: cannot test";
    return pc;
  }
  const bool worse = pc.quantity.higher_is_better ? pc.change < 0 : pc.change > 0;
  const bool significant = pc.test->p_value < options.alpha;
  // 1e-12: an effect of exactly the threshold counts despite rounding.
  const bool large = std::fabs(pc.change) >= pc.threshold - 1e-12;
  // Samples are times: the new run is slower in rank terms when its U exceeds the base's.
  const bool ranks_worse = pc.test->u2 > pc.test->u1;
  const std::string p_text = "p = " + format_p(pc.test->p_value);
  if (!significant) {
    pc.verdict = Verdict::same;
    pc.reason = p_text + " >= " + format_p(options.alpha) + " (not significant)";
  } else if (!large) {
    pc.verdict = Verdict::same;
    pc.reason = "effect " + format_percent(pc.change) + " below threshold " +
                format_percent(pc.threshold) + " (" + p_text + ")";
  } else if (pc.change == 0 || ranks_worse != worse) {
    pc.verdict = Verdict::same;
    pc.reason = "rank test and median disagree on the direction (" + p_text + ")";
  } else {
    pc.verdict = worse ? Verdict::slower : Verdict::faster;
    pc.reason = p_text + ", effect " + format_percent(pc.change) + " >= threshold " +
                format_percent(pc.threshold);
  }
  return pc;
}

struct EffEntry {
  std::string workload;
  Json params = Json::object();
  int gpus = 1;
  double value = 0;
  std::optional<std::size_t> point_index;  // PointResult::index behind a scaling row
};

// Rows of RunResult::scaling (mgbench/scaling.hpp: series {workload, params, rows: [{gpus,
// efficiency, point_index...}]}), found generically: any object with integer "gpus" and
// numeric "efficiency", workload and params inherited from the enclosing objects.
void collect_scaling(const Json& node, std::string workload, Json params,
                     std::vector<EffEntry>& out) {
  if (node.is_array()) {
    for (const Json& item : node) collect_scaling(item, workload, params, out);
    return;
  }
  if (!node.is_object()) return;
  if (node.contains("workload") && node["workload"].is_string()) {
    workload = node["workload"].get<std::string>();
  }
  if (node.contains("params") && node["params"].is_object()) params = node["params"];
  if (node.contains("gpus") && node["gpus"].is_number_integer() && node.contains("efficiency") &&
      node["efficiency"].is_number() && !workload.empty()) {
    EffEntry e{workload, params, node["gpus"].get<int>(), node["efficiency"].get<double>(),
               std::nullopt};
    if (node.contains("point_index") && node["point_index"].is_number_unsigned()) {
      e.point_index = node["point_index"].get<std::size_t>();
    }
    out.push_back(std::move(e));
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.value().is_structured() && it.key() != "params") {
      collect_scaling(it.value(), workload, params, out);
    }
  }
}

std::vector<EffEntry> collect_efficiencies(const RunResult& run, const CompareOptions& options);

Json params_json_or_empty(const Params& params) {
  return params.is_object() ? params : Json::object();
}

Json optional_json(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json test_json(const std::optional<MannWhitneyResult>& test) {
  if (!test) return nullptr;
  return Json{{"u_base", test->u1}, {"u_new", test->u2},    {"p_value", test->p_value},
              {"z", test->z},       {"exact", test->exact}, {"ties", test->ties}};
}

Json quantity_json(const Quantity& q) {
  return Json{{"metric", q.metric.empty() ? Json("time") : Json(q.metric)},
              {"unit", q.unit},
              {"higher_is_better", q.higher_is_better}};
}

std::string find_string(const Json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return "";
  for (const char* key : keys) {
    if (object.contains(key) && object[key].is_string() &&
        !object[key].get<std::string>().empty()) {
      return object[key].get<std::string>();
    }
    if (object.contains(key) && object[key].is_number()) return object[key].dump();
  }
  return "";
}

}  // namespace

// ---- public --------------------------------------------------------------------------------

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::same: return "same";
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::noisy: return "noisy";
  }
  return "?";
}

std::vector<EnvChange> diff_environment(const Json& before, const Json& after,
                                        const CompareOptions& options) {
  std::vector<EnvChange> changes;
  const Json empty = Json::object();
  diff_json(before.is_object() ? before : empty, after.is_object() ? after : empty, "", options,
            changes);
  changes = fold_indices(changes);
  std::stable_sort(changes.begin(), changes.end(),
                   [](const EnvChange& a, const EnvChange& b) { return a.rank < b.rank; });
  return changes;
}

std::vector<EnvChange> diff_runs(const RunResult& before, const RunResult& after,
                                 const CompareOptions& options) {
  Json a = before.environment.is_object() ? before.environment : Json::object();
  Json b = after.environment.is_object() ? after.environment : Json::object();
  for (const char* key : {"version", "git_revision"}) {
    if (before.tool.is_object() && before.tool.contains(key)) a["tool"][key] = before.tool[key];
    if (after.tool.is_object() && after.tool.contains(key)) b["tool"][key] = after.tool[key];
  }
  return diff_environment(a, b, options);
}

Quantity quantity_for(const std::string& workload, const CompareOptions& options) {
  auto it = options.metrics.find(workload);
  if (it != options.metrics.end()) {
    if (it->second.empty()) return Quantity{"", "s", false};
    return Quantity{it->second, "", true};
  }
  const auto headline = options.headlines.find(workload);
  if (headline != options.headlines.end() && !headline->second.name.empty()) {
    const MetricSpec& m = headline->second;
    return Quantity{m.name, m.unit, m.better_ == Better::higher};
  }
  return Quantity{"", "s", false};
}

std::optional<double> quantity_value(const PointResult& point, const Quantity& quantity) {
  if (!quantity.metric.empty()) {
    if (point.metrics.is_object() && point.metrics.contains(quantity.metric) &&
        point.metrics[quantity.metric].is_number()) {
      return point.metrics[quantity.metric].get<double>();
    }
    return std::nullopt;
  }
  if (point.stats.n > 0 && point.stats.median > 0) return point.stats.median;
  if (!point.samples.empty()) return median_value(point.samples);
  return std::nullopt;
}

namespace {
// True when everything that held this GPU below its clocks was the software power cap (the
// normal state of a GPU running at its power limit), judging from the reasons seen, else from
// the throttle-time counters. Unknown -> false.
bool only_power_capped(const Json& gpu) {
  if (gpu.contains("throttle_reasons") && gpu["throttle_reasons"].is_array()) {
    bool power_cap = false;
    for (const Json& r : gpu["throttle_reasons"]) {
      if (!r.is_string()) continue;
      const std::string name = lower(r.get<std::string>());
      if (is_severe_reason(name)) return false;
      if (contains(name, "power_cap")) power_cap = true;
    }
    return power_cap;
  }
  if (gpu.contains("throttle_time_s") && gpu["throttle_time_s"].is_object()) {
    const Json& t = gpu["throttle_time_s"];
    const double thermal =
        t.contains("thermal") && t["thermal"].is_number() ? t["thermal"].get<double>() : 0;
    const double power =
        t.contains("power") && t["power"].is_number() ? t["power"].get<double>() : 0;
    return thermal <= 0 && power > 0;
  }
  return false;
}
}  // namespace

std::string unreliable_reason(const PointResult& point, double limit, bool power_cap_throttles) {
  std::vector<std::string> reasons;
  if (point.noisy) reasons.push_back("noisy (stopped at max time above the noise target)");
  const std::vector<const Json*> gpus = telemetry_gpus(point.telemetry);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const Json& gpu = *gpus[i];
    const std::optional<double> fraction = gpu_throttle_fraction(gpu);
    if (fraction && *fraction > limit && (power_cap_throttles || !only_power_capped(gpu))) {
      reasons.push_back("throttled " + format_percent(*fraction) + " of the time on " +
                        gpu_label(gpu, i));
    }
    std::set<std::string> severe;
    collect_severe_reasons(gpu, false, severe);
    for (const std::string& reason : severe) reasons.push_back(reason + " on " + gpu_label(gpu, i));
  }
  std::string text;
  for (const std::string& r : reasons) text += (text.empty() ? "" : ", ") + r;
  return text;
}

NoiseMap estimate_noise(const std::vector<const RunResult*>& runs, const CompareOptions& given) {
  const CompareOptions options = with_headlines(given, runs);
  std::map<std::string, std::vector<double>> values;
  for (const RunResult* run : runs) {
    std::set<std::string> seen;
    for (const PointResult& p : run->points) {
      if (p.status != Status::ok) continue;
      const std::string key = point_key(p);
      if (!seen.insert(key).second) continue;  // first of duplicates only
      Quantity q = quantity_for(p.workload, options);
      std::optional<double> v = quantity_value(p, q);
      if (!v && !q.metric.empty()) v = quantity_value(p, Quantity{"", "s", false});
      if (v && std::isfinite(*v)) values[key].push_back(*v);
    }
  }
  NoiseMap out;
  for (const auto& [key, list] : values) {
    if (list.size() < 2) continue;
    double mean = 0;
    for (double v : list) mean += v;
    mean /= static_cast<double>(list.size());
    double ss = 0;
    for (double v : list) ss += (v - mean) * (v - mean);
    const double stdev = std::sqrt(ss / static_cast<double>(list.size() - 1));
    out[key] = NoiseEstimate{mean > 0 ? stdev / mean : 0.0, static_cast<int>(list.size())};
  }
  return out;
}

int Comparison::count(Verdict verdict) const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(),
                    [&](const PointComparison& p) { return p.verdict == verdict; }));
}

std::string efficiency_key(const std::string& workload, const Params& params, int gpus) {
  return workload + "|" + params_json_or_empty(params).dump() + "|" + std::to_string(gpus);
}

namespace {
std::vector<EffEntry> collect_efficiencies(const RunResult& run, const CompareOptions& options) {
  std::vector<EffEntry> out;
  collect_scaling(Json(run.scaling), "", Json::object(), out);
  std::set<std::string> workloads_with_rows;
  for (const EffEntry& e : out) workloads_with_rows.insert(e.workload);
  // Fallback for workloads the run has no scaling rows for: X(N) / (N X(1)).
  std::map<std::string, double> single;  // workload|params -> X(1)
  for (const PointResult& p : run.points) {
    if (p.status != Status::ok || p.gpus != 1) continue;
    const Quantity q = quantity_for(p.workload, options);
    if (q.metric.empty()) continue;
    if (auto v = quantity_value(p, q); v && *v > 0) {
      single.emplace(p.workload + "|" + params_json_or_empty(p.params).dump(), *v);
    }
  }
  for (const PointResult& p : run.points) {
    if (p.status != Status::ok || workloads_with_rows.count(p.workload)) continue;
    const Quantity q = quantity_for(p.workload, options);
    if (q.metric.empty()) continue;
    auto it = single.find(p.workload + "|" + params_json_or_empty(p.params).dump());
    const std::optional<double> v = quantity_value(p, q);
    if (it == single.end() || !v) continue;
    out.push_back(EffEntry{p.workload, params_json_or_empty(p.params), p.gpus,
                           *v / (p.gpus * it->second), p.index});
  }
  return out;
}
}  // namespace

std::map<std::string, double> efficiencies(const RunResult& run, const CompareOptions& given) {
  const CompareOptions options = with_headlines(given, {&run});
  std::map<std::string, double> out;
  for (const EffEntry& e : collect_efficiencies(run, options)) {
    out.emplace(efficiency_key(e.workload, e.params, e.gpus), e.value);
  }
  return out;
}

Comparison compare_runs(const RunResult& base, const RunResult& next, const CompareOptions& given,
                        const NoiseMap* noise) {
  const CompareOptions options = with_headlines(given, {&base, &next});
  Comparison cmp;
  cmp.options = options;
  cmp.environment = diff_runs(base, next, options);
  const std::string fb = find_string(base.environment, {"fingerprint_hash"});
  const std::string fn = find_string(next.environment, {"fingerprint_hash"});
  cmp.fingerprint_differs = !fb.empty() && !fn.empty() && fb != fn;

  const MatchResult match = match_points(base.points, next.points);
  if (match.pairs.empty()) {
    throw UsageError("nothing to compare: no point of the base run (" +
                     std::to_string(base.points.size()) + ") matches one of the new run (" +
                     std::to_string(next.points.size()) +
                     ") by workload, parameters and GPU count");
  }
  for (const auto& [b, n] : match.pairs) {
    if (b->status != Status::ok || n->status != Status::ok) {
      NotCompared nc;
      nc.key = point_key(*b);
      nc.workload = b->workload;
      nc.params = b->params;
      nc.gpus = b->gpus;
      nc.base_status = b->status;
      nc.new_status = n->status;
      nc.message = n->status != Status::ok ? n->message : b->message;
      cmp.not_compared.push_back(std::move(nc));
      continue;
    }
    cmp.points.push_back(judge(*b, *n, options, noise));
  }
  if (cmp.points.empty()) {
    const NotCompared& first = cmp.not_compared.front();
    throw UsageError("nothing to compare: none of the " + std::to_string(match.pairs.size()) +
                     " matched points is ok in both runs (e.g. " + first.workload + " on " +
                     std::to_string(first.gpus) + " GPU(s): base " + to_string(first.base_status) +
                     ", new " + to_string(first.new_status) + ")");
  }
  for (const PointResult* p : match.only_base) cmp.only_in_base.push_back(unmatched(*p));
  for (const PointResult* p : match.only_new) cmp.only_in_new.push_back(unmatched(*p));

  // Efficiency side by side for every multi-GPU configuration either run has.
  std::map<std::string, EfficiencyRow> rows;
  auto add_rows = [&](const std::vector<EffEntry>& entries, bool is_base) {
    for (const EffEntry& e : entries) {
      if (e.gpus <= 1) continue;
      const std::string key = efficiency_key(e.workload, e.params, e.gpus);
      auto it = rows.find(key);
      if (it == rows.end()) {
        it = rows.emplace(key,
                          EfficiencyRow{e.workload, e.params, e.gpus, std::nullopt, std::nullopt})
                 .first;
      }
      std::optional<double>& slot = is_base ? it->second.base : it->second.next;
      if (!slot) slot = e.value;  // first series row of a key wins
    }
  };
  add_rows(collect_efficiencies(base, options), true);
  add_rows(collect_efficiencies(next, options), false);
  for (auto& [key, row] : rows) cmp.efficiency.push_back(std::move(row));
  std::stable_sort(cmp.efficiency.begin(), cmp.efficiency.end(),
                   [](const EfficiencyRow& a, const EfficiencyRow& b) {
                     if (a.workload != b.workload) return a.workload < b.workload;
                     if (a.params != b.params) return a.params.dump() < b.params.dump();
                     return a.gpus < b.gpus;
                   });
  return cmp;
}

int comparison_exit_code(const Comparison& comparison) {
  return comparison.any_slower() ? static_cast<int>(ExitCode::regression)
                                 : static_cast<int>(ExitCode::ok);
}

Json comparison_to_json(const Comparison& cmp) {
  Json j;
  j["kind"] = "comparison";
  j["base"] = Json{{"label", cmp.base_label}, {"path", cmp.base_path}};
  j["new"] = Json{{"label", cmp.new_label}, {"path", cmp.new_path}};
  j["options"] = Json{{"threshold", cmp.options.threshold},
                      {"alpha", cmp.options.alpha},
                      {"noise_k", cmp.options.noise_k},
                      {"throttle_limit", cmp.options.throttle_limit}};
  j["fingerprint_differs"] = cmp.fingerprint_differs;
  Json env = Json::array();
  for (const EnvChange& c : cmp.environment) {
    env.push_back(
        Json{{"path", c.path}, {"before", c.before}, {"after", c.after}, {"count", c.count}});
  }
  j["environment"] = std::move(env);
  Json points = Json::array();
  for (const PointComparison& p : cmp.points) {
    Json noise = nullptr;
    if (p.noise) noise = Json{{"relative", p.noise->relative}, {"runs", p.noise->runs}};
    points.push_back(Json{{"key", p.key},
                          {"workload", p.workload},
                          {"params", params_json_or_empty(p.params)},
                          {"gpus", p.gpus},
                          {"base_devices", p.base_devices},
                          {"new_devices", p.new_devices},
                          {"quantity", quantity_json(p.quantity)},
                          {"base", p.base_value},
                          {"new", p.new_value},
                          {"change", p.change},
                          {"threshold", p.threshold},
                          {"noise", noise},
                          {"test", test_json(p.test)},
                          {"verdict", to_string(p.verdict)},
                          {"reason", p.reason}});
  }
  j["points"] = std::move(points);
  Json nc = Json::array();
  for (const NotCompared& p : cmp.not_compared) {
    nc.push_back(Json{{"key", p.key},
                      {"workload", p.workload},
                      {"params", params_json_or_empty(p.params)},
                      {"gpus", p.gpus},
                      {"base_status", to_string(p.base_status)},
                      {"new_status", to_string(p.new_status)},
                      {"message", p.message}});
  }
  j["not_compared"] = std::move(nc);
  auto unmatched_json = [](const std::vector<UnmatchedPoint>& list) {
    Json out = Json::array();
    for (const UnmatchedPoint& p : list) {
      out.push_back(Json{{"key", p.key},
                         {"workload", p.workload},
                         {"params", params_json_or_empty(p.params)},
                         {"gpus", p.gpus},
                         {"status", to_string(p.status)}});
    }
    return out;
  };
  j["only_in_base"] = unmatched_json(cmp.only_in_base);
  j["only_in_new"] = unmatched_json(cmp.only_in_new);
  Json eff = Json::array();
  for (const EfficiencyRow& r : cmp.efficiency) {
    eff.push_back(Json{{"workload", r.workload},
                       {"params", r.params},
                       {"gpus", r.gpus},
                       {"base", optional_json(r.base)},
                       {"new", optional_json(r.next)}});
  }
  j["efficiency"] = std::move(eff);
  j["summary"] =
      Json{{"same", cmp.count(Verdict::same)},        {"faster", cmp.count(Verdict::faster)},
           {"slower", cmp.count(Verdict::slower)},    {"noisy", cmp.count(Verdict::noisy)},
           {"not_compared", cmp.not_compared.size()}, {"only_in_base", cmp.only_in_base.size()},
           {"only_in_new", cmp.only_in_new.size()},   {"exit_code", comparison_exit_code(cmp)}};
  return j;
}

// ---- offers --------------------------------------------------------------------------------

OfferSummary summarize_offer(const Offer& offer) {
  OfferSummary s;
  s.label = offer.label;
  s.path = offer.path;
  s.price_per_gpu_hour = offer.price_per_gpu_hour;
  if (!offer.run) return s;
  const RunResult& run = *offer.run;
  const Json& env = run.environment.is_object() ? run.environment : Json::object();
  s.host = run.host;
  if (s.host.empty() && env.contains("host")) s.host = find_string(env["host"], {"hostname"});

  // GPU model and count: environment.gpus[], else the largest point.
  std::vector<std::pair<std::string, int>> models;
  if (env.contains("gpus") && env["gpus"].is_array()) {
    for (const Json& gpu : env["gpus"]) {
      const std::string name = find_string(gpu, {"name", "model"});
      auto it = std::find_if(models.begin(), models.end(),
                             [&](const auto& m) { return m.first == name; });
      if (it == models.end())
        models.emplace_back(name, 1);
      else
        it->second += 1;
      ++s.gpu_count;
    }
  }
  if (s.gpu_count == 0) {
    for (const PointResult& p : run.points) s.gpu_count = std::max(s.gpu_count, p.gpus);
  }
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string name = models[i].first.empty() ? "unknown GPU" : models[i].first;
    s.gpu_model += (i ? " + " : "") + name +
                   (models.size() > 1 ? " x" + std::to_string(models[i].second) : "");
  }
  if (s.gpu_model.empty()) s.gpu_model = "unknown";

  // Versions: environment.versions.{driver, cuda_driver, ...} (fingerprint.cpp), or flat
  // "<name>_version" keys.
  const Json& versions =
      env.contains("versions") && env["versions"].is_object() ? env["versions"] : Json::object();
  auto version = [&](std::initializer_list<const char*> nested,
                     std::initializer_list<const char*> flat) {
    std::string v = find_string(versions, nested);
    return v.empty() ? find_string(env, flat) : v;
  };
  s.driver = version({"driver"}, {"driver_version"});
  s.cuda = version({"cuda_driver", "cuda_runtime"},
                   {"cuda_driver_version", "cuda_runtime_version", "cuda_version"});
  s.nccl = version({"nccl_loaded", "nccl_built"},
                   {"nccl_version_loaded", "nccl_version_built", "nccl_version"});

  // Interconnect: NVLink links up on a GPU, or NV# cells in the topology matrix; else the
  // PCIe link of the first GPU.
  long links_up = 0;
  bool nvlink = false;
  const Json& gpus = env.contains("gpus") && env["gpus"].is_array() ? env["gpus"] : Json::array();
  for (const Json& gpu : gpus) {
    if (!gpu.is_object()) continue;
    if (gpu.contains("nvlink") && gpu["nvlink"].is_object()) {
      const Json& nv = gpu["nvlink"];
      for (const char* key : {"links_up", "active_links", "links_active"}) {
        if (nv.contains(key) && nv[key].is_number() && nv[key].get<double>() > 0) {
          nvlink = true;
          links_up = std::max(links_up, nv[key].get<long>());
        }
      }
    }
    for (const char* key : {"nvlink_links_up", "nvlink_active_links"}) {
      if (gpu.contains(key) && gpu[key].is_number() && gpu[key].get<double>() > 0) {
        nvlink = true;
        links_up = std::max(links_up, gpu[key].get<long>());
      }
    }
  }
  if (!nvlink && env.contains("topology") && env["topology"].is_object() &&
      env["topology"].contains("matrix")) {
    for (const Json& row : env["topology"]["matrix"]) {
      if (!row.is_array()) continue;
      for (const Json& cell : row) {
        if (!cell.is_string()) continue;
        const std::string text = cell.get<std::string>();
        if (text.size() >= 3 && text[0] == 'N' && text[1] == 'V' &&
            std::isdigit(static_cast<unsigned char>(text[2]))) {
          nvlink = true;
        }
      }
    }
  }
  if (nvlink) {
    s.interconnect =
        links_up > 0 ? "NVLink (" + std::to_string(links_up) + " links/GPU)" : "NVLink";
  } else if (!gpus.empty() && gpus[0].is_object()) {
    const Json& gpu = gpus[0];
    std::string gen, width;
    if (gpu.contains("pcie") && gpu["pcie"].is_object()) {
      gen = find_string(gpu["pcie"], {"gen_max", "max_generation", "gen_gpu_max", "generation"});
      width = find_string(gpu["pcie"], {"width_max", "max_width", "width"});
    }
    if (gen.empty()) gen = find_string(gpu, {"pcie_gen_max", "pcie_gen"});
    if (width.empty()) width = find_string(gpu, {"pcie_width_max", "pcie_width"});
    if (!gen.empty()) s.interconnect = "PCIe Gen" + gen + (width.empty() ? "" : " x" + width);
  }
  if (s.interconnect.empty()) s.interconnect = "unknown";

  // VM or bare metal: host.virtualization (a hint such as "Amazon EC2", null on bare metal)
  // and host.hypervisor_flag (fingerprint.cpp), or host.hypervisor (string or bool).
  s.platform = "unknown";
  const Json& host = env.contains("host") && env["host"].is_object() ? env["host"] : Json::object();
  auto is_vm_text = [](const std::string& text) {
    const std::string v = lower(text);
    return !(v.empty() || v == "none" || v == "bare metal" || v == "bare-metal" || v == "no");
  };
  if (host.contains("virtualization") && host["virtualization"].is_string() &&
      is_vm_text(host["virtualization"].get<std::string>())) {
    s.platform = "VM (" + host["virtualization"].get<std::string>() + ")";
  } else if (host.contains("hypervisor") && host["hypervisor"].is_string()) {
    const std::string h = host["hypervisor"].get<std::string>();
    s.platform = is_vm_text(h) ? "VM (" + h + ")" : "bare metal";
  } else if (host.contains("hypervisor") && host["hypervisor"].is_boolean()) {
    s.platform = host["hypervisor"].get<bool>() ? "VM" : "bare metal";
  } else if (host.contains("hypervisor_flag") && host["hypervisor_flag"].is_boolean()) {
    s.platform = host["hypervisor_flag"].get<bool>() ? "VM" : "bare metal";
  } else if (host.contains("virtualization") && host["virtualization"].is_null()) {
    s.platform = "bare metal";
  }
  return s;
}

namespace {
// The efficiency of a point: the scaling row that names it, else the row with its params.
std::optional<double> point_efficiency(const std::vector<EffEntry>& entries, const PointResult& p) {
  for (const EffEntry& e : entries) {
    if (e.point_index && *e.point_index == p.index && e.workload == p.workload &&
        e.gpus == p.gpus) {
      return e.value;
    }
  }
  const Json params = params_json_or_empty(p.params);
  for (const EffEntry& e : entries) {
    if (e.workload == p.workload && e.gpus == p.gpus && e.params == params) return e.value;
  }
  return std::nullopt;
}
}  // namespace

OfferComparison compare_offers(const std::vector<Offer>& offers, const CompareOptions& given) {
  std::vector<const RunResult*> runs;
  for (const Offer& offer : offers) runs.push_back(offer.run);
  const CompareOptions options = with_headlines(given, runs);
  OfferComparison result;
  for (const Offer& offer : offers) result.offers.push_back(summarize_offer(offer));

  // Rows: the union of (workload, params, gpus), workloads in name order, rows in first-seen
  // order of the parameter set, then by GPU count.
  std::vector<std::vector<EffEntry>> effs;
  for (const Offer& offer : offers) effs.push_back(collect_efficiencies(*offer.run, options));
  std::map<std::string, std::vector<std::pair<std::string, int>>>
      row_keys;  // workload -> (params, gpus)
  std::map<std::string, std::vector<std::string>> param_order;
  std::map<std::string, Params> params_of;
  for (const Offer& offer : offers) {
    for (const PointResult& p : offer.run->points) {
      const Json params = params_json_or_empty(p.params);
      const std::string pk = params.dump();
      auto& rows = row_keys[p.workload];
      if (std::find(rows.begin(), rows.end(), std::make_pair(pk, p.gpus)) == rows.end()) {
        rows.emplace_back(pk, p.gpus);
      }
      auto& order = param_order[p.workload];
      if (std::find(order.begin(), order.end(), pk) == order.end()) order.push_back(pk);
      params_of[pk] = params;
    }
  }
  for (auto& [workload, rows] : row_keys) {
    const auto& order = param_order[workload];
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      const auto ia = std::find(order.begin(), order.end(), a.first) - order.begin();
      const auto ib = std::find(order.begin(), order.end(), b.first) - order.begin();
      return ia != ib ? ia < ib : a.second < b.second;
    });
    OfferTable table;
    table.workload = workload;
    table.quantity = quantity_for(workload, options);
    for (const auto& [pk, gpus] : rows) {
      OfferRow row;
      row.params = params_of[pk];
      row.gpus = gpus;
      for (std::size_t o = 0; o < offers.size(); ++o) {
        OfferCell cell;
        const PointResult* point = nullptr;
        for (const PointResult& p : offers[o].run->points) {
          if (p.workload == workload && p.gpus == gpus &&
              params_json_or_empty(p.params).dump() == pk) {
            // Prefer an ok point when the configuration appears more than once.
            if (!point || (point->status != Status::ok && p.status == Status::ok)) point = &p;
          }
        }
        if (point) {
          cell.present = true;
          cell.status = point->status;
          if (point->status == Status::ok) {
            cell.unreliable =
                !unreliable_reason(*point, options.throttle_limit, options.power_cap_throttles)
                     .empty();
            cell.throughput = quantity_value(*point, table.quantity);
            cell.efficiency = point_efficiency(effs[o], *point);
            if (cell.throughput && table.quantity.higher_is_better) {
              const std::string per_watt = table.quantity.metric + "_per_watt";
              if (point->metrics.is_object() && point->metrics.contains(per_watt) &&
                  point->metrics[per_watt].is_number()) {
                cell.per_watt = point->metrics[per_watt].get<double>();
              } else {
                double watts = 0;
                bool any = false;
                for (const Json* gpu : telemetry_gpus(point->telemetry)) {
                  if (auto w = gpu_average_power(*gpu)) {
                    watts += *w;
                    any = true;
                  }
                }
                if (any && watts > 0) cell.per_watt = *cell.throughput / watts;
              }
              if (offers[o].price_per_gpu_hour && *offers[o].price_per_gpu_hour > 0) {
                cell.per_dollar = *cell.throughput / (*offers[o].price_per_gpu_hour * gpus);
              }
            }
          }
        }
        row.cells.push_back(cell);
      }
      auto best = [&](std::optional<double> OfferCell::*field, bool higher) {
        int index = -1, present = 0;
        for (std::size_t o = 0; o < row.cells.size(); ++o) {
          const auto& v = row.cells[o].*field;
          if (!v) continue;
          ++present;
          if (index < 0 ||
              (higher ? *v > *(row.cells[index].*field) : *v < *(row.cells[index].*field))) {
            index = static_cast<int>(o);
          }
        }
        return present >= 2 ? index : -1;
      };
      row.best_throughput = best(&OfferCell::throughput, table.quantity.higher_is_better);
      row.best_per_watt = best(&OfferCell::per_watt, true);
      row.best_per_dollar = best(&OfferCell::per_dollar, true);
      table.rows.push_back(std::move(row));
    }
    result.tables.push_back(std::move(table));
  }
  return result;
}

Json offers_to_json(const OfferComparison& cmp) {
  Json j;
  j["kind"] = "offers";
  j["units"] = Json{
      {"per_dollar", "throughput per (USD per hour): throughput / (price per GPU-hour x GPUs)"},
      {"per_watt", "throughput per watt of average GPU power"}};
  Json offers = Json::array();
  for (const OfferSummary& s : cmp.offers) {
    offers.push_back(Json{{"label", s.label},
                          {"path", s.path},
                          {"host", s.host},
                          {"gpu_model", s.gpu_model},
                          {"gpu_count", s.gpu_count},
                          {"interconnect", s.interconnect},
                          {"driver", s.driver},
                          {"cuda", s.cuda},
                          {"nccl", s.nccl},
                          {"platform", s.platform},
                          {"price_per_gpu_hour", optional_json(s.price_per_gpu_hour)}});
  }
  j["offers"] = std::move(offers);
  Json tables = Json::array();
  for (const OfferTable& t : cmp.tables) {
    Json rows = Json::array();
    for (const OfferRow& r : t.rows) {
      Json cells = Json::array();
      for (const OfferCell& c : r.cells) {
        if (!c.present) {
          cells.push_back(nullptr);
          continue;
        }
        cells.push_back(Json{{"status", to_string(c.status)},
                             {"unreliable", c.unreliable},
                             {"throughput", optional_json(c.throughput)},
                             {"efficiency", optional_json(c.efficiency)},
                             {"per_watt", optional_json(c.per_watt)},
                             {"per_dollar", optional_json(c.per_dollar)}});
      }
      auto best = [&](int index) {
        return index >= 0 ? Json(cmp.offers[static_cast<std::size_t>(index)].label) : Json(nullptr);
      };
      rows.push_back(Json{{"params", r.params},
                          {"gpus", r.gpus},
                          {"cells", std::move(cells)},
                          {"best_throughput", best(r.best_throughput)},
                          {"best_per_watt", best(r.best_per_watt)},
                          {"best_per_dollar", best(r.best_per_dollar)}});
    }
    tables.push_back(Json{{"workload", t.workload},
                          {"quantity", quantity_json(t.quantity)},
                          {"rows", std::move(rows)}});
  }
  j["tables"] = std::move(tables);
  return j;
}

}  // namespace mgbench
