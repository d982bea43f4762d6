// All-reduce arithmetic (see allreduce_math.hpp).
#include "mgbench/bench/allreduce_math.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "mgbench/core/error.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench::bench::allreduce {

double algbw_gbps(std::uint64_t bytes, double seconds) {
  if (!(seconds > 0)) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double busbw_factor(int nranks) {
  if (nranks <= 1) return 0.0;
  return 2.0 * static_cast<double>(nranks - 1) / static_cast<double>(nranks);
}

double busbw_gbps(std::uint64_t bytes, double seconds, int nranks) {
  return algbw_gbps(bytes, seconds) * busbw_factor(nranks);
}

std::string waiver(int nranks, bool inplace) {
  if (nranks == 1 && inplace) {
    return "an in-place all-reduce on one GPU moves nothing (NCCL returns at once): no time or "
           "bandwidth to measure";
  }
  return {};
}

Json metrics(std::uint64_t bytes, int nranks, double seconds) {
  Json m{{"time_us", seconds * 1e6}, {"algbw_GBps", algbw_gbps(bytes, seconds)}};
  // One rank has no bus: busbw is undefined there (absent, shown as a dash), not zero.
  if (nranks > 1) m["busbw_GBps"] = busbw_gbps(bytes, seconds, nranks);
  return m;
}

std::vector<std::uint64_t> size_list(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                     std::uint64_t factor) {
  if (min_bytes == 0 || factor < 2) {
    throw UsageError("size list: the first size must be positive and the factor at least 2");
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = min_bytes; s <= max_bytes; s *= factor) {
    sizes.push_back(s);
    if (s > max_bytes / factor) break;  // the next step would overflow or pass the end
  }
  return sizes;
}

std::vector<std::string> size_strings(const std::vector<std::uint64_t>& sizes) {
  std::vector<std::string> out;
  out.reserve(sizes.size());
  for (std::uint64_t s : sizes) out.push_back(std::to_string(s));
  return out;
}

std::vector<std::uint64_t> default_sizes(Profile profile) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  if (profile != Profile::quick) return size_list(8, 1024 * kMiB, 2);
  std::vector<std::uint64_t> sizes = size_list(8, 256 * kMiB, 8);
  for (std::uint64_t extra : {64 * kMiB, 128 * kMiB, 256 * kMiB}) {
    if (std::find(sizes.begin(), sizes.end(), extra) == sizes.end()) sizes.push_back(extra);
  }
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "int32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  throw UsageError("unknown all-reduce dtype '" + dtype + "' (expected fp32, bf16, fp16 or int32)");
}

std::uint64_t element_count(std::uint64_t bytes, const std::string& dtype) {
  return bytes / dtype_size(dtype);
}

namespace {

std::uint64_t bytes_of(const Json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    if (v < 0) throw UsageError("all-reduce bytes must not be negative");
    return static_cast<std::uint64_t>(v);
  }
  if (value.is_string()) return parse_size(value.get<std::string>(), "all-reduce bytes");
  throw UsageError("all-reduce bytes must be a size");
}

const std::vector<Json>& values_of(const AxisValues& values, const std::string& name,
                                   const std::vector<Json>& fallback) {
  const auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback : it->second;
}

}  // namespace

std::vector<Params> expand_points(const AxisValues& values) {
  static const std::vector<Json> kDtypes{"fp32"}, kImpls{"nccl"}, kInplace{false}, kAlgos{"auto"};
  static const std::vector<Json> kNoBytes;
  const std::vector<Json> dtypes = values_of(values, "dtype", kDtypes);
  const std::vector<Json> inplaces = values_of(values, "inplace", kInplace);
  const std::vector<Json> sizes = values_of(values, "bytes", kNoBytes);
  const std::vector<Json> impls = values_of(values, "impl", kImpls);
  const std::vector<Json> algos = values_of(values, "algo", kAlgos);
  const bool has_algo_axis = values.count("algo") != 0 && !values.at("algo").empty();

  std::vector<Params> points;
  std::set<std::string> seen;
  for (const auto& dtype : dtypes) {
    const std::string d = dtype.get<std::string>();
    const std::size_t elem = dtype_size(d);
    for (const auto& inplace : inplaces) {
      for (const auto& size : sizes) {
        const std::uint64_t count = bytes_of(size) / elem;
        if (count == 0) continue;  // smaller than one element
        for (const auto& impl : impls) {
          const bool own = impl == "mgbench";
          const std::size_t n_algo = own && has_algo_axis ? algos.size() : 1;
          for (std::size_t a = 0; a < n_algo; ++a) {
            Params p = Json::object();
            p["bytes"] = count * elem;
            p["count"] = count;
            p["dtype"] = d;
            p["impl"] = impl;
            p["inplace"] = inplace;
            if (own && has_algo_axis) p["algo"] = algos[a];
            if (seen.insert(p.dump()).second) points.push_back(std::move(p));
          }
        }
      }
    }
  }
  return with_measurement_axes(points, values);
}

Json plateau_summary(const std::vector<PointResult>& points) {
  using Key = std::tuple<int, std::string, std::string, bool, std::string, std::string>;
  struct Acc {
    std::vector<double> busbw;
    std::set<std::uint64_t> sizes;
  };
  std::map<Key, Acc> groups;
  for (const auto& p : points) {
    if (p.workload != "allreduce" || p.status != Status::ok) continue;
    if (!p.metrics.is_object() || !p.metrics.contains("busbw_GBps")) continue;
    if (!p.params.contains("bytes") || !p.params.contains("impl")) continue;
    const std::uint64_t bytes = bytes_of(p.params["bytes"]);
    if (bytes < kPlateauMinBytes) continue;
    const std::string impl = p.params["impl"].get<std::string>();
    const std::string dtype = p.params.value("dtype", std::string("fp32"));
    const bool inplace = p.params.value("inplace", false);
    std::string algo = p.params.value("algo", std::string("auto"));
    if (impl != "mgbench") algo = "auto";
    // Figures timed or cached differently are never pooled.
    const std::string method = p.timing.empty() ? "" : p.timing + ", " + p.cache;
    Acc& acc = groups[Key{p.gpus, impl, dtype, inplace, algo, method}];
    acc.busbw.push_back(p.metrics["busbw_GBps"].get<double>());
    acc.sizes.insert(bytes);
  }
  Json rows = Json::array();
  for (const auto& [key, acc] : groups) {
    const auto& [gpus, impl, dtype, inplace, algo, method] = key;
    Json row{{"gpus", gpus},
             {"impl", impl},
             {"dtype", dtype},
             {"inplace", inplace},
             {"plateau_busbw_GBps", median_of(acc.busbw)},
             {"sizes", Json(std::vector<std::uint64_t>(acc.sizes.begin(), acc.sizes.end()))}};
    if (algo != "auto") row["algo"] = algo;
    if (!method.empty()) row["measured"] = method;
    rows.push_back(std::move(row));
  }
  return rows;
}

int input_value(int rank, std::uint64_t index, std::uint32_t seed) {
  return kernels::allreduce_input_value(rank, index, seed);
}

int expected_value(int nranks, std::uint64_t index, std::uint32_t seed) {
  return kernels::allreduce_expected_value(nranks, index, seed);
}

}  // namespace mgbench::bench::allreduce
