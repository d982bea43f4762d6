// Prometheus text exposition of a run's headline figures (see prom.hpp).
#include "mgbench/reports/prom.hpp"

#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

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
    "mgbench_run_info",  "mgbench_gpu_info"};

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

// A label value or name cut to `max` bytes at a character boundary, "..." marking the cut.
std::string bounded(const std::string& text, std::size_t max) {
  std::string out = valid_utf8(text);
  if (out.size() <= max) return out;
  std::size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out + "...";
}

std::string label_text(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) {
    out += (out.empty() ? "" : ",") + name + "=\"" +
           prom_label_value(bounded(value, kPromMaxLabelBytes)) + "\"";
  }
  return out;
}

// object[key], null when absent or when `object` is not an object.
Json member(const Json& object, const std::string& key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

// What every series shares, looked up once: the host name and each GPU's entry by index.
struct RunLabels {
  explicit RunLabels(const RunResult& run) {
    const std::string name = json_string(member(run.environment, "host"), "hostname");
    host = name.empty() ? run.host : name;
    if (!run.environment.is_object()) return;
    const auto gpus = run.environment.find("gpus");  // the run's own, pointed into below
    if (gpus == run.environment.end() || !gpus->is_array()) return;
    for (const Json& g : *gpus) {
      if (g.is_object() && g.value("index", Json()).is_number_integer()) {
        by_index.emplace(g["index"].get<long long>(), &g);
      }
    }
  }
  std::string gpu_field(int device, const char* field) const {
    const auto it = by_index.find(device);
    return it == by_index.end() ? "" : json_string(*it->second, field);
  }
  std::string host;
  std::map<long long, const Json*> by_index;
};

// One device's figures are labelled as dcgm-exporter labels its GPU: gpu, UUID and modelName.
// A point on several devices lists their indices in `gpu` and, when they share it, their model;
// each device's UUID and model are in mgbench_gpu_info, one series per device.
Labels point_labels(const RunLabels& names, const PointResult& point) {
  std::string devices, model;
  bool one_model = true;
  for (std::size_t i = 0; i < point.devices.size(); ++i) {
    devices += (i ? "," : "") + std::to_string(point.devices[i]);
    const std::string name = names.gpu_field(point.devices[i], "name");
    one_model = one_model && (i == 0 || name == model);
    model = name;
  }
  Labels labels = {{"workload", point.workload}, {"gpus", std::to_string(point.gpus)},
                   {"gpu", devices}};
  if (point.devices.size() == 1) {
    labels.emplace_back("UUID", names.gpu_field(point.devices[0], "uuid"));
  }
  if (one_model && !point.devices.empty()) labels.emplace_back("modelName", model);
  labels.emplace_back("Hostname", names.host);
  std::set<std::string> used(kFixedLabels.begin(), kFixedLabels.end());
  for (const auto& [key, value] : point.params) {
    std::string name = prom_label_name(bounded(key, kPromMaxNameBytes));
    if (used.count(name)) name = prom_label_name("param_" + name);
    while (used.count(name)) name += '_';
    used.insert(name);
    labels.emplace_back(name, value.str());
  }
  return labels;
}

std::string headline_family(const std::string& metric) {
  const std::string name = prom_metric_name(bounded(metric, kPromMaxNameBytes));
  return kFixedFamilies.count(name) ? prom_metric_name("metric_" + metric) : name;
}

// The families in order of first use, each with its samples (point, value): the text format
// wants a family's lines together, and a family's lines are written one by one from these.
class Exposition {
 public:
  struct Sample {
    std::size_t point;
    double value;
  };
  struct Family {
    std::string name, help;
    bool with_status = false;  // the point's status is one more label
    std::vector<Sample> samples;
  };

  void add(const std::string& name, const std::string& help, std::size_t point, double value,
           bool with_status = false) {
    if (!std::isfinite(value)) return;
    auto [it, fresh] = index_.emplace(name, families_.size());
    if (fresh) families_.push_back(Family{name, help, with_status, {}});
    families_[it->second].samples.push_back({point, value});
  }
  const std::vector<Family>& families() const { return families_; }

 private:
  std::vector<Family> families_;
  std::map<std::string, std::size_t> index_;
};

void add_point(Exposition& ex, const RunResult& run, const PointResult& point, std::size_t at) {
  const bool ok = point.status == Status::ok;
  ex.add("mgbench_point_ok",
         "1 when the point finished ok, else 0; the status label says what happened", at,
         ok ? 1 : 0, true);
  if (!ok) return;
  ex.add("mgbench_point_noisy", "1 when the point's median is uncertain (noisy), else 0", at,
         point.noisy ? 1 : 0);
  if (point.stats.n > 0) {
    ex.add("mgbench_median_seconds", "Median time per operation, slowest rank, in seconds", at,
           point.stats.median);
    ex.add("mgbench_rel_stdev", "Relative standard deviation of the samples (a fraction)", at,
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
             at, *value);
    }
  }
  if (const ScalingRow* row = scaling_row(run, point)) {
    ex.add("mgbench_scaling_speedup", "Throughput relative to the 1-GPU point of the same series",
           at, row->speedup);
    ex.add("mgbench_scaling_efficiency", "Speedup divided by the GPU count (1 = linear scaling)",
           at, row->efficiency);
  }
}

void write_header(std::ostream& out, const std::string& name, const std::string& help) {
  out << "# HELP " << name << ' ' << help_text(help) << "\n# TYPE " << name << " gauge\n";
}

std::string run_info_labels(const RunResult& run, const RunLabels& names) {
  const Json& env = run.environment;
  return label_text({{"Hostname", names.host},
                     {"tool_version", json_string(run.tool, "version")},
                     {"driver", json_string(env, "driver_version")},
                     {"cuda", json_string(env, "cuda_runtime_version")},
                     {"nccl", json_string(member(env, "nccl"), "loaded")},
                     {"started_at", run.started_at}});
}

// One series per device the written points use: its UUID and model, as dcgm-exporter has them.
void write_gpu_info(std::ostream& out, const RunLabels& names,
                    const std::vector<const PointResult*>& points) {
  std::set<int> devices;
  for (const PointResult* p : points) devices.insert(p->devices.begin(), p->devices.end());
  if (devices.empty()) return;
  write_header(out, "mgbench_gpu_info",
               "The GPUs the figures name in their gpu label (value always 1)");
  for (int d : devices) {
    out << "mgbench_gpu_info{"
        << label_text({{"gpu", std::to_string(d)},
                       {"UUID", names.gpu_field(d, "uuid")},
                       {"modelName", names.gpu_field(d, "name")},
                       {"Hostname", names.host}})
        << "} 1\n";
  }
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
  const RunLabels names(run);
  write_header(out, "mgbench_run_info", "The run these figures come from (value always 1)");
  out << "mgbench_run_info{" << run_info_labels(run, names) << "} 1\n";
  // Each point's labels once; a point whose labels an earlier point has is left out (one series
  // per label set). The labels are bounded, so this holds no more than the run itself.
  std::vector<const PointResult*> points, skipped;
  std::vector<std::string> labels;
  labels.reserve(run.points.size());  // never reallocated: `seen` views its strings
  std::set<std::string_view> seen;
  for (const std::string& workload : workloads_of(run)) {
    for (const PointResult* point : points_of(run, workload)) {
      labels.push_back(label_text(point_labels(names, *point)));
      if (!seen.insert(labels.back()).second) {
        labels.pop_back();
        skipped.push_back(point);
        continue;
      }
      points.push_back(point);
    }
  }
  Exposition ex;
  for (std::size_t i = 0; i < points.size(); ++i) add_point(ex, run, *points[i], i);
  for (const Exposition::Family& f : ex.families()) {
    write_header(out, f.name, f.help);
    for (const Exposition::Sample& s : f.samples) {
      out << f.name << '{' << labels[s.point];
      if (f.with_status) out << ",status=\"" << to_string(points[s.point]->status) << '"';
      out << "} " << format_exact(s.value) << '\n';
    }
  }
  write_gpu_info(out, names, points);
  for (const PointResult* p : skipped) {
    out << "# point " << p->index << " left out: same labels as an earlier point\n";
  }
}

void PromPrinter::print(const Printable& what, std::ostream& out) const {
  write_prom(what.run, out);
}

}  // namespace mgbench::reports
