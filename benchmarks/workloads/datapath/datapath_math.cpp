// Host-side arithmetic of the data-path workloads (see datapath_math.hpp).
#include "datapath/datapath_math.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench::bench::datapath {

double gbps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0.0; }

std::uint64_t membw_words(std::uint64_t bytes) {
  if (bytes < 16) throw UsageError("membw needs bytes >= 16");
  return bytes / 4;
}

double membw_bytes_moved(const std::string& impl, std::uint64_t words) {
  const double array = static_cast<double>(words) * 4.0;
  if (impl == "copy" || impl == "memcpy") return 2.0 * array;
  if (impl == "triad") return 3.0 * array;
  throw UsageError("unknown membw impl '" + impl + "': expected copy, triad or memcpy");
}

namespace {

Json bandwidth_metrics(double bytes, int nranks, double seconds, const char* per_name) {
  const double per = gbps(bytes, seconds);
  return Json{{per_name, per},
              {"GBps_aggregate", per * static_cast<double>(nranks)},
              {"time_ms", seconds * 1e3}};
}

}  // namespace

Json membw_metrics(const Params& params, int nranks, double seconds) {
  const auto words = membw_words(static_cast<std::uint64_t>(params.integer("bytes")));
  return bandwidth_metrics(membw_bytes_moved(params.text("impl"), words), nranks, seconds,
                           "GBps_per_gpu");
}

double h2d_bytes_moved(const std::string& direction, std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (direction == "h2d" || direction == "d2h") return b;
  if (direction == "bidir") return 2.0 * b;
  throw UsageError("unknown h2d direction '" + direction + "': expected h2d, d2h or bidir");
}

Json h2d_metrics(const Params& params, int nranks, double seconds) {
  const double bytes = h2d_bytes_moved(params.text("direction"),
                                       static_cast<std::uint64_t>(params.integer("bytes")));
  return bandwidth_metrics(bytes, nranks, seconds, "GBps_per_gpu");
}

std::vector<Params> h2d_expand(const AxisValues& values) {
  std::vector<Params> points;
  for (auto& p : cartesian_product(values)) {
    const bool pageable = p.contains("memory") && p.text("memory") == "pageable";
    if (!pageable || !p.contains("timing") || p.text("timing") != "graph") {
      points.push_back(std::move(p));
    }
  }
  if (points.empty()) {
    throw UsageError("h2d: timing=graph cannot time memory=pageable (the driver's pageable copy "
                     "blocks the host, so a graph would not replay it): add --param "
                     "memory=pinned or choose timing=device or host");
  }
  return points;
}

std::string h2d_verdict(const H2dFacts& f) {
  std::vector<std::string> found;
  const double alone = f.gpus == 1 ? f.per_gpu_gbps : f.alone_gbps;
  if (f.memory == "pinned" && f.link_gbps > 0 && alone > 0 &&
      alone < kLinkEfficiencyMin * f.link_gbps) {
    found.push_back(fmt::format("link: {:.1f} GB/s alone is {:.0f} % of the PCIe link ({:.1f} GB/s)",
                                alone, 100.0 * alone / f.link_gbps, f.link_gbps));
  }
  if (f.gpus > 1 && f.alone_gbps > 0 && f.per_gpu_gbps < kSharedRatioMin * f.alone_gbps) {
    found.push_back(fmt::format(
        "contention: per GPU {:.0f} % of alone with {} GPUs at once (shared switch or root port)",
        100.0 * f.per_gpu_gbps / f.alone_gbps, f.gpus));
  }
  if (f.numa == "remote" && f.local_gbps > 0 && f.per_gpu_gbps < kNumaRatioMin * f.local_gbps) {
    found.push_back(fmt::format("NUMA: remote host memory reaches {:.0f} % of local",
                                100.0 * f.per_gpu_gbps / f.local_gbps));
  }
  if (found.empty()) return "none";
  std::string text = found[0];
  for (std::size_t i = 1; i < found.size(); ++i) text += "; " + found[i];
  return text;
}

namespace {

struct H2dRow {
  int gpus;
  std::vector<int> devices;
  std::string direction, memory, numa, measured;
  std::int64_t bytes;
  double per_gpu, link;
};

double ratio_or_null(double a, double b) { return b > 0 ? a / b : 0.0; }

Json nullable(double v) { return v > 0 ? Json(v) : Json(nullptr); }

}  // namespace

Json h2d_summary(const std::vector<PointResult>& points) {
  std::vector<H2dRow> rows;
  for (const auto& p : points) {
    if (p.status != Status::ok || !p.metrics.contains("GBps_per_gpu")) continue;
    const Params& q = p.params;
    if (!q.contains("direction") || !q.contains("memory") || !q.contains("bytes")) continue;
    // Results of versions without the numa axis ran on local memory.
    const std::string numa = q.contains("numa") ? q.text("numa") : "local";
    rows.push_back({p.gpus, p.devices, q.text("direction"), q.text("memory"), numa,
                    describe(p.measured), q.integer("bytes"),
                    p.metrics["GBps_per_gpu"].get<double>(), p.metrics.value("link_GBps", 0.0)});
  }
  // Median over matching rows of `gpus` GPUs (alone: 1) and placement `numa`.
  auto reference = [&rows](const H2dRow& r, int gpus, const std::string& numa) {
    std::vector<double> values;
    for (const auto& o : rows) {
      if (o.direction == r.direction && o.memory == r.memory && o.bytes == r.bytes &&
          o.numa == numa && o.measured == r.measured &&
          (gpus == 0 ? o.devices == r.devices : o.gpus == gpus)) {
        values.push_back(o.per_gpu);
      }
    }
    return values.empty() ? 0.0 : median_of(values);
  };
  Json out = Json::array();
  for (const auto& r : rows) {
    H2dFacts f{r.memory, r.numa, r.gpus, r.per_gpu, reference(r, 1, r.numa), r.link,
               r.numa == "remote" ? reference(r, 0, "local") : 0.0};
    const double alone = r.gpus == 1 ? r.per_gpu : f.alone_gbps;
    out.push_back(Json{{"gpus", r.gpus},
                       {"devices", r.devices},
                       {"direction", r.direction},
                       {"memory", r.memory},
                       {"numa", r.numa},
                       {"measured", r.measured},
                       {"bytes", r.bytes},
                       {"GBps_per_gpu", r.per_gpu},
                       {"alone_GBps", nullable(alone)},
                       {"shared_ratio", nullable(ratio_or_null(r.per_gpu, f.alone_gbps))},
                       {"link_GBps", nullable(r.link)},
                       {"link_efficiency", nullable(ratio_or_null(alone, r.link))},
                       {"numa_ratio", nullable(ratio_or_null(r.per_gpu, f.local_gbps))},
                       {"verdict", h2d_verdict(f)}});
  }
  return out;
}

std::vector<int> parse_node_list(const std::string& text) {
  std::vector<int> nodes;
  std::stringstream in(text);
  std::string part;
  auto number = [&text](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 6) {
      throw UsageError("malformed node list '" + text + "'");
    }
    return std::stoi(s);
  };
  while (std::getline(in, part, ',')) {
    while (!part.empty() && (part.back() == '\n' || part.back() == ' ')) part.pop_back();
    if (part.empty()) continue;
    const auto dash = part.find('-');
    const int lo = number(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) throw UsageError("malformed node list '" + text + "'");
    for (int n = lo; n <= hi; ++n) nodes.push_back(n);
  }
  return nodes;
}

std::vector<std::pair<int, int>> p2p_pairs(int nranks, const std::string& direction) {
  if (direction != "uni" && direction != "bidir") {
    throw UsageError("unknown p2p direction '" + direction + "': expected uni or bidir");
  }
  std::vector<std::pair<int, int>> pairs;
  for (int r = 0; r + 1 < nranks; r += 2) {
    pairs.emplace_back(r, r + 1);
    if (direction == "bidir") pairs.emplace_back(r + 1, r);
  }
  return pairs;
}

std::string p2p_graph_waiver(const std::vector<int>& devices, bool sm_engine, bool graph) {
  if (!graph || sm_engine) return {};
  for (int d : devices) {
    if (d != devices.front()) {
      return "timing=graph with engine=ce between two GPUs is not verified yet: a CUDA graph "
             "holding copies between devices has not been captured and checked on a multi-GPU "
             "host; use timing=device or host (or engine=sm)";
    }
  }
  return {};
}

Json p2p_metrics(const Params& params, int nranks, double seconds) {
  const std::string& direction = params.text("direction");
  const auto bytes = static_cast<double>(params.integer("bytes"));
  const double per_pair = (direction == "bidir" ? 2.0 : 1.0) * bytes;
  const auto pairs = static_cast<double>(nranks / 2);
  const double per = gbps(per_pair, seconds);
  return Json{{"GBps_per_pair", per}, {"GBps_aggregate", per * pairs}, {"time_ms", seconds * 1e3}};
}

std::vector<std::uint32_t> chase_chain(std::uint32_t slots, std::uint32_t stride_words,
                                       std::uint64_t seed) {
  if (slots == 0 || stride_words == 0) throw UsageError("chase_chain needs slots, stride >= 1");
  std::vector<std::uint32_t> order(slots);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin() + 1, order.end(), rng);  // the cycle starts at slot 0
  std::vector<std::uint32_t> chain(static_cast<std::size_t>(slots) * stride_words, 0u);
  for (std::uint32_t k = 0; k < slots; ++k) {
    const std::uint32_t next = order[(k + 1) % slots];
    chain[static_cast<std::size_t>(order[k]) * stride_words] = next * stride_words;
  }
  return chain;
}

std::uint32_t chase_end(const std::vector<std::uint32_t>& chain, std::uint32_t steps) {
  std::uint32_t j = 0;
  for (std::uint32_t s = 0; s < steps; ++s) j = chain.at(j);
  return j;
}

Json matrix_stats(const Json& matrix) {
  std::vector<double> values;
  for (std::size_t i = 0; i < matrix.size(); ++i) {
    for (std::size_t j = 0; j < matrix[i].size(); ++j) {
      if (i != j && matrix[i][j].is_number()) values.push_back(matrix[i][j].get<double>());
    }
  }
  if (values.empty()) return Json{{"min", nullptr}, {"median", nullptr}, {"max", nullptr}};
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return Json{{"min", *lo}, {"median", median_of(values)}, {"max", *hi}};
}

Json p2p_summary(const std::vector<PointResult>& points) {
  using Key = std::tuple<std::string, std::string, std::int64_t, std::string>;
  std::map<Key, const PointResult*> largest;
  for (const auto& p : points) {
    if (p.status != Status::ok || !p.extra.contains("ranks") || p.extra["ranks"].empty()) continue;
    const Json& d = p.extra["ranks"][0].value("details", Json::object());
    if (!d.contains("bw_matrix_GBps")) continue;
    if (!p.params.contains("engine") || !p.params.contains("direction") ||
        !p.params.contains("bytes")) {
      continue;
    }
    const Key key{p.params.text("engine"), p.params.text("direction"), p.params.integer("bytes"),
                  describe(p.measured)};
    auto& slot = largest[key];
    if (slot == nullptr || p.gpus > slot->gpus) slot = &p;
  }
  Json out = Json::array();
  for (const auto& [key, p] : largest) {
    const Json& d = p->extra["ranks"][0]["details"];
    const Json& bw = d["bw_matrix_GBps"];
    const Json lat = d.value("latency_matrix_us", Json::array());
    for (std::size_t i = 0; i < bw.size(); ++i) {
      for (std::size_t j = 0; j < bw[i].size(); ++j) {
        if (i == j) continue;
        Json latency = i < lat.size() && j < lat[i].size() ? lat[i][j] : Json(nullptr);
        out.push_back(Json{{"engine", std::get<0>(key)},
                           {"direction", std::get<1>(key)},
                           {"bytes", std::get<2>(key)},
                           {"measured", std::get<3>(key)},
                           {"src", p->devices.at(i)},
                           {"dst", p->devices.at(j)},
                           {"GBps", bw[i][j]},
                           {"latency_us", latency}});
      }
    }
  }
  return out;
}

}  // namespace mgbench::bench::datapath
