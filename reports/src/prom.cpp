// Prometheus text exposition of a run's headline figures (see prom.hpp).
#include "mgbench/reports/prom.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "mgbench/core/file_io.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// The labels every point carries; a parameter with one of these names gets a "param_" prefix.
const std::set<std::string> kFixedLabels = {"workload",  "gpus",     "gpu",   "UUID",
                                            "modelName", "Hostname", "status"};
// Families written for every point; a headline metric with one of these names is prefixed.
const std::set<std::string> kFixedFamilies = {
    "mgbench_point_ok",  "mgbench_point_noisy",     "mgbench_median_seconds",
    "mgbench_rel_stdev", "mgbench_scaling_speedup", "mgbench_scaling_efficiency",
    "mgbench_run_info"};

bool is_name_char(char c, bool allow_colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (allow_colon && c == ':');
}

std::string sanitize_name(const std::string& name, bool allow_colon) {
  std::string out;
  for (char c : name) out += is_name_char(c, allow_colon) ? c : '_';
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

// HELP text: valid UTF-8, backslash and newline escaped.
std::string help_text(const std::string& text) {
  std::string out;
  for (char c : valid_utf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c == '\r' ? ' ' : c;
    }
  }
  return out;
}

struct Family {
  std::string name, help;
  std::vector<std::string> lines;
};

// Families in order of first use; the text format wants each family's lines together.
class Exposition {
 public:
  void add(const std::string& name, const std::string& help, const std::string& labels,
           double value) {
    if (!std::isfinite(value)) return;
    auto it = std::find_if(families_.begin(), families_.end(),
                           [&](const Family& f) { return f.name == name; });
    if (it == families_.end()) it = families_.insert(families_.end(), Family{name, help, {}});
    it->lines.push_back(name + "{" + labels + "} " + format_exact(value));
  }
  void write(std::ostream& out) const {
    for (const Family& f : families_) {
      out << "# HELP " << f.name << ' ' << help_text(f.help) << "\n# TYPE " << f.name << " gauge\n";
      for (const std::string& line : f.lines) out << line << '\n';
    }
  }

 private:
  std::vector<Family> families_;
};

std::string label_text(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) {
    out += (out.empty() ? "" : ",") + name + "=\"" + prom_label_value(value) + "\"";
  }
  return out;
}

const Json* gpu_entry(const RunResult& run, int device) {
  if (!run.environment.is_object() || !run.environment.contains("gpus") ||
      !run.environment["gpus"].is_array()) {
    return nullptr;
  }
  for (const Json& g : run.environment["gpus"]) {
    if (g.is_object() && g.value("index", Json()).is_number_integer() &&
        g["index"].get<long long>() == device) {
      return &g;
    }
  }
  return nullptr;
}

// "a,b" from the GPU entries' `field`, each distinct value once (in device order).
std::string gpu_field(const RunResult& run, const PointResult& point, const std::string& field,
                      bool distinct) {
  std::vector<std::string> values;
  for (int device : point.devices) {
    const Json* g = gpu_entry(run, device);
    const std::string value = g ? json_string(*g, field) : "";
    if (!distinct || std::find(values.begin(), values.end(), value) == values.end()) {
      values.push_back(value);
    }
  }
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

// object[key], null when absent or when `object` is not an object.
Json member(const Json& object, const std::string& key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

std::string host_name(const RunResult& run) {
  const std::string name = json_string(member(run.environment, "host"), "hostname");
  return name.empty() ? run.host : name;
}

Labels point_labels(const RunResult& run, const PointResult& point) {
  std::string devices;
  for (int d : point.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  Labels labels = {{"workload", point.workload},
                   {"gpus", std::to_string(point.gpus)},
                   {"gpu", devices},
                   {"UUID", gpu_field(run, point, "uuid", false)},
                   {"modelName", gpu_field(run, point, "name", true)},
                   {"Hostname", host_name(run)}};
  std::set<std::string> used(kFixedLabels.begin(), kFixedLabels.end());
  if (!point.params.is_object()) return labels;
  for (auto it = point.params.begin(); it != point.params.end(); ++it) {
    std::string name = prom_label_name(it.key());
    if (used.count(name)) name = prom_label_name("param_" + name);
    while (used.count(name)) name += '_';
    used.insert(name);
    labels.emplace_back(name, it->is_string() ? it->get<std::string>() : it->dump());
  }
  return labels;
}

std::string headline_family(const std::string& metric) {
  const std::string name = prom_metric_name(metric);
  return kFixedFamilies.count(name) ? prom_metric_name("metric_" + metric) : name;
}

void add_point(Exposition& ex, const RunResult& run, const PointResult& point,
               const std::string& labels) {
  const bool ok = point.status == Status::ok;
  ex.add("mgbench_point_ok",
         "1 when the point finished ok, else 0; the status label says what happened",
         labels + ",status=\"" + to_string(point.status) + "\"", ok ? 1 : 0);
  if (!ok) return;
  ex.add("mgbench_point_noisy", "1 when the point's median is uncertain (noisy), else 0", labels,
         point.noisy ? 1 : 0);
  if (point.stats.n > 0) {
    ex.add("mgbench_median_seconds", "Median time per operation, slowest rank, in seconds", labels,
           point.stats.median);
    ex.add("mgbench_rel_stdev", "Relative standard deviation of the samples (a fraction)", labels,
           point.stats.rel_stdev);
  }
  const Presentation presentation = presentation_for(run, point.workload);
  if (presentation.headline_) {
    const MetricSpec& h = *presentation.headline_;
    if (const auto value = point_metric(point, h.name)) {
      ex.add(headline_family(h.name),
             "Headline metric: " + presentation.metric_label(h.name) +
                 (h.unit.empty() ? "" : " in " + h.unit) + ", " + to_string(h.better_) +
                 " is better",
             labels, *value);
    }
  }
  if (const ScalingRow* row = scaling_row(run, point)) {
    ex.add("mgbench_scaling_speedup", "Throughput relative to the 1-GPU point of the same series",
           labels, row->speedup);
    ex.add("mgbench_scaling_efficiency", "Speedup divided by the GPU count (1 = linear scaling)",
           labels, row->efficiency);
  }
}

std::string run_info_labels(const RunResult& run) {
  const Json& env = run.environment;
  return label_text({{"Hostname", host_name(run)},
                     {"tool_version", json_string(run.tool, "version")},
                     {"driver", json_string(env, "driver_version")},
                     {"cuda", json_string(env, "cuda_runtime_version")},
                     {"nccl", json_string(member(env, "nccl"), "loaded")},
                     {"started_at", run.started_at}});
}

}  // namespace

std::string prom_metric_name(const std::string& name) {
  return "mgbench_" + sanitize_name(name, true);
}

std::string prom_label_name(const std::string& name) {
  std::string out = sanitize_name(name, false);
  if (out.rfind("__", 0) == 0) out = "p" + out;
  return out;
}

std::string prom_label_value(const std::string& value) {
  std::string out;
  for (char c : valid_utf8(value)) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c == '\r' ? ' ' : c;
    }
  }
  return out;
}

void write_prom(const RunResult& run, std::ostream& out) {
  Exposition ex;
  ex.add("mgbench_run_info", "The run these figures come from (value always 1)",
         run_info_labels(run), 1);
  std::set<std::string> seen;
  std::vector<const PointResult*> skipped;
  for (const std::string& workload : workloads_of(run)) {
    for (const PointResult* point : points_of(run, workload)) {
      const std::string labels = label_text(point_labels(run, *point));
      if (!seen.insert(labels).second) {
        skipped.push_back(point);  // one series per label set
        continue;
      }
      add_point(ex, run, *point, labels);
    }
  }
  ex.write(out);
  for (const PointResult* p : skipped) {
    out << "# point " << p->index << " left out: same labels as an earlier point\n";
  }
}

void write_prom_file(const RunResult& run, const std::string& path) {
  std::ostringstream out;
  write_prom(run, out);
  write_file_atomic(path, out.str());
}

}  // namespace mgbench::reports
