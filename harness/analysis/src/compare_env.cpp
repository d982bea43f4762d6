// The environment diff of two runs: changed scalar leaves, volatile fields left out, array
// entries that changed alike folded into one "[*]" line, most important first.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "compare_detail.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/telemetry_keys.hpp"

namespace mgbench {

using namespace compare_detail;

namespace {

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
      "timestamp",   "uptime",      "serial",      "uuid",       "temperature", "utilization",
      "memory_used", "memory_free", "used_bytes",  "free_bytes", "fan",         "power_draw",
      "power_usage", "boot_id",     "load_avg",    "job_id",     "jobid",       "step_id",
      "nodelist",    "tmpdir",      "_pid",        telemetry_keys::kTemp.key};
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

}  // namespace

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

}  // namespace mgbench
