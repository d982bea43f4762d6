// `mgbench predict`: the points of a run on other GPU counts and links (see prediction.hpp).
#include "mgbench/analysis/prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "mgbench/analysis/scaling.hpp"
#include "mgbench/core/error.hpp"
#include "prediction_detail.hpp"

namespace mgbench {

using namespace prediction;

namespace {

constexpr int kMaxGpusPerNode = 1 << 16;
// NCCL 2.28 tuning model (src/graph/tuning.cc, 2025): the base latency of a ring all-reduce of
// the LL protocol, used as the per-call overhead when the run has no 1-GPU collective point.
constexpr double kDefaultOverheadS = 6.6e-6;
constexpr double kCalibratedShare = 0.95;  // below this share of B_intra, a ring is NIC-bound

// The intra-node link the results' environment shows: NVLink up -> its generation by compute
// capability, else the PCIe generation; nullopt when the environment does not tell.
std::optional<std::string> detect_intra(const RunResult& run) {
  const Json& gpus = run.environment.contains("gpus") ? run.environment["gpus"] : Json();
  if (!gpus.is_array() || gpus.empty() || !gpus[0].is_object()) return std::nullopt;
  const Json& gpu = gpus[0];
  const auto number = [](const Json& object, const char* a, const char* b) -> double {
    if (!object.contains(a) || !object[a].is_object() || !object[a].contains(b)) return 0;
    const Json& v = object[a][b];
    return v.is_number() ? v.get<double>() : 0;
  };
  if (number(gpu, "nvlink", "links_up") > 0) {
    const std::string cc = gpu.value("compute_capability", std::string());
    if (cc.rfind("8.", 0) == 0) return "nvlink3";
    if (cc.rfind("9.", 0) == 0) return "nvlink4";
    if (cc.size() >= 2 && cc.find('.') >= 2) return "nvlink5";  // 10.0 and later
    return std::nullopt;
  }
  const double gen = number(gpu, "pcie", "gen_current");
  if (gen >= 5) return "pcie5";
  if (gen >= 4) return "pcie4";
  return std::nullopt;
}

bool intra_needed(const PredictOptions& o) {
  return o.gpus_per_node > 1 &&
         std::any_of(o.gpu_counts.begin(), o.gpu_counts.end(), [](int n) { return n > 1; });
}

LinkChoice resolve_intra(const RunResult& run, const PredictOptions& o, const References& refs) {
  if (o.intra) return LinkChoice{*o.intra, "declared", false};
  LinkChoice choice;
  if (const auto name = detect_intra(run)) {
    choice = LinkChoice{link_preset(*name), "from the results' environment", false};
  } else {
    choice.link.name = "measured";
    choice.link.hop_latency_us = 1.0;
  }
  const Calibration* best = nullptr;
  for (const auto& cal : refs.calibrations) {
    if (cal.nodes == 1 && (best == nullptr || cal.gpus > best->gpus)) best = &cal;
  }
  if (best != nullptr) {
    choice.link.bandwidth_GBps = best->bus_GBps;
    if (best->hop_latency_us > 0) choice.link.hop_latency_us = best->hop_latency_us;
    choice.origin = fmt::format("calibrated on the {}-GPU {} points of the run", best->gpus,
                                to_string(best->kind));
    choice.calibrated = true;
  } else if (choice.link.bandwidth_GBps <= 0 && intra_needed(o)) {
    throw UsageError(
        "the results do not show which link joins the GPUs of a node: give --intra "
        "(nvlink3, nvlink4, nvlink5, pcie4, pcie5 or GB/s)");
  }
  return choice;
}

// The network's hop latency from a multi-node calibration: its latency (per ring step, all
// steps alike) less the intra-node hops at the intra-node latency, over the network hops.
double calibrated_inter_latency_us(const Calibration& cal, const Link& intra) {
  if (cal.gpus_per_node <= 1) return cal.hop_latency_us;
  const double steps = step_count(cal.kind, CollectiveAlgorithm::ring, cal.gpus)->steps;
  const double net = network_hops(cal.kind, cal.nodes);
  return (cal.hop_latency_us * steps - (steps - net) * intra.hop_latency_us) / net;
}

LinkChoice resolve_inter(const PredictOptions& o, const References& refs, const Link& intra) {
  if (o.inter) return LinkChoice{*o.inter, "declared", false};
  LinkChoice choice{link_preset("ib-ndr"), "assumed (not given, not in the results)", false};
  const Calibration* best = nullptr;
  for (const auto& cal : refs.calibrations) {
    if (cal.nodes > 1 && (best == nullptr || cal.nodes > best->nodes)) best = &cal;
  }
  if (best != nullptr &&
      (best->gpus_per_node == 1 || best->bus_GBps < kCalibratedShare * intra.bandwidth_GBps)) {
    choice.link.bandwidth_GBps = best->bus_GBps / std::max(best->gpus_per_node, 1);
    const double latency_us = calibrated_inter_latency_us(*best, intra);
    if (latency_us > 0) choice.link.hop_latency_us = latency_us;
    choice.origin = fmt::format("calibrated on the {}-node {} points of the run", best->nodes,
                                to_string(best->kind));
    choice.calibrated = true;
  }
  return choice;
}

// The points of one series: same workload and parameters, any GPU count.
struct Group {
  std::vector<std::size_t> points;  // positions in run.points, plan order
  const PointResult* one_gpu = nullptr;
};

std::vector<Group> group_points(const RunResult& run, const PredictOptions& o) {
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    const auto& p = run.points[i];
    if (p.status != Status::ok) continue;
    if (!o.workloads.empty() &&
        std::find(o.workloads.begin(), o.workloads.end(), p.workload) == o.workloads.end()) {
      continue;
    }
    const std::string key = p.workload + " " + p.params.dump();
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.points.push_back(i);
    if (p.gpus == 1 && it->second.one_gpu == nullptr) it->second.one_gpu = &p;
  }
  std::vector<Group> out;
  for (const auto& key : order) out.push_back(groups[key]);
  return out;
}

// Everything one series' rows are computed from.
struct SeriesContext {
  const RunResult* run = nullptr;
  const Group* group = nullptr;
  const WorkCost* cost = nullptr;
  std::vector<double> item_s;  // the compute items' seconds on the 1-GPU timeline
  std::optional<double> t1;    // T(1): measured, else composed
  bool t1_measured = false;
  double compute_band = 0, comm_band = 0;
  double overhead_s = 0;
  Topology topology;  // links and nodes; gpus set per row
  std::optional<ThroughputMetric> metric;
};

struct RowTimes {
  double total = 0, compute = 0, comm = 0, exposed = 0;
};

RowTimes row_times(const SeriesContext& c, int gpus, double compute_factor, double comm_factor,
                   std::vector<CollectiveTime>* detail) {
  Topology t = c.topology;
  t.gpus = gpus;
  std::vector<double> coll_s;
  for (const auto& w : c.cost->collectives) {
    const CollectiveTime ct = collective_time(w.kind, w.bytes, t);
    if (detail != nullptr) detail->push_back(ct);
    coll_s.push_back(gpus > 1 ? (c.overhead_s + ct.seconds) * comm_factor : 0.0);
  }
  std::vector<double> items = c.item_s;
  for (double& s : items) s *= compute_factor;
  const Timeline tl = simulate(items, *c.cost, coll_s);
  RowTimes out{tl.total_s, tl.compute_s, tl.comm_s, tl.exposed_s};
  if (gpus == 1 && c.cost->compute.empty()) {
    out.total = out.compute = c.t1 ? *c.t1 * compute_factor : c.overhead_s * comm_factor;
  }
  return out;
}

double work(const SeriesContext& c, int gpus) { return c.cost->work(gpus); }

std::optional<double> efficiency_at(const SeriesContext& c, int gpus, double t, double cf) {
  const double w1 = work(c, 1);
  if (!c.t1 || !(w1 > 0) || !(t > 0)) return std::nullopt;
  return (work(c, gpus) / t) / (gpus * w1 / (*c.t1 * cf));
}

std::optional<MeasuredAt> measured_at(const SeriesContext& c, int gpus, int nodes,
                                      double predicted_s) {
  for (std::size_t i : c.group->points) {
    const PointResult& p = c.run->points[i];
    if (p.gpus != gpus || std::max(p.placement.nodes, 1) != nodes || !usable(p.stats.median)) {
      continue;
    }
    MeasuredAt m;
    m.point_index = p.index;
    m.time_s = p.stats.median;
    const auto metric_of = [&](const PointResult& q) -> std::optional<double> {
      if (c.metric && q.metrics.contains(c.metric->name) && q.metrics[c.metric->name].is_number()) {
        return q.metrics[c.metric->name].get<double>();
      }
      const double w = work(c, q.gpus);
      return w > 0 ? std::optional<double>(w / q.stats.median) : std::nullopt;
    };
    m.throughput = metric_of(p);
    if (c.group->one_gpu != nullptr && m.throughput) {
      const auto x1 = metric_of(*c.group->one_gpu);
      if (x1 && *x1 > 0) m.efficiency = *m.throughput / (gpus * *x1);
    }
    m.ratio = predicted_s / m.time_s;
    return m;
  }
  return std::nullopt;
}

// The band: compute and communication each off by their uncertainty, every combination.
void fill_bands(const SeriesContext& c, PredictedRow& row) {
  row.time = Band{row.time_s, row.time_s};
  if (row.efficiency) row.efficiency_band = Band{*row.efficiency, *row.efficiency};
  for (double cf : {1 - c.compute_band, 1 + c.compute_band}) {
    for (double mf : {1 - c.comm_band, 1 + c.comm_band}) {
      const double t = row_times(c, row.gpus, cf, mf, nullptr).total;
      row.time.low = std::min(row.time.low, t);
      row.time.high = std::max(row.time.high, t);
      if (const auto e = efficiency_at(c, row.gpus, t, cf)) {
        row.efficiency_band.low = std::min(row.efficiency_band.low, *e);
        row.efficiency_band.high = std::max(row.efficiency_band.high, *e);
      }
    }
  }
  if (row.throughput) {
    const double w = work(c, row.gpus);
    row.throughput_band = Band{w / row.time.high, w / row.time.low};
  }
}

PredictedRow predict_row(const SeriesContext& c, int gpus) {
  PredictedRow row;
  row.gpus = gpus;
  Topology t = c.topology;
  t.gpus = gpus;
  row.nodes = t.nodes();
  std::vector<CollectiveTime> detail;
  const RowTimes times = row_times(c, gpus, 1, 1, &detail);
  row.time_s = times.total;
  row.compute_s = times.compute;
  row.comm_s = times.comm;
  row.exposed_s = times.exposed;
  // Rounding leaves a residue of the order of 1e-16 s where nothing is hidden.
  row.hidden_s = times.comm - times.exposed > 1e-9 * times.comm ? times.comm - times.exposed : 0.0;
  double intra = 0, inter = 0, largest = -1;
  for (std::size_t j = 0; j < detail.size(); ++j) {
    intra += detail[j].intra_s;
    inter += detail[j].inter_s;
    if (gpus > 1 && c.cost->collectives[j].bytes > largest) {
      largest = c.cost->collectives[j].bytes;
      row.algorithm = to_string(detail[j].algorithm);
    }
  }
  const double share = intra + inter > 0 ? inter / (intra + inter) : 0.0;
  row.exposed_inter_s = row.exposed_s * share;
  row.exposed_intra_s = row.exposed_s - row.exposed_inter_s;
  row.dominant = "compute";
  if (row.exposed_intra_s > row.compute_s && row.exposed_intra_s >= row.exposed_inter_s) {
    row.dominant = "intra-node communication";
  } else if (row.exposed_inter_s > row.compute_s) {
    row.dominant = "inter-node communication";
  }
  const double w = work(c, gpus);
  if (w > 0 && row.time_s > 0) row.throughput = w / row.time_s;
  row.efficiency = efficiency_at(c, gpus, row.time_s, 1);
  fill_bands(c, row);
  row.measured = measured_at(c, gpus, row.nodes, row.time_s);
  return row;
}

bool is_reference(const WorkCost& cost) {
  return cost.collectives.empty() && cost.compute.size() == 1;
}

// A measured T(1) whose run cannot compose it (`missing` says what it lacks): split among the
// cost's items by the GPU's datasheet rates, so that the collectives still start when their
// data is ready (wider band); without the GPU's model, one block that every collective waits
// for (none hidden). Either way a note says so.
void split_by_datasheet(SeriesContext& ctx, const std::string& missing, Prediction& out) {
  const WorkCost& cost = *ctx.cost;
  const PointResult& first = ctx.run->points[ctx.group->points.front()];
  std::string model, unused;
  const auto refs = datasheet_references(*ctx.run, cost, model);
  const auto comp = refs ? compose(cost, *refs, unused) : std::nullopt;
  if (comp && comp->total_s > 0) {
    ctx.item_s = comp->item_s;
    for (double& v : ctx.item_s) v *= *ctx.t1 / comp->total_s;
    ctx.compute_band = kBandComposedCompute;
  } else {
    ctx.item_s.assign(cost.compute.size(), 0.0);
    ctx.item_s[0] = *ctx.t1;
  }
  if (cost.collectives.empty()) return;
  out.notes.push_back(
      comp ? fmt::format("{} {}: {}; its measured time is split among its parts by the {} "
                         "datasheet's peaks (GEMM, HBM, PCIe) to place its communication",
                         first.workload, describe_params(first.params), missing, model)
           : fmt::format("{} {}: {}; its communication is counted as not hidden",
                         first.workload, describe_params(first.params), missing));
}

// The compute timeline of a series at 1 GPU (ctx.item_s, ctx.t1, ctx.compute_band) and its
// compute check; false (with a note) when the series cannot be predicted.
bool place_compute(SeriesContext& ctx, const References& refs, Prediction& out) {
  const WorkCost& cost = *ctx.cost;
  const PointResult* one = ctx.group->one_gpu;
  const PointResult& first = ctx.run->points[ctx.group->points.front()];
  if (one != nullptr && usable(one->stats.median)) {
    ctx.t1 = one->stats.median;
    ctx.t1_measured = true;
  }
  if (cost.compute.empty()) return true;
  std::string missing;
  const auto comp = compose(cost, refs, missing);
  if (comp && ctx.t1 && comp->total_s > 0) {
    ctx.item_s = comp->item_s;
    for (double& v : ctx.item_s) v *= *ctx.t1 / comp->total_s;
    if (!is_reference(cost)) {
      out.compute_checks.push_back(ComputeCheck{
          first.workload, first.params, *ctx.t1, comp->total_s, comp->total_s / *ctx.t1 - 1,
          comp->gemm_s, comp->memory_s, comp->host_copy_s, comp->references});
    }
  } else if (ctx.t1) {
    split_by_datasheet(ctx, missing, out);
  } else if (comp) {
    ctx.item_s = comp->item_s;
    ctx.t1 = comp->total_s;
    ctx.compute_band = kBandComposedCompute;
  } else {
    out.notes.push_back(fmt::format("{} {}: no 1-GPU point and {}: not predicted", first.workload,
                                    describe_params(first.params), missing));
    return false;
  }
  return true;
}

std::string basis_of(const SeriesContext& ctx) {
  if (ctx.t1_measured) {
    return fmt::format("T(1) measured (point {})", ctx.group->one_gpu->index);
  }
  if (ctx.t1) return "T(1) composed from the run's GEMM, memory and host-copy points";
  return "communication only";
}

void add_series(Prediction& out, const RunResult& run, const Group& group, const WorkCost& cost,
                const References& refs, const PredictOptions& o, const ThroughputLookup& lookup) {
  const PointResult& first = run.points[group.points.front()];
  SeriesContext ctx;
  ctx.run = &run;
  ctx.group = &group;
  ctx.cost = &cost;
  ctx.compute_band = kBandMeasuredCompute;
  ctx.overhead_s = overhead_for(refs, first.measured.timing).value_or(kDefaultOverheadS);
  ctx.topology = Topology{1, o.gpus_per_node, out.intra.link, out.inter.link, out.nvls};
  ctx.topology.hierarchical = !out.inter.calibrated;
  ctx.metric = lookup(first.workload);
  if (!place_compute(ctx, refs, out)) return;
  PredictedSeries series;
  series.workload = first.workload;
  series.params = first.params;
  if (ctx.metric) {
    series.metric = ctx.metric->name;
    series.unit = ctx.metric->unit;
  }
  series.basis = basis_of(ctx);
  for (int n : o.gpu_counts) {
    // Calibrated links narrow the band only where the row uses no other link.
    SeriesContext row_ctx = ctx;
    Topology t = ctx.topology;
    t.gpus = n;
    const bool uses_inter = t.nodes() > 1;
    const bool calibrated = out.intra.calibrated && (!uses_inter || out.inter.calibrated);
    row_ctx.comm_band = calibrated ? kBandCalibratedComm : kBandDeclaredComm;
    series.rows.push_back(predict_row(row_ctx, n));
  }
  out.series.push_back(std::move(series));
}

}  // namespace

bool run_allows_nvls(const RunResult& run) {
  const auto it = run.environment.find("nccl_nvls");
  if (it == run.environment.end() || !it->is_string()) return false;
  return it->get<std::string>().rfind("off", 0) != 0;
}

int gpus_per_node_of(const RunResult& run) {
  int most = 1;
  for (const PointResult& p : run.points) {
    most = std::max(most, p.placement.nodes > 1 ? p.placement.gpus_per_node : p.gpus);
  }
  const auto gpus = run.environment.find("gpus");
  if (gpus != run.environment.end() && gpus->is_array()) {
    most = std::max(most, static_cast<int>(std::min<std::size_t>(gpus->size(), kMaxGpusPerNode)));
  }
  return std::min(most, kMaxGpusPerNode);
}

std::vector<int> series_gpu_counts(const RunResult& run, int gpus_per_node) {
  std::set<int> counts;
  for (const ScalingSeries& s : run.scaling) {
    for (const ScalingRow& r : s.rows) counts.insert(r.gpus);
  }
  if (!counts.empty() && *counts.rbegin() < (1 << 20)) {
    int next = 1;
    while (next <= *counts.rbegin()) next *= 2;
    counts.insert(next);
  }
  std::vector<int> out;
  for (int n : counts) {
    if (n >= 1 && (n <= gpus_per_node || n % gpus_per_node == 0)) out.push_back(n);
  }
  return out;
}

void validate(const PredictOptions& o) {
  if (o.gpus_per_node < 1 || o.gpus_per_node > kMaxGpusPerNode) {
    throw UsageError(fmt::format("invalid --gpus-per-node {}: expected 1 to {}", o.gpus_per_node,
                                 kMaxGpusPerNode));
  }
  if (o.gpu_counts.empty()) throw UsageError("--gpus: no GPU count given");
  for (int n : o.gpu_counts) {
    if (n < 1) throw UsageError(fmt::format("invalid --gpus value {}: expected >= 1", n));
    if (n > o.gpus_per_node && n % o.gpus_per_node != 0) {
      throw UsageError(
          fmt::format("--gpus {} does not fill whole nodes of {} GPUs "
                      "(--gpus-per-node {})",
                      n, o.gpus_per_node, o.gpus_per_node));
    }
  }
}

Prediction predict(const RunResult& run, const PredictOptions& options, const CostLookup& costs) {
  validate(options);
  for (const auto& name : options.workloads) {
    const bool found = std::any_of(run.points.begin(), run.points.end(), [&](const auto& p) {
      return p.workload == name && p.status == Status::ok;
    });
    if (!found)
      throw UsageError(fmt::format("the results have no ok point of workload '{}'", name));
  }
  const auto point_costs = costs_of(run, costs);
  const References refs = gather_references(run, point_costs);
  Prediction out;
  out.gpus_per_node = options.gpus_per_node;
  out.nvls = options.nvls.value_or(run_allows_nvls(run));
  out.intra = resolve_intra(run, options, refs);
  out.inter = resolve_inter(options, refs, out.intra.link);
  const auto overhead = overhead_for(refs, TimingMethod::host);
  out.call_overhead_s = overhead.value_or(kDefaultOverheadS);
  out.call_overhead_origin = overhead ? "the fastest 1-GPU collective point of the run"
                                      : "NCCL's base latency (no 1-GPU collective point)";
  const ThroughputLookup lookup = presentation_throughput(run);
  std::vector<std::string> unmodelled;
  for (const Group& group : group_points(run, options)) {
    const auto& cost = point_costs[group.points.front()];
    const std::string& workload = run.points[group.points.front()].workload;
    if (!cost) {
      if (std::find(unmodelled.begin(), unmodelled.end(), workload) == unmodelled.end()) {
        unmodelled.push_back(workload);
      }
      continue;
    }
    add_series(out, run, group, *cost, refs, options, lookup);
  }
  for (const auto& w : unmodelled) {
    out.notes.push_back(
        fmt::format("{}: some or all points have no cost model (not predicted)", w));
  }
  return out;
}

}  // namespace mgbench
