// The sentences that explain a verdict: the binding part with the loss split, the straggler, the
// next step, the cause of a super-linear efficiency, a negative serial fraction, overlap on vs
// off (verdict_detail.hpp).
#include <algorithm>

#include "mgbench/core/ranges_text.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/model/stats.hpp"
#include "verdict_detail.hpp"

namespace mgbench::verdict_detail {
namespace {

std::optional<std::int64_t> integer_param(const Params& params, const char* name) {
  const ParamValue* value = params.find(name);
  if (value == nullptr || !value->is_integer()) return std::nullopt;
  return value->integer();
}

std::string gpu_name(const Straggler& s) {
  return "GPU " + std::to_string(s.device) + (s.host.empty() ? "" : " on " + s.host);
}

// At a fixed global batch: fewer GPUs when a smaller count gives more, else a larger batch.
std::string strong_next(const ScalingSeries& s) {
  const ScalingRow& best = best_row(s);
  if (best.gpus == s.rows.back().gpus) return "a larger global batch";
  return "fewer GPUs (" + gpus_text(best.gpus) + " give the most, " + number(best.throughput) +
         " " + s.unit + ") or a larger global batch";
}

std::string binding_phrase(const SeriesPoints& sp, const RunVerdict& v) {
  // 0 when the point has no integer batch.
  const std::int64_t batch =
      sp.last != nullptr ? integer_param(sp.last->params, "batch").value_or(0) : 0;
  const bool strong = sp.series.mode == "strong" && batch > 0;
  if (v.binding == kBindingCommunication) {
    return "Communication-bound" +
           (strong ? " at a per-GPU batch of " + std::to_string(batch) : std::string());
  }
  if (v.binding == kBindingNetwork) return "Network-bound";
  if (v.binding == kBindingCompute) return "Compute-bound: every GPU computes slower than alone";
  if (v.binding == kBindingStraggler && v.straggler) return "Waits for " + gpu_name(*v.straggler);
  if (v.binding == kBindingSmallBatch) {
    return batch > 0 ? "Per-GPU batch " + std::to_string(batch) + " too small"
                     : "Per-GPU work too small";
  }
  return "Most of the loss is outside communication and compute";
}

// At a small per-GPU batch (strong): how little compute and the optimizer shrink.
std::string shrink_text(const SeriesPoints& sp) {
  const ScalingRow& b = sp.series.rows.front();
  const ScalingRow& n = sp.series.rows.back();
  const double fewer = static_cast<double>(n.gpus) / b.gpus;
  std::string text;
  const auto cb = metric(sp.base, "compute_only_s"), cn = metric(sp.last, "compute_only_s");
  if (cb && cn && *cn > 0) {
    text += " Compute per GPU shrinks only " + fixed(*cb / *cn, 1) + "x for " + fixed(fewer, 0) +
            "x less work per GPU.";
  }
  const auto ob = metric(sp.base, "optimizer_s"), on = metric(sp.last, "optimizer_s");
  if (ob && on && *ob > 0 && *on > 0.8 * *ob) {
    const double unit = std::max(*ob, *on);
    text += " The optimizer does not shrink (" + duration(*ob, unit) + " on " +
            gpus_text(b.gpus) + ", " + duration(*on, unit) + " on " + gpus_text(n.gpus) +
            "): every GPU updates all the weights.";
  }
  return text;
}

}  // namespace

std::string binding_text(const SeriesPoints& sp, const RunVerdict& v) {
  if (v.binding.empty()) return "";
  std::string text = " " + binding_phrase(sp, v);
  if (v.loss) {
    const LossSplit& l = *v.loss;
    const double parts = l.comm_s + l.compute_s + l.straggler_s + l.rest_s;
    const bool breakdown = metric(sp.last, "exposed_comm_s").has_value();
    const std::string per = metric(sp.last, "step_time_s") ? " per step" : " per op";
    std::vector<std::string> items;
    const auto share = [&](double part) { return percent(parts > 0 ? part / parts : 0.0); };
    if (breakdown) items.push_back("exposed communication " + share(l.comm_s));
    items.push_back("compute growth " + share(l.compute_s));
    if (v.straggler && !v.straggler->baseline_gpu) {
      items.push_back("waiting for " + gpu_name(*v.straggler) + " " + share(l.straggler_s));
    }
    items.push_back("the rest " + share(l.rest_s));
    text += ": of the " + duration(l.lost_s, l.time_s) + " lost" + per + " at " +
            gpus_text(v.gpus_max) + " (" + duration(l.time_s) + " against an ideal " +
            duration(l.time_s - l.lost_s, l.time_s) + "), " + join_words(items) + ".";
  } else {
    text += ".";
  }
  if (v.binding == kBindingSmallBatch) text += shrink_text(sp);
  return text;
}

std::string straggler_text(const ScalingSeries& s, const Straggler& g) {
  const int n = s.rows.back().gpus;
  const std::string cause = g.cause.empty() ? "" : " (" + g.cause + ")";
  if (g.baseline_gpu) {
    return " " + gpu_name(g) + ", the GPU of the 1-GPU baseline, is itself the slowest rank at " +
           gpus_text(n) + ": " + percent(g.excess) + " above the typical GPU" + cause +
           ". Every group with it runs at its pace, so against a typical GPU " + gpus_text(n) +
           " give " + percent(g.efficiency_without) + ", not " + percent(s.rows.back().efficiency) +
           ".";
  }
  return " " + gpu_name(g) + " is the slowest rank at " + gpus_text(n) + ": " +
         percent(g.excess) + " above the typical GPU" + cause + "; without it " +
         percent(g.efficiency_without) + ".";
}

std::string next_step_text(const SeriesPoints& sp, const RunVerdict& v) {
  const ScalingSeries& s = sp.series;
  if (v.binding == kBindingCommunication) {
    if (s.mode == "strong") return strong_next(s);
    const ParamValue* overlap = s.params.find("overlap");
    if (overlap != nullptr && overlap->is_boolean() && !overlap->boolean()) {
      return "turn overlap on (the all-reduce then runs during the backward pass)";
    }
    return "more compute per byte exchanged (a larger per-GPU batch), larger all-reduce "
           "buckets, or a faster link between the GPUs";
  }
  if (v.binding == kBindingNetwork) {
    const auto& split = s.node_split;
    return "a faster network between the nodes (one NIC per GPU, GPUDirect RDMA)" +
           (split ? ", or one node: " + gpus_text(split->gpus_per_node) + " there give " +
                        percent(split->intra_efficiency)
                  : std::string());
  }
  if (v.binding == kBindingSmallBatch) return strong_next(s);
  if (v.binding == kBindingStraggler && v.straggler) {
    const Straggler& g = *v.straggler;
    std::string leave_out;
    if (sp.last != nullptr && g.host.empty()) {
      std::vector<int> rest;
      for (int d : sp.last->devices) {
        if (d != g.device) rest.push_back(d);
      }
      leave_out = " (--devices " + ranges_text(rest) + ")";
    }
    if (g.cause.find("power-capped") != std::string::npos) {
      return "restore " + gpu_name(g) + "'s power limit or leave it out" + leave_out;
    }
    return "leave " + gpu_name(g) + " out" + leave_out + " and check it (mgbench doctor)";
  }
  if (v.binding == kBindingCompute) {
    return "compare the GPUs' clocks and power under load (the telemetry columns): a shared "
           "power or cooling limit slows every GPU";
  }
  if (v.binding == kBindingOther) {
    return "profile the step (e.g. Nsight Systems): the time goes neither to communication nor "
           "to compute";
  }
  return "";
}

std::string super_linear_cause(const SeriesPoints& sp) {
  static const char* const unknown =
      "this run has no telemetry to tell whether the 1-GPU baseline was slowed";
  const PointResult* base = sp.base;
  if (base == nullptr) return unknown;
  std::vector<std::string> slowed;
  if (base->noisy) slowed.push_back("its median is uncertain (noisy)");
  const std::vector<GpuTelemetry> alone = gpu_telemetry(*base);
  std::vector<double> clocks_n;
  if (sp.last != nullptr) {
    for (const GpuTelemetry& g : gpu_telemetry(*sp.last)) {
      if (g.sm_clock_mhz.median) clocks_n.push_back(*g.sm_clock_mhz.median);
    }
  }
  const GpuTelemetry* g = alone.empty() ? nullptr : &alone.front();
  if (g != nullptr && held_by_temperature(*g)) slowed.push_back("it was held by temperature");
  if (g != nullptr && g->sm_clock_mhz.median && !clocks_n.empty() &&
      *g->sm_clock_mhz.median < 0.97 * median_of(clocks_n)) {
    slowed.push_back("its SM clock was " + fixed(*g->sm_clock_mhz.median, 0) + " MHz against " +
                     fixed(median_of(clocks_n), 0) + " MHz at " +
                     gpus_text(sp.series.rows.back().gpus));
  }
  if (!slowed.empty()) {
    return "the 1-GPU baseline was slowed: " + join_words(slowed) + "; measure it again";
  }
  if (g == nullptr || !g->sm_clock_mhz.median) return unknown;
  const std::string clean = "the 1-GPU baseline ran at full clocks (SM " +
                            fixed(*g->sm_clock_mhz.median, 0) + " MHz) with a certain median, ";
  if (sp.series.mode == "strong") {
    return clean + "so the likely cause is the smaller share of the fixed work per GPU: it may "
                   "now fit in cache";
  }
  return clean + "and per-GPU work is fixed: check that every GPU did the same work (inputs "
                 "shared or cached between GPUs)";
}

std::string negative_serial_text(const ScalingSeries& s) {
  for (const ScalingRow& r : s.rows) {
    const std::optional<double>& e = s.mode == "strong" ? r.karp_flatt : r.gustafson;
    if (!e || !(*e < 0)) continue;
    return " At " + gpus_text(r.gpus) + " the " +
           (s.mode == "strong" ? "Karp-Flatt" : "Gustafson") +
           " serial fraction is negative (" + fixed(100.0 * *e, 1) +
           " %): the GPUs did more together than their share alone, so no serial part can be "
           "read from it.";
  }
  return "";
}

std::string overlap_contrast(const ScalingSeries& s, const std::vector<ScalingSeries>& all) {
  const ParamValue* overlap = s.params.find("overlap");
  if (overlap == nullptr || !overlap->is_boolean()) return "";
  Params flipped = s.params;
  flipped.set("overlap", !overlap->boolean());
  const ScalingRow& mine = s.rows.back();
  for (const ScalingSeries& other : all) {
    if (other.workload != s.workload || other.params != flipped) continue;
    for (const ScalingRow& r : other.rows) {
      if (r.gpus != mine.gpus || !(r.time_s > 0)) continue;
      const bool on = flipped.boolean("overlap");
      const double saved = on ? mine.time_s - r.time_s : r.time_s - mine.time_s;
      return " With overlap " + std::string(on ? "on" : "off") + ", " + gpus_text(r.gpus) +
             " give " + percent(r.efficiency) + " (" + duration(r.time_s) +
             " per step): overlap saves " + duration(saved, r.time_s) + " per step.";
    }
  }
  return "";
}

}  // namespace mgbench::verdict_detail
