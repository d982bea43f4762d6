// Plain-words verdicts from the scaling series, the step-time breakdown and baseline outliers.
#include "mgbench/analysis/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace mgbench {
namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// "89 %" from 0.887.
std::string percent(double fraction) { return fixed(100.0 * fraction, 0) + " %"; }

// Throughput values of any magnitude: 23457, 812.3, 45.67, 0.0123.
std::string number(double value) {
  const double a = std::fabs(value);
  if (a >= 1000) return fixed(value, 0);
  if (a >= 100) return fixed(value, 1);
  if (a >= 1) return fixed(value, 2);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

std::string gpus_text(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

// "a", "a and b", "a, b and c".
std::string join_words(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

std::string value_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "on" : "off";
  return value.dump();
}

std::string name_text(std::string name) {
  for (char& c : name) {
    if (c == '_') c = ' ';
  }
  return name;
}

std::optional<double> metric(const PointResult* point, const char* name) {
  if (point == nullptr || !point->metrics.is_object()) return std::nullopt;
  const auto it = point->metrics.find(name);
  if (it == point->metrics.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// "Exposed communication is 9 % of the step; overlap hides 71 % of all-reduce time. Host-to-
// device copies take 3 % and the optimizer 2 % of the step."
std::string breakdown_text(const PointResult* point, int gpus) {
  std::string text;
  const std::optional<double> step = metric(point, "step_time_s");
  const bool have_step = step && *step > 0;
  const std::optional<double> exposed = metric(point, "exposed_comm_s");
  const std::optional<double> overlap = metric(point, "overlap_ratio");
  if (gpus > 1) {
    std::vector<std::string> parts;
    if (exposed && have_step) {
      parts.push_back("Exposed communication is " + percent(*exposed / *step) + " of the step");
    }
    if (overlap) {
      parts.push_back(std::string(parts.empty() ? "Overlap" : "overlap") + " hides " +
                      percent(*overlap) + " of all-reduce time");
    }
    for (std::size_t i = 0; i < parts.size(); ++i) text += (i > 0 ? "; " : " ") + parts[i];
    if (!parts.empty()) text += ".";
  }
  if (have_step) {
    const std::optional<double> h2d = metric(point, "h2d_s");
    const std::optional<double> optimizer = metric(point, "optimizer_s");
    if (h2d && optimizer) {
      text += " Host-to-device copies take " + percent(*h2d / *step) + " and the optimizer " +
              percent(*optimizer / *step) + " of the step.";
    } else if (h2d) {
      text += " Host-to-device copies take " + percent(*h2d / *step) + " of the step.";
    } else if (optimizer) {
      text += " The optimizer takes " + percent(*optimizer / *step) + " of the step.";
    }
  }
  return text;
}


// "8 GPUs give 7.1x (89 %)." or the 1-GPU sentence.
std::string headline_text(const ScalingSeries& s) {
  const ScalingRow& last = s.rows.back();
  if (last.gpus <= 1) {
    return "measured on 1 GPU only (" + number(last.throughput) + " " + s.unit +
           "); no scaling figure.";
  }
  return gpus_text(last.gpus) + " give " + fixed(last.speedup, 1) + "x (" +
         percent(last.efficiency) + ")" + (s.mode == "strong" ? " at a fixed global batch" : "") +
         ".";
}

// "Within a node (1 -> 8 GPUs) efficiency is 94 %; between nodes (1 -> 4 nodes) 61 %: most of
// the loss is between nodes (the network)." Sets the verdict's losing part.
void add_node_split(const ScalingSeries& s, RunVerdict& v) {
  if (!s.node_split) return;
  const NodeSplit& n = *s.node_split;
  v.text += " Within a node (1 -> " + gpus_text(n.gpus_per_node) + ") efficiency is " +
            percent(n.intra_efficiency) + "; between nodes (1 -> " + std::to_string(n.nodes) +
            " nodes) " + percent(n.inter_efficiency) + ": ";
  const double intra_loss = 1.0 - n.intra_efficiency, inter_loss = 1.0 - n.inter_efficiency;
  if (std::max(intra_loss, inter_loss) <= kPartLossTolerance) {
    v.text += "both parts scale well.";
  } else if (inter_loss >= intra_loss) {
    v.text += "most of the loss is between nodes (the network).";
    v.losing_part = kLosingInterNode;
  } else {
    v.text += "most of the loss is within a node (NVLink/PCIe and the GPUs themselves).";
    v.losing_part = kLosingIntraNode;
  }
}

// Appends the baseline-each outliers of the series' 1-GPU parameters; true when any.
bool add_outliers(const ScalingSeries& s, const Params& base_params,
                  const std::vector<Json>& outliers, std::string& text) {
  bool slow = false;
  for (const Json& o : outliers) {
    if (!o.is_object() || o.value("workload", std::string()) != s.workload) continue;
    if (!o.contains("params") || o.at("params") != base_params) continue;
    const Json device = o.value("device", Json()), best = o.value("best_device", Json());
    const Json deficit = o.value("deficit", Json());
    if (!device.is_number_integer() || !best.is_number_integer() || !deficit.is_number()) {
      continue;
    }
    text += " GPU " + device.dump() + " is " + percent(deficit.get<double>()) +
            " slower than the best GPU (GPU " + best.dump() + ").";
    slow = true;
  }
  return slow;
}

// Super-linear efficiency, collapse and falling throughput: sentences and codes.
void add_anomalies(const ScalingSeries& s, RunVerdict& v) {
  std::vector<std::string> super_linear, collapse, drops;
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const ScalingRow& row = s.rows[i];
    if (row.gpus <= 1) continue;
    const std::string at = gpus_text(row.gpus) + " (" + percent(row.efficiency) + ")";
    if (row.efficiency > kSuperLinearEfficiency) super_linear.push_back(at);
    if (row.efficiency < kCollapseEfficiency) collapse.push_back(at);
    if (i > 0 && row.throughput < s.rows[i - 1].throughput) {
      drops.push_back("from " + std::to_string(s.rows[i - 1].gpus) + " to " +
                      gpus_text(row.gpus) + " (" + number(s.rows[i - 1].throughput) + " -> " +
                      number(row.throughput) + " " + s.unit + ")");
    }
  }
  if (!super_linear.empty()) {
    v.text += " Anomaly: super-linear efficiency at " + join_words(super_linear) +
              "; check whether the 1-GPU baseline was slowed (throttling, noise).";
    v.anomalies.push_back(kAnomalySuperLinear);
  }
  if (!collapse.empty()) {
    v.text += " Anomaly: scaling collapses at " + join_words(collapse) +
              ": less than half of the GPUs' combined capacity is used.";
    v.anomalies.push_back(kAnomalyCollapse);
  }
  if (!drops.empty()) {
    v.text += " Anomaly: throughput falls " + join_words(drops) + ".";
    v.anomalies.push_back(kAnomalyNonMonotonic);
  }
}

}  // namespace

std::string verdict_label(const ScalingSeries& series, const std::vector<ScalingSeries>& all) {
  std::set<std::string> varying;
  for (const ScalingSeries& other : all) {
    if (other.workload != series.workload || !other.params.is_object()) continue;
    for (const auto& [key, value] : series.params.items()) {
      const auto it = other.params.find(key);
      if (it == other.params.end() || *it != value) varying.insert(key);
    }
    for (const auto& item : other.params.items()) {
      if (!series.params.contains(item.key())) varying.insert(item.key());
    }
  }
  std::vector<std::string> words, named;
  for (const auto& [key, value] : series.params.items()) {
    if (varying.count(key) == 0) continue;
    if (value.is_string()) {
      words.push_back(value.get<std::string>());
    } else {
      named.push_back(name_text(key) + " " + value_text(value));
    }
  }
  words.insert(words.end(), named.begin(), named.end());
  std::string label;
  for (const std::string& w : words) label += (label.empty() ? "" : " ") + w;
  return label;
}

std::vector<RunVerdict> compute_verdicts(const std::vector<ScalingSeries>& series,
                                         const std::vector<PointResult>& points,
                                         const std::vector<Json>& outliers) {
  std::map<std::size_t, const PointResult*> by_index;
  for (const PointResult& p : points) by_index.emplace(p.index, &p);
  const auto find_point = [&](std::size_t index) -> const PointResult* {
    const auto it = by_index.find(index);
    return it == by_index.end() ? nullptr : it->second;
  };
  std::vector<RunVerdict> verdicts;
  for (const ScalingSeries& s : series) {
    if (s.rows.empty()) continue;
    const ScalingRow& last = s.rows.back();
    RunVerdict v;
    v.workload = s.workload;
    v.params = s.params;
    v.mode = s.mode;
    v.metric = s.metric;
    v.unit = s.unit;
    v.gpus_max = last.gpus;
    v.speedup = last.speedup;
    v.efficiency = last.efficiency;
    const std::string label = verdict_label(s, series);
    v.text = s.workload + (label.empty() ? "" : " " + label) + ": " + headline_text(s) +
             breakdown_text(find_point(last.point_index), last.gpus);
    add_node_split(s, v);
    const PointResult* base = find_point(s.rows.front().point_index);
    const bool slow = add_outliers(s, base != nullptr ? base->params : s.params, outliers, v.text);
    add_anomalies(s, v);
    if (slow) v.anomalies.push_back(kAnomalySlowGpu);
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

}  // namespace mgbench
