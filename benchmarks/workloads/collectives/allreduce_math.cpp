// All-reduce arithmetic (see allreduce_math.hpp).
#include "collectives/allreduce_math.hpp"

#include <algorithm>
#include <set>

#include "collectives/collective_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/model/measurement.hpp"

namespace mgbench::bench::allreduce {

double algbw_gbps(std::uint64_t bytes, double seconds) {
  if (!(seconds > 0)) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double busbw_factor(int nranks) { return collective::busbw_factor(collective::Kind::allreduce, nranks); }

double busbw_gbps(std::uint64_t bytes, double seconds, int nranks) {
  return algbw_gbps(bytes, seconds) * busbw_factor(nranks);
}

std::string waiver(int nranks, bool inplace) {
  return collective::waiver(collective::Kind::allreduce, nranks, inplace);
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

std::vector<Params> expand_points(const AxisValues& values) {
  using collective::bytes_of;
  using collective::values_of;
  static const std::vector<ParamValue> kDtypes{"fp32"}, kImpls{"nccl"}, kInplace{false},
      kAlgos{"auto"}, kNoBytes;
  const auto& dtypes = values_of(values, "dtype", kDtypes);
  const auto& inplaces = values_of(values, "inplace", kInplace);
  const auto& sizes = values_of(values, "bytes", kNoBytes);
  const auto& impls = values_of(values, "impl", kImpls);
  const auto& algos = values_of(values, "algo", kAlgos);
  const bool has_algo_axis = values.count("algo") != 0 && !values.at("algo").empty();

  std::vector<Params> points;
  std::set<std::string> seen;
  for (const auto& dtype : dtypes) {
    const std::size_t elem = dtype_size(dtype.text());
    for (const auto& inplace : inplaces) {
      for (const auto& size : sizes) {
        const std::uint64_t count = bytes_of(size) / elem;
        if (count == 0) continue;  // smaller than one element
        for (const auto& impl : impls) {
          const bool own = impl.text() == "mgbench";
          const std::size_t n_algo = own && has_algo_axis ? algos.size() : 1;
          for (std::size_t a = 0; a < n_algo; ++a) {
            Params p{{"bytes", count * elem},
                     {"count", count},
                     {"dtype", dtype},
                     {"impl", impl},
                     {"inplace", inplace}};
            if (own && has_algo_axis) p.set("algo", algos[a]);
            if (seen.insert(p.dump()).second) points.push_back(std::move(p));
          }
        }
      }
    }
  }
  return with_measurement_axes(points, values);
}

Json plateau_summary(const std::vector<PointResult>& points) {
  // The own kernels' forced algorithm only (NCCL's points carry none).
  return collective::plateau_summary(
      "allreduce", {{"impl", ""}, {"dtype", ""}, {"inplace", ""}, {"algo", "auto"}}, points);
}

int input_value(int rank, std::uint64_t index, std::uint32_t seed) {
  return kernels::allreduce_input_value(rank, index, seed);
}

int expected_value(int nranks, std::uint64_t index, std::uint32_t seed) {
  return kernels::allreduce_expected_value(nranks, index, seed);
}

}  // namespace mgbench::bench::allreduce
