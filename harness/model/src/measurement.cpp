// Timing method, cache mode and rotation sizing (see measurement.hpp).
#include "mgbench/model/measurement.hpp"

#include <algorithm>

#include "mgbench/core/error.hpp"

namespace mgbench {

const char* to_string(TimingMethod method) {
  switch (method) {
    case TimingMethod::device: return "device";
    case TimingMethod::host: return "host";
    case TimingMethod::graph: return "graph";
  }
  return "?";
}

TimingMethod timing_from_string(const std::string& text) {
  for (TimingMethod m : {TimingMethod::device, TimingMethod::host, TimingMethod::graph}) {
    if (text == to_string(m)) return m;
  }
  throw UsageError("unknown timing method '" + text + "': expected device, host or graph");
}

const char* to_string(CacheMode mode) { return mode == CacheMode::cold ? "cold" : "hot"; }

CacheMode cache_from_string(const std::string& text) {
  if (text == "hot") return CacheMode::hot;
  if (text == "cold") return CacheMode::cold;
  throw UsageError("unknown cache mode '" + text + "': expected hot or cold");
}

std::string describe(const Measurement& m) {
  if (!m.timing) return "";
  std::string text = to_string(*m.timing);
  if (m.cache) text += std::string(", ") + to_string(*m.cache);
  return text;
}

TimingMethod timing_of(const Params& params, TimingMethod fallback) {
  if (!params.contains("timing")) return fallback;
  return params.choice<TimingMethod>("timing", {{"device", TimingMethod::device},
                                                {"host", TimingMethod::host},
                                                {"graph", TimingMethod::graph}});
}

CacheMode cache_of(const Params& params, CacheMode fallback) {
  if (!params.contains("cache")) return fallback;
  return params.choice<CacheMode>("cache", {{"hot", CacheMode::hot}, {"cold", CacheMode::cold}});
}

std::vector<std::string> timing_names() { return {"device", "host", "graph"}; }
std::vector<std::string> cache_names() { return {"hot", "cold"}; }

Axis timing_axis(const std::string& standard, std::vector<std::string> allowed) {
  return Axis::text("timing", {standard})
      .allowed(std::move(allowed))
      .describe("device: ops queued behind the start gate, GPU time; host: host-launched back "
                "to back, launch cost included (nccl-tests); graph: captured in a CUDA graph");
}

Axis cache_axis(const std::string& standard, std::vector<std::string> allowed) {
  return Axis::text("cache", {standard})
      .allowed(std::move(allowed))
      .describe("cold: operands rotate through buffer sets larger than twice the L2 cache; "
                "hot: the same buffers every op");
}

std::vector<Params> with_measurement_axes(const std::vector<Params>& points,
                                          const AxisValues& values) {
  std::vector<Params> out = points;
  for (const char* axis : {"timing", "cache"}) {
    const auto it = values.find(axis);
    if (it == values.end() || it->second.empty()) continue;
    std::vector<Params> next;
    for (const Params& p : out) {
      for (const ParamValue& v : it->second) {
        Params q = p;
        q.set(axis, v);
        next.push_back(std::move(q));
      }
    }
    out = std::move(next);
  }
  return out;
}

Rotation plan_rotation(CacheMode mode, std::size_t set_bytes, std::size_t l2_bytes,
                       std::size_t budget_bytes, std::size_t max_sets) {
  Rotation r;
  r.set_bytes = std::max<std::size_t>(set_bytes, 1);
  if (mode == CacheMode::cold && l2_bytes > 0) {
    const std::size_t target = 2 * l2_bytes;
    const std::size_t wanted = target / r.set_bytes + 1;  // total strictly above the target
    const std::size_t fit = std::max<std::size_t>(budget_bytes / r.set_bytes, 1);
    r.sets = std::min({wanted, std::max<std::size_t>(max_sets, 1), fit});
    if (r.sets < wanted) r.limited_by = r.sets == fit ? "memory" : "set cap";
  }
  r.total_bytes = r.sets * r.set_bytes;
  r.exceeds_l2 = l2_bytes > 0 && r.total_bytes > 2 * l2_bytes;
  return r;
}

Json rotation_json(const Rotation& rotation) {
  Json j{{"sets", rotation.sets},
         {"set_bytes", rotation.set_bytes},
         {"total_bytes", rotation.total_bytes},
         {"exceeds_2x_l2", rotation.exceeds_l2}};
  if (!rotation.limited_by.empty()) j["limited_by"] = rotation.limited_by;
  return j;
}

}  // namespace mgbench
