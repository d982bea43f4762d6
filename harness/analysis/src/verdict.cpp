// Plain-words verdicts from the scaling series, the step-time breakdown and baseline outliers.
#include "mgbench/analysis/verdict.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "mgbench/core/text.hpp"
#include "mgbench/model/point_view.hpp"
#include "verdict_detail.hpp"

namespace mgbench {

using namespace verdict_detail;

namespace {

std::string value_text(const ParamValue& value) {
  if (value.is_boolean()) return value.boolean() ? "on" : "off";
  return value.str();
}

std::string name_text(std::string name) {
  for (char& c : name) {
    if (c == '_') c = ' ';
  }
  return name;
}

// The workload's own words for a point's communication (rank 0's details.communication: "what"
// and "parts", each part a label and its exposed seconds), e.g. the FSDP all-gathers and
// reduce-scatters; empty "what" when the point has none.
constexpr std::size_t kLabelChars = 160;  // results files come from other machines
constexpr std::size_t kMostParts = 4;
struct Communication {
  std::string what;
  std::vector<std::pair<std::string, double>> parts;
};
Communication communication_of(const PointResult* point) {
  Communication c;
  if (point == nullptr) return c;
  const Json d = rank_detail(*point, 0, "communication");
  if (!d.is_object() || !d.contains("what") || !d.at("what").is_string()) return c;
  c.what = one_line(d.at("what").get<std::string>().substr(0, kLabelChars));
  const Json parts = d.value("parts", Json::array());
  for (const Json& p : parts.is_array() ? parts : Json::array()) {
    if (!p.is_object() || !p.contains("label") || !p.at("label").is_string()) continue;
    const Json s = p.value("exposed_s", Json());
    if (!s.is_number()) continue;
    c.parts.emplace_back(one_line(p.at("label").get<std::string>().substr(0, kLabelChars)),
                         s.get<double>());
    if (c.parts.size() == kMostParts) break;
  }
  return c;
}

// "Exposed communication is 9 % of the step; overlap hides 71 % of all-reduce time." on more
// GPUs, or in the workload's words: "Exposed communication (the FSDP parameter all-gathers and
// gradient reduce-scatters) is 12 % of the step (parameter all-gathers 9 %, gradient
// reduce-scatters 3 %); overlap hides 40 % of it."; "Host-to-device copies take 3 % and the
// optimizer 2 % of the step." on one GPU only: on more GPUs those parts are not what scaling
// loses (the loss split says what is).
std::string breakdown_text(const PointResult* point, int gpus) {
  std::string text;
  const std::optional<double> step = metric(point, "step_time_s");
  const bool have_step = step && *step > 0;
  const std::optional<double> exposed = metric(point, "exposed_comm_s");
  const std::optional<double> overlap = metric(point, "overlap_ratio");
  const Communication comm = communication_of(point);
  if (gpus > 1) {
    std::vector<std::string> parts;
    if (exposed && have_step) {
      std::string of_parts;
      for (const auto& [label, seconds] : comm.parts) {
        of_parts += (of_parts.empty() ? " (" : ", ") + label + " " + percent(seconds / *step);
      }
      if (!of_parts.empty()) of_parts += ")";
      parts.push_back("Exposed communication" + (comm.what.empty() ? "" : " (" + comm.what + ")") +
                      " is " + percent(*exposed / *step) + " of the step" + of_parts);
    }
    if (overlap) {
      parts.push_back(std::string(parts.empty() ? "Overlap" : "overlap") + " hides " +
                      percent(*overlap) +
                      (comm.what.empty() ? " of all-reduce time" : " of its time"));
    }
    for (std::size_t i = 0; i < parts.size(); ++i) text += (i > 0 ? "; " : " ") + parts[i];
    if (!parts.empty()) text += ".";
  }
  if (have_step && gpus <= 1) {
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


// "8 GPUs give 7.1x (89 %)." or the 1-GPU sentence; at a fixed global batch its size; against
// another baseline than 1 GPU, which and why.
std::string headline_text(const ScalingSeries& s) {
  const ScalingRow& last = s.rows.back();
  const ScalingRow& base = s.rows.front();
  if (last.gpus <= base.gpus) {
    if (!s.no_baseline.empty()) {
      return "no baseline: " + s.no_baseline + ", and no other GPU count to scale against.";
    }
    return "measured on 1 GPU only (" + number(last.throughput) + " " + s.unit +
           "); no scaling figure.";
  }
  std::string strong;
  if (s.mode == "strong") {
    strong = " at a fixed global batch";
    const ParamValue* global_batch = s.params.find("global_batch");
    if (global_batch != nullptr && global_batch->is_integer()) {
      const auto global = global_batch->integer();
      strong += " of " + std::to_string(global) + " (" + std::to_string(global / last.gpus) +
                " per GPU)";
    }
  }
  if (base.gpus > 1) {
    return "no baseline: " + s.no_baseline + ", so " + gpus_text(base.gpus) +
           " are the baseline. " + gpus_text(last.gpus) + " give " + fixed(last.speedup, 1) +
           "x the throughput of " + gpus_text(base.gpus) + " (" + percent(last.efficiency) +
           " of " + fixed(static_cast<double>(last.gpus) / base.gpus, 0) + "x)" + strong + ".";
  }
  return gpus_text(last.gpus) + " give " + fixed(last.speedup, 1) + "x (" +
         percent(last.efficiency) + ")" + strong + "." +
         (s.baseline.empty() ? "" : " Baseline: " + s.baseline + ".");
}

// "The most throughput is at 2 GPUs (X unit)." when a smaller GPU count gives more.
std::string best_count_text(const ScalingSeries& s) {
  const ScalingRow& best = best_row(s);
  if (best.gpus == s.rows.back().gpus) return "";
  return " The most throughput is at " + gpus_text(best.gpus) + " (" + number(best.throughput) +
         " " + s.unit + ").";
}

// "Within a node (1 -> 8 GPUs) efficiency is 94 %; between nodes (1 -> 4 nodes) 61 %: most of
// the loss is between nodes (the network)." Sets the verdict's losing part.
std::string node_split_text(const ScalingSeries& s, RunVerdict& v) {
  if (!s.node_split) return "";
  const NodeSplit& n = *s.node_split;
  std::string text = " Within a node (1 -> " + gpus_text(n.gpus_per_node) + ") efficiency is " +
                     percent(n.intra_efficiency) + "; between nodes (1 -> " +
                     std::to_string(n.nodes) + " nodes) " + percent(n.inter_efficiency) + ": ";
  const double intra_loss = 1.0 - n.intra_efficiency, inter_loss = 1.0 - n.inter_efficiency;
  if (std::max(intra_loss, inter_loss) <= kPartLossTolerance) {
    return text + "both parts scale well.";
  }
  if (inter_loss >= intra_loss) {
    v.losing_part = kLosingInterNode;
    return text + "most of the loss is between nodes (the network).";
  }
  v.losing_part = kLosingIntraNode;
  return text + "most of the loss is within a node (NVLink/PCIe and the GPUs themselves).";
}

// Per workload and 1-GPU parameters (dumped), the device of the first ok 1-GPU point: the
// baseline a sweep without --baseline each takes.
using FirstDevices = std::map<std::pair<std::string, std::string>, std::pair<std::size_t, int>>;
FirstDevices first_alone_devices(const std::vector<PointResult>& points) {
  FirstDevices out;
  for (const PointResult& p : points) {
    if (p.gpus != 1 || p.status != Status::ok || p.devices.empty()) continue;
    const auto key = std::make_pair(p.workload, p.params.dump());
    const auto it = out.find(key);
    if (it == out.end() || p.index < it->second.first) {
      out[key] = {p.index, p.devices.front()};
    }
  }
  return out;
}

// The baseline-each outliers of the series' 1-GPU parameters; sets slow_gpu when any.
std::string outliers_text(const ScalingSeries& s, const Params& base_params,
                          const std::vector<Json>& outliers, int default_device, RunVerdict& v) {
  std::string text;
  for (const Json& o : outliers) {
    if (!o.is_object() || o.value("workload", std::string()) != s.workload) continue;
    if (!o.contains("params") || o.at("params") != Json(base_params)) continue;
    const Json device = o.value("device", Json()), best = o.value("best_device", Json());
    const Json deficit = o.value("deficit", Json()), x = o.value("throughput", Json());
    if (!device.is_number_integer() || !best.is_number_integer() || !deficit.is_number()) {
      continue;
    }
    text += " GPU " + device.dump() + " is " + percent(deficit.get<double>()) +
            " slower than the best GPU (GPU " + best.dump() + ").";
    if (device.get<int>() == default_device && !s.baseline.empty() && x.is_number() &&
        x.get<double>() > 0) {
      text += " It is the baseline of a sweep without --baseline each: against it every "
              "efficiency would read " +
              fixed(s.rows.front().throughput / x.get<double>(), 2) + "x higher.";
    }
  }
  if (!text.empty()) v.anomalies.push_back(kAnomalySlowGpu);
  return text;
}

// Super-linear efficiency (with its likely cause), collapse and falling throughput: sentences
// and codes.
std::string anomalies_text(const SeriesPoints& sp, RunVerdict& v) {
  const ScalingSeries& s = sp.series;
  std::vector<std::string> super_linear, collapse, drops;
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const ScalingRow& row = s.rows[i];
    if (row.gpus <= s.rows.front().gpus) continue;
    const std::string at = gpus_text(row.gpus) + " (" + percent(row.efficiency) + ")";
    if (row.efficiency > kSuperLinearEfficiency) super_linear.push_back(at);
    if (row.efficiency < kCollapseEfficiency) collapse.push_back(at);
    if (i > 0 && row.throughput < s.rows[i - 1].throughput) {
      drops.push_back("from " + std::to_string(s.rows[i - 1].gpus) + " to " +
                      gpus_text(row.gpus) + " (" + number(s.rows[i - 1].throughput) + " -> " +
                      number(row.throughput) + " " + s.unit + ")");
    }
  }
  std::string text;
  if (!super_linear.empty()) {
    text += " Anomaly: super-linear efficiency at " + join_words(super_linear) + ": " +
            super_linear_cause(sp) + ".";
    v.anomalies.push_back(kAnomalySuperLinear);
  }
  if (!collapse.empty()) {
    text += " Anomaly: scaling collapses at " + join_words(collapse) +
            ": less than half of the GPUs' combined capacity is used.";
    v.anomalies.push_back(kAnomalyCollapse);
  }
  if (!drops.empty()) {
    text += " Anomaly: throughput falls " + join_words(drops) + ".";
    v.anomalies.push_back(kAnomalyNonMonotonic);
  }
  return text;
}

// One series' verdict.
RunVerdict explain(const SeriesPoints& sp, const std::vector<ScalingSeries>& all,
                   const FirstDevices& first, const std::vector<Json>& outliers) {
  const ScalingSeries& s = sp.series;
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
  const std::string split = node_split_text(s, v);
  v.straggler = find_straggler(sp);
  // Against a baseline that ran on the straggler itself, the lost time is not a loss split.
  if (!(v.straggler && v.straggler->baseline_gpu)) v.loss = split_loss(sp, v.straggler);
  v.binding = binding_of(sp, v);
  v.next_step = next_step_text(sp, v);
  const std::string label = verdict_label(s, all);
  const Params base_params = sp.base != nullptr ? sp.base->params : s.params;
  const auto found = first.find({s.workload, base_params.dump()});
  const int first_device = found == first.end() ? -1 : found->second.second;
  v.text = s.workload + (label.empty() ? "" : " " + label) + ": " + headline_text(s) +
           breakdown_text(sp.last, last.gpus) + best_count_text(s) + binding_text(sp, v) +
           (v.straggler ? straggler_text(s, *v.straggler) : "") + overlap_contrast(s, all) +
           split +
           outliers_text(s, base_params, outliers, first_device, v);
  v.text += anomalies_text(sp, v) + negative_serial_text(s) +
            (v.next_step.empty() ? "" : " Next: " + v.next_step + ".");
  return v;
}

}  // namespace

std::string verdict_label(const ScalingSeries& series, const std::vector<ScalingSeries>& all) {
  std::set<std::string> varying;
  for (const ScalingSeries& other : all) {
    if (other.workload != series.workload) continue;
    for (const auto& [key, value] : series.params) {
      const ParamValue* theirs = other.params.find(key);
      if (theirs == nullptr || *theirs != value) varying.insert(key);
    }
    for (const auto& entry : other.params) {
      if (!series.params.contains(entry.first)) varying.insert(entry.first);
    }
  }
  std::vector<std::string> words, named;
  for (const auto& [key, value] : series.params) {
    if (varying.count(key) == 0) continue;
    if (value.is_text()) {
      words.push_back(value.text());
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
                                         const std::vector<Json>& outliers,
                                         const Json& environment) {
  std::map<std::size_t, const PointResult*> by_index;
  for (const PointResult& p : points) by_index.emplace(p.index, &p);
  const auto find_point = [&](std::size_t index) -> const PointResult* {
    const auto it = by_index.find(index);
    return it == by_index.end() ? nullptr : it->second;
  };
  const FirstDevices first = first_alone_devices(points);
  std::vector<RunVerdict> verdicts;
  for (const ScalingSeries& s : series) {
    if (s.rows.empty()) continue;
    const SeriesPoints sp{s, find_point(s.rows.front().point_index),
                          find_point(s.rows.back().point_index), environment};
    verdicts.push_back(explain(sp, series, first, outliers));
  }
  return verdicts;
}

}  // namespace mgbench
