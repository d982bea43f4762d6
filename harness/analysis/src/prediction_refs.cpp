// What a results file measured that the prediction builds on: GEMM, memory and host-copy rates
// of 1-GPU points, the per-call overhead of a collective on 1 GPU, the bandwidth and latency of
// measured multi-GPU collectives; the composition of an op from them; the op's timeline.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "mgbench/core/error.hpp"
#include "mgbench/model/gpu_models.hpp"
#include "mgbench/model/point_quality.hpp"
#include "prediction_detail.hpp"

namespace mgbench::prediction {

namespace {

bool only_one(const WorkCost& cost, ComputeKind kind) {
  return cost.collectives.empty() && cost.compute.size() == 1 && cost.compute[0].kind == kind &&
         cost.compute[0].repeat == 1;
}

bool only_collective(const WorkCost& cost) {
  return cost.compute.empty() && cost.collectives.size() == 1 && cost.collectives[0].bytes > 0;
}

double flops(const ComputeWork& g) {
  return 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
}

void keep_fastest(std::optional<double>& best, std::size_t& best_point, double rate,
                  std::size_t index) {
  if (!best || rate > *best) {
    best = rate;
    best_point = index;
  }
}

void add_gemm(std::vector<GemmRef>& gemms, const ComputeWork& g, double rate, std::size_t index) {
  for (auto& ref : gemms) {
    if (ref.dtype == g.dtype && ref.m == g.m && ref.n == g.n && ref.k == g.k) {
      if (rate > ref.flops_per_s) ref = GemmRef{g.dtype, g.m, g.n, g.k, rate, index};
      return;
    }
  }
  gemms.push_back(GemmRef{g.dtype, g.m, g.n, g.k, rate, index});
}

// Multi-GPU collective points, per (gpus, nodes): the plateau bandwidth and the latency.
void add_calibrations(References& refs, const RunResult& run,
                      const std::vector<std::optional<WorkCost>>& costs) {
  struct Seen {
    Calibration cal;
    double smallest_bytes = std::numeric_limits<double>::max(), smallest_t = 0;
    std::optional<TimingMethod> timing;
  };
  std::vector<Seen> seen;
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    const auto& p = run.points[i];
    if (!costs[i] || p.gpus < 2 || !only_collective(*costs[i]) || !usable(p.stats.median)) {
      continue;
    }
    const CollectiveWork& c = costs[i]->collectives[0];
    const auto sc = step_count(c.kind, CollectiveAlgorithm::ring, p.gpus);
    const int nodes = std::max(p.placement.nodes, 1);
    auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) {
      return s.cal.kind == c.kind && s.cal.gpus == p.gpus && s.cal.nodes == nodes;
    });
    if (it == seen.end()) {
      Seen fresh;
      fresh.cal = Calibration{c.kind, p.gpus, nodes, p.gpus / nodes, 0, 0};
      seen.push_back(fresh);
      it = seen.end() - 1;
    }
    it->cal.bus_GBps = std::max(it->cal.bus_GBps, sc->volume * c.bytes / p.stats.median / 1e9);
    if (c.bytes < it->smallest_bytes) {
      it->smallest_bytes = c.bytes;
      it->smallest_t = p.stats.median;
      it->timing = p.measured.timing;
    }
  }
  for (auto& s : seen) {
    const auto sc = step_count(s.cal.kind, CollectiveAlgorithm::ring, s.cal.gpus);
    const double overhead = overhead_for(refs, s.timing).value_or(0.0);
    const double wire = sc->volume * s.smallest_bytes / (s.cal.bus_GBps * 1e9);
    s.cal.hop_latency_us = std::max(0.0, (s.smallest_t - overhead - wire) / sc->steps) * 1e6;
    refs.calibrations.push_back(s.cal);
  }
}

}  // namespace

bool usable(double seconds) { return seconds > 0 && std::isfinite(seconds); }

std::optional<double> overhead_for(const References& refs,
                                   std::optional<TimingMethod> timing) {
  for (const auto& key : {timing, std::optional<TimingMethod>(TimingMethod::host)}) {
    const auto it = refs.overhead_s.find(key);
    if (it != refs.overhead_s.end()) return it->second;
  }
  if (refs.overhead_s.empty()) return std::nullopt;
  double least = refs.overhead_s.begin()->second;
  for (const auto& [method, seconds] : refs.overhead_s) least = std::min(least, seconds);
  return least;
}

std::vector<std::optional<WorkCost>> costs_of(const RunResult& run, const CostLookup& lookup) {
  std::vector<std::optional<WorkCost>> costs(run.points.size());
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    if (run.points[i].status != Status::ok) continue;
    try {
      costs[i] = lookup(run.points[i]);
    } catch (const Error&) {
      costs[i].reset();  // parameters the model refuses: the point is not modelled
    } catch (const Json::exception&) {
      costs[i].reset();
    }
    if (costs[i] && !costs[i]->work) costs[i].reset();
  }
  return costs;
}

References gather_references(const RunResult& run,
                             const std::vector<std::optional<WorkCost>>& costs) {
  References refs;
  std::vector<std::pair<double, std::size_t>> memory;  // rate, point index
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    const auto& p = run.points[i];
    const double t = p.stats.median;
    if (!costs[i] || p.gpus != 1 || !usable(t)) continue;
    const WorkCost& cost = *costs[i];
    if (only_one(cost, ComputeKind::gemm)) {
      add_gemm(refs.gemms, cost.compute[0], flops(cost.compute[0]) / t, p.index);
    } else if (only_one(cost, ComputeKind::memory)) {
      memory.emplace_back(cost.compute[0].bytes / t, p.index);
    } else if (only_one(cost, ComputeKind::host_copy)) {
      keep_fastest(refs.host_copy_Bps, refs.host_copy_point, cost.compute[0].bytes / t, p.index);
    } else if (only_collective(cost)) {
      auto [it, fresh] = refs.overhead_s.emplace(p.measured.timing, t);
      if (!fresh) it->second = std::min(it->second, t);
    }
  }
  if (!memory.empty()) {
    // The median: element-wise kernels run at the sustained rate of a stream kernel, which a
    // copy-engine copy may beat and a short array may miss.
    std::sort(memory.begin(), memory.end());
    const std::size_t mid = memory.size() / 2;
    refs.memory_Bps = memory.size() % 2 == 1 ? memory[mid].first
                                             : (memory[mid - 1].first + memory[mid].first) / 2;
    refs.memory_point = memory[memory.size() % 2 == 1 ? mid : mid - 1].second;
  }
  add_calibrations(refs, run, costs);
  return refs;
}

std::optional<References> datasheet_references(const RunResult& run, const WorkCost& cost,
                                                std::string& model) {
  const Json gpus = run.environment.value("gpus", Json::array());
  if (!gpus.is_array() || gpus.empty() || !gpus[0].is_object()) return std::nullopt;
  const Json& gpu = gpus[0];
  const Json memory = gpu.value("memory_bytes", Json());
  const GpuModel* row =
      match_gpu_model(gpu.value("name", std::string()),
                      memory.is_number_unsigned() ? memory.get<std::uint64_t>() : 0);
  if (row == nullptr) return std::nullopt;
  model = row->id;
  References refs;
  for (const auto& item : cost.compute) {
    if (item.kind != ComputeKind::gemm) continue;
    const double peak = model_tflops(*row, item.dtype);
    if (!(peak > 0)) return std::nullopt;
    refs.gemms.push_back(GemmRef{item.dtype, item.m, item.n, item.k, peak * 1e12, 0});
  }
  if (row->memory_GBps > 0) refs.memory_Bps = row->memory_GBps * 1e9;
  const Json pcie = gpu.value("pcie", Json::object());
  const auto lanes = [&](const char* key) {
    const Json v = pcie.is_object() ? pcie.value(key, Json()) : Json();
    return v.is_number_unsigned() ? v.get<unsigned>() : 0u;
  };
  const double host = pcie_link_GBps(lanes("gen_max"), lanes("width_max"));
  if (host > 0) refs.host_copy_Bps = host * 1e9;
  return refs;
}

std::optional<GemmRef> nearest_gemm(const References& refs, const ComputeWork& gemm) {
  std::optional<GemmRef> best;
  double best_distance = 0;
  const auto log_ratio = [](std::int64_t a, std::int64_t b) {
    return std::fabs(std::log(static_cast<double>(a) / static_cast<double>(b)));
  };
  for (const auto& ref : refs.gemms) {
    if (ref.dtype != gemm.dtype) continue;
    const double d = log_ratio(ref.m, gemm.m) + log_ratio(ref.n, gemm.n) + log_ratio(ref.k, gemm.k);
    if (!best || d < best_distance) {
      best = ref;
      best_distance = d;
    }
  }
  return best;
}

namespace {

// How the measured shape `ref` stands for `gemm`, after its rate: "" when it is the same, else
// " (nearest shape)", and when a dimension differs by more than kFarShape which one, by how
// much, and the sweep that measures the shape itself (a small dimension, such as attention's
// head size, runs well below a large GEMM's rate).
constexpr double kFarShape = 2.0;
std::string shape_match(const GemmRef& ref, const ComputeWork& gemm) {
  if (ref.m == gemm.m && ref.n == gemm.n && ref.k == gemm.k) return "";
  const auto off = [](std::int64_t a, std::int64_t b) {
    return static_cast<double>(std::max(a, b)) / static_cast<double>(std::min(a, b));
  };
  const std::pair<const char*, double> dims[] = {
      {"M", off(ref.m, gemm.m)}, {"N", off(ref.n, gemm.n)}, {"K", off(ref.k, gemm.k)}};
  const auto* worst = std::max_element(
      std::begin(dims), std::end(dims),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  if (worst->second <= kFarShape) return " (nearest shape)";
  return fmt::format(" (nearest shape; {} {:.3g}x off: measure --param shape={}x{}x{})",
                     worst->first, worst->second, gemm.m, gemm.n, gemm.k);
}

}  // namespace

std::optional<Composition> compose(const WorkCost& cost, const References& refs,
                                   std::string& missing) {
  Composition out;
  std::vector<std::string> used;
  const auto note = [&](std::string text) {
    if (std::find(used.begin(), used.end(), text) == used.end()) used.push_back(std::move(text));
  };
  for (const auto& item : cost.compute) {
    double seconds = 0;
    if (item.kind == ComputeKind::gemm) {
      const auto ref = nearest_gemm(refs, item);
      if (!ref) {
        missing = fmt::format("no ok 1-GPU {} GEMM point", item.dtype);
        return std::nullopt;
      }
      seconds = flops(item) / ref->flops_per_s;
      out.gemm_s += seconds * item.repeat;
      note(fmt::format("{} GEMM {}x{}x{}: point {} ({}x{}x{}, {:.1f} TFLOP/s){}", item.dtype,
                       item.m, item.n, item.k, ref->point_index, ref->m, ref->n, ref->k,
                       ref->flops_per_s / 1e12, shape_match(*ref, item)));
    } else {
      const bool memory = item.kind == ComputeKind::memory;
      const auto& rate = memory ? refs.memory_Bps : refs.host_copy_Bps;
      if (!rate) {
        missing = memory ? "no ok 1-GPU memory-bandwidth point" : "no ok 1-GPU host-copy point";
        return std::nullopt;
      }
      seconds = item.bytes / *rate;
      (memory ? out.memory_s : out.host_copy_s) += seconds * item.repeat;
      note(fmt::format("{}: point {} ({:.1f} GB/s)", memory ? "memory" : "host copy",
                       memory ? refs.memory_point : refs.host_copy_point, *rate / 1e9));
    }
    out.item_s.push_back(seconds * item.repeat);
  }
  out.total_s = out.gemm_s + out.memory_s + out.host_copy_s;
  out.references = std::move(used);
  return out;
}

Timeline simulate(const std::vector<double>& item_s, const WorkCost& cost,
                  const std::vector<double>& collective_s) {
  Timeline out;
  std::vector<double> end(item_s.size(), 0);
  double before = 0, after = 0;
  for (std::size_t i = 0; i < item_s.size(); ++i) {
    if (cost.compute[i].after_communication) {
      after += item_s[i];
    } else {
      before += item_s[i];
    }
    end[i] = before;
  }
  double comm_end = 0;
  for (std::size_t j = 0; j < cost.collectives.size(); ++j) {
    const auto& ready_after = cost.collectives[j].ready_after;
    const double ready = ready_after && *ready_after < end.size() ? end[*ready_after] : before;
    comm_end = std::max(comm_end, ready) + collective_s[j];
    out.comm_s += collective_s[j];
  }
  out.compute_s = before + after;
  out.exposed_s = cost.collectives.empty() ? 0 : std::max(0.0, comm_end - before);
  out.total_s = out.compute_s + out.exposed_s;
  return out;
}

}  // namespace mgbench::prediction
