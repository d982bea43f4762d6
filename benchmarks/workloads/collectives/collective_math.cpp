// The NCCL collectives' arithmetic (see collective_math.hpp).
#include "collectives/collective_math.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "collectives/allreduce_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench::bench::collective {

namespace {

// "all-gather": the collective as the waiver's sentence names it.
const char* label_of(Kind kind) {
  switch (kind) {
    case Kind::allreduce: return "all-reduce";
    case Kind::allgather: return "all-gather";
    case Kind::reducescatter: return "reduce-scatter";
    case Kind::alltoall: return "all-to-all";
    case Kind::broadcast: return "broadcast";
    case Kind::reduce: return "reduce";
    case Kind::sendrecv: return "send/recv";
  }
  return "collective";
}

}  // namespace

const std::vector<ParamValue>& values_of(const AxisValues& values, const std::string& name,
                                         const std::vector<ParamValue>& fallback) {
  const auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback : it->second;
}

std::uint64_t bytes_of(const ParamValue& value) {
  if (value.is_integer()) {
    if (value.integer() < 0) throw UsageError("bytes must not be negative");
    return static_cast<std::uint64_t>(value.integer());
  }
  if (value.is_text()) return parse_size(value.text(), "bytes");
  throw UsageError("bytes must be a size");
}

double busbw_factor(Kind kind, int nranks) {
  if (nranks <= 1) return 0.0;
  const double n = static_cast<double>(nranks);
  switch (kind) {
    case Kind::allreduce: return 2.0 * (n - 1.0) / n;
    case Kind::allgather:
    case Kind::reducescatter:
    case Kind::alltoall: return (n - 1.0) / n;
    case Kind::broadcast:
    case Kind::reduce:
    case Kind::sendrecv: return 1.0;
  }
  return 0.0;
}

bool splits_over_ranks(Kind kind) {
  return kind == Kind::allgather || kind == Kind::reducescatter || kind == Kind::alltoall;
}

bool reduces(Kind kind) {
  return kind == Kind::allreduce || kind == Kind::reducescatter || kind == Kind::reduce;
}

bool has_inplace(Kind kind) { return kind != Kind::alltoall && kind != Kind::sendrecv; }

bool has_root(Kind kind) { return kind == Kind::broadcast || kind == Kind::reduce; }

std::uint64_t nccl_count(Kind kind, std::uint64_t bytes, std::size_t element_bytes, int nranks) {
  if (element_bytes == 0 || nranks < 1) return 0;
  const std::uint64_t elements = bytes / element_bytes;
  return splits_over_ranks(kind) ? elements / static_cast<std::uint64_t>(nranks) : elements;
}

std::uint64_t moved_bytes(Kind kind, std::uint64_t count, std::size_t element_bytes, int nranks) {
  const std::uint64_t per_rank = count * element_bytes;
  return splits_over_ranks(kind) ? per_rank * static_cast<std::uint64_t>(std::max(nranks, 1))
                                 : per_rank;
}

std::string waiver(Kind kind, int nranks, bool inplace) {
  if (nranks == 1 && inplace && has_inplace(kind)) {
    return fmt::format("an in-place {} on one GPU moves nothing (NCCL returns at once): no time "
                       "or bandwidth to measure",
                       label_of(kind));
  }
  return {};
}

Json metrics(Kind kind, std::uint64_t bytes, const std::string& dtype, int nranks,
             double seconds) {
  const std::size_t element = allreduce::dtype_size(dtype);
  const std::uint64_t count = nccl_count(kind, bytes, element, nranks);
  const std::uint64_t moved = moved_bytes(kind, count, element, nranks);
  const double algbw = allreduce::algbw_gbps(moved, seconds);
  Json m{{"time_us", seconds * 1e6}, {"algbw_GBps", algbw}, {"count", count}};
  // One rank has no bus: busbw is undefined there (absent, shown as a dash), not zero.
  if (nranks > 1) m["busbw_GBps"] = algbw * busbw_factor(kind, nranks);
  if (moved != bytes) m["size_bytes"] = moved;
  return m;
}

RankLayout rank_layout(Kind kind, int rank, int nranks, std::uint64_t count, int root) {
  using kernels::ExpectedPattern;
  using kernels::ValueRange;
  const auto n = static_cast<std::uint64_t>(nranks);
  const auto r = static_cast<std::uint64_t>(rank);
  RankLayout l;
  l.count = count;
  l.send_count = l.recv_count = count;
  l.input = {reduces(kind) ? ValueRange::narrow : ValueRange::wide, rank, 0};
  switch (kind) {
    case Kind::allreduce: l.expected = ExpectedPattern::sum_of(nranks, 0); break;
    case Kind::allgather:
      l.recv_count = n * count;
      l.send_offset = r * count;  // in place: the rank's slot of the output is its input
      l.expected = ExpectedPattern::copy_of(nranks, count, 0, 0);
      break;
    case Kind::reducescatter:
      l.send_count = n * count;
      l.recv_offset = r * count;  // in place: the rank's slot of the input is its output
      l.expected = ExpectedPattern::sum_of(nranks, r * count);
      break;
    case Kind::alltoall:
      l.send_count = l.recv_count = n * count;
      l.expected = ExpectedPattern::copy_of(nranks, count, 0, r * count);
      break;
    case Kind::broadcast:
      l.input_used = rank == root;
      l.expected = ExpectedPattern::copy_of(nranks, std::max<std::uint64_t>(count, 1), root, 0);
      break;
    case Kind::reduce:
      l.checked = rank == root;
      l.expected = ExpectedPattern::sum_of(nranks, 0);
      break;
    case Kind::sendrecv:
      l.expected = ExpectedPattern::copy_of(nranks, std::max<std::uint64_t>(count, 1),
                                            (rank + nranks - 1) % nranks, 0);
      break;
  }
  return l;
}

std::vector<int> roots_of(const ParamValue& value, int gpus) {
  if (value.is_text() && value.text() == kAllRoots) {
    std::vector<int> all;
    for (int r = 0; r < gpus; ++r) all.push_back(r);
    return all;
  }
  std::int64_t root = -1;
  if (value.is_integer()) {
    root = value.integer();
  } else if (value.is_text()) {
    const std::string& text = value.text();
    const bool digits = !text.empty() && text.size() <= 9 &&
                        std::all_of(text.begin(), text.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
    if (digits) root = std::stoll(text);
  }
  if (root < 0) {
    throw UsageError(
        fmt::format("root '{}' is not a rank (0, 1, ...) or '{}'", value.str(), kAllRoots));
  }
  if (root >= gpus) return {};
  return {static_cast<int>(root)};
}

std::vector<Params> expand_points(Kind kind, const AxisValues& values, int gpus) {
  static const std::vector<ParamValue> kDtypes{"fp32"}, kInplace{false}, kDefault{"default"};
  static const std::vector<ParamValue> kRoot{0}, kNone;
  const auto& inplaces = has_inplace(kind) ? values_of(values, "inplace", kInplace) : kInplace;
  std::vector<Params> points;
  std::set<std::string> seen;
  for (const auto& algo : values_of(values, "algo", kDefault)) {
    for (const auto& proto : values_of(values, "proto", kDefault)) {
      for (const auto& dtype : values_of(values, "dtype", kDtypes)) {
        const std::size_t element = allreduce::dtype_size(dtype.text());
        for (const auto& inplace : inplaces) {
          for (const auto& size : values_of(values, "bytes", kNone)) {
            const std::uint64_t bytes = bytes_of(size) / element * element;
            if (nccl_count(kind, bytes, element, gpus) == 0) continue;  // < 1 element per rank
            std::vector<int> roots{-1};
            if (has_root(kind)) {
              roots.clear();
              for (const auto& r : values_of(values, "root", kRoot)) {
                for (int root : roots_of(r, gpus)) roots.push_back(root);
              }
            }
            for (int root : roots) {
              Params p{{"bytes", bytes}, {"dtype", dtype}};
              if (has_inplace(kind)) p.set("inplace", inplace);
              if (root >= 0) p.set("root", root);
              if (values.count("algo") != 0) p.set("algo", algo);
              if (values.count("proto") != 0) p.set("proto", proto);
              if (seen.insert(p.dump()).second) points.push_back(std::move(p));
            }
          }
        }
      }
    }
  }
  return with_measurement_axes(points, values);
}

std::vector<std::pair<std::string, std::string>> nccl_env(const Params& params) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [param, variable] :
       {std::pair<const char*, const char*>{"algo", "NCCL_ALGO"}, {"proto", "NCCL_PROTO"}}) {
    // Absent without the workload's axis: NCCL's own choice, as "default".
    if (params.contains(param) && params.text(param) != "default") {
      env.emplace_back(variable, params.text(param));
    }
  }
  return env;
}

Json plateau_summary(const std::string& workload, const std::vector<SummaryKey>& keys,
                     const std::vector<PointResult>& points) {
  // (gpus, the keys' values (null: left out), method) -> busbw and sizes.
  using Key = std::tuple<int, std::vector<Json>, std::string>;
  struct Acc {
    std::vector<double> busbw;
    std::set<std::uint64_t> sizes;
    Json row = Json::object();
  };
  std::map<Key, Acc> groups;
  for (const auto& p : points) {
    if (p.workload != workload || p.status != Status::ok) continue;
    if (!p.metrics.is_object() || !p.metrics.contains("busbw_GBps")) continue;
    if (!p.params.contains("bytes")) continue;
    const std::uint64_t bytes = bytes_of(p.params.at("bytes"));
    if (bytes < kPlateauMinBytes) continue;
    Json row = Json::object();
    std::vector<Json> values;
    for (const auto& key : keys) {
      const ParamValue* value = p.params.find(key.param);
      const bool omit = value == nullptr || (!key.omit_when.empty() && value->is_text() &&
                                             value->text() == key.omit_when);
      values.push_back(omit ? Json() : value->to_json());
      if (!omit) row[key.param] = value->to_json();
    }
    // Figures timed or cached differently are never pooled.
    const std::string method = describe(p.measured);
    Acc& acc = groups[Key{p.gpus, values, method}];
    acc.busbw.push_back(p.metrics["busbw_GBps"].get<double>());
    acc.sizes.insert(bytes);
    acc.row = std::move(row);
  }
  Json rows = Json::array();
  for (auto& [key, acc] : groups) {
    Json row{{"gpus", std::get<0>(key)}};
    row.update(acc.row);
    row["plateau_busbw_GBps"] = median_of(acc.busbw);
    row["sizes"] = Json(std::vector<std::uint64_t>(acc.sizes.begin(), acc.sizes.end()));
    if (!std::get<2>(key).empty()) row["measured"] = std::get<2>(key);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace mgbench::bench::collective
