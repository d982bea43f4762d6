// The GEMM workload's host-side formulas: point expansion, metrics, the verification
// tolerance and the sampled elements. No CUDA: the unit tests use them directly.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gemm/gemm_math.hpp"

#include "mgbench/model/measurement.hpp"
#include "mgbench/core/checked_math.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench {

namespace {

// Largest M, N or K of a shape point: the batch axis's bound for M, far above any layer's N, K.
constexpr std::int64_t kMaxShapeDim = std::int64_t{1} << 24;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double unit_roundoff_of_output(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp8") return std::ldexp(1.0, -8);  // fp8 writes bf16
  if (dtype == "fp16") return std::ldexp(1.0, -11);
  return std::ldexp(1.0, -24);
}

}  // namespace

// Verification tolerance, per output element c with FP64 reference ref and
// S = sum_k |a_ik b_jk|:   |c - ref| <= value_rel |ref| + sum_rel S.
// The reference is computed from the values actually stored in A and B (decoded exactly),
// so converting the random inputs to bf16/fp16/fp8 is not an error source. What remains:
//  - output rounding to nearest: |fl(c) - c| <= u_out |c|, u_out = 2^-8 for bf16 (and for
//    fp8, whose output is bf16), 2^-11 for fp16, 2^-24 for fp32/tf32. value_rel = u_out
//    with 1 % slack (c and ref differ by the accumulation error, a second-order term).
//  - fp32 accumulation: worst case (K-1) u_32 S, but with random-sign inputs the rounding
//    errors are independent and the error is of the order u_32 S (the partial sums grow like
//    sqrt(k), S like k). Split-K, tree orders and cuBLAS' reduction in the output type
//    stay within a few u_32 S (the latter: u_out times a partial sum, << S).
//      fp32: sum_rel = 1e-5 (~170 u_32): catches even a single dropped product at K = 8192
//            (1/K = 1.2e-4 of S on average).
//      bf16/fp16: sum_rel = 2^-11 (~4.9e-4): tensor cores add the products of one MMA after
//            aligning them to the largest exponent (low bits truncated), a few u_32 each.
//      fp8: sum_rel = 2^-9 (~2e-3): fp8 MMAs on some GPUs keep only ~14 accumulator bits
//            between promotions to fp32.
//  - tf32: the tensor core rounds (the own kernel: cvt.rna) or truncates each fp32 input to
//    10 explicit mantissa bits, relative error < 2^-10 per input and < 2^-9 per product,
//    hence < 2^-9 S in the worst case; sum_rel = 2^-9 + 1e-5 (~2e-3).
// Wrong fragment layouts, wrong rows or missing tiles give errors of the order of S.
GemmTolerance gemm_tolerance(const std::string& dtype) {
  GemmTolerance t;
  if (dtype == "fp32") {
    t.sum_rel = 1e-5;
  } else if (dtype == "tf32") {
    t.sum_rel = std::ldexp(1.0, -9) + 1e-5;
  } else if (dtype == "bf16" || dtype == "fp16") {
    t.sum_rel = std::ldexp(1.0, -11);
  } else if (dtype == "fp8") {
    t.sum_rel = std::ldexp(1.0, -9);
  } else {
    throw UsageError("unknown gemm dtype '" + dtype + "': expected fp32, tf32, fp16, bf16 or fp8");
  }
  t.value_rel = unit_roundoff_of_output(dtype) * 1.01;
  return t;
}

double gemm_allowed_error(const GemmTolerance& tolerance, double ref, double abs_sum) {
  return tolerance.value_rel * std::fabs(ref) + tolerance.sum_rel * abs_sum;
}

std::vector<std::int64_t> gemm_sample_indices(std::int64_t extent, int count,
                                              std::uint64_t seed) {
  std::vector<std::int64_t> out;
  if (extent <= 0 || count <= 0) return out;
  if (extent <= count) {
    for (std::int64_t i = 0; i < extent; ++i) out.push_back(i);
    return out;
  }
  out.push_back(0);
  if (count > 1) out.push_back(extent - 1);
  std::uint64_t state = seed;
  while (static_cast<int>(out.size()) < count) {
    const auto candidate =
        static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(extent));
    if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
  }
  std::sort(out.begin(), out.end());
  return out;
}

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

GemmBufferBytes gemm_buffer_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                  std::size_t in_size, std::size_t out_size) {
  if (m < 1 || n < 1 || k < 1) throw UsageError("gemm needs M, N and K >= 1");
  const auto um = static_cast<std::uint64_t>(m), un = static_cast<std::uint64_t>(n),
             uk = static_cast<std::uint64_t>(k);
  GemmBufferBytes bytes;
  bytes.a = checked_product({um, uk, in_size}, "gemm A bytes");
  bytes.b = checked_product({un, uk, in_size}, "gemm B bytes");
  bytes.c = checked_product({um, un, out_size}, "gemm C bytes");
  return bytes;
}

GemmDims parse_gemm_shape(const std::string& text, std::int64_t max_dim) {
  const auto bad = [&](const std::string& why) {
    return UsageError("gemm shape '" + text + "': " + why +
                      " (expected MxNxK, e.g. 8192x6144x4096)");
  };
  std::int64_t dims[3] = {0, 0, 0};
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find('x', at) : text.size();
    if (end == std::string::npos) throw bad("three dimensions needed");
    const std::string part = text.substr(at, end - at);
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      throw bad("'" + part + "' is not a positive integer");
    }
    dims[i] = std::stoll(part);
    if (dims[i] < 1 || dims[i] > max_dim) {
      throw bad("each dimension must be 1.." + std::to_string(max_dim));
    }
    at = end + 1;
  }
  return {dims[0], dims[1], dims[2]};
}

GemmDims gemm_dims(const Params& params) {
  if (!params.contains("m") && params.contains("batch")) {
    const std::int64_t hidden = params.integer("hidden");
    return {params.integer("batch"), hidden, hidden};
  }
  return {params.integer("m"), params.integer("n"), params.integer("k")};
}

Json gemm_metrics(const Params& params, int nranks, double seconds) {
  const GemmDims d = gemm_dims(params);
  const double flops = gemm_flops(d.m, d.n, d.k);
  const double per_gpu = seconds > 0 ? flops / seconds / 1e12 : 0.0;
  return Json{{"tflops_per_gpu", per_gpu},
              {"tflops_aggregate", per_gpu * nranks},
              {"time_ms", seconds * 1e3}};
}

std::vector<Params> expand_gemm_points(const AxisValues& values) {
  auto list = [&](const std::string& name) {
    const auto it = values.find(name);
    return it == values.end() ? std::vector<ParamValue>{} : it->second;
  };
  std::vector<Params> shapes;
  for (const auto& size : list("size")) {
    shapes.push_back(Params{{"shape", "square"}, {"m", size}, {"n", size}, {"k", size}});
  }
  for (const auto& text : list("shape")) {
    const GemmDims d = parse_gemm_shape(text.text(), kMaxShapeDim);
    shapes.push_back(Params{{"shape", std::to_string(d.m) + "x" + std::to_string(d.n) + "x" +
                                          std::to_string(d.k)},
                            {"m", d.m},
                            {"n", d.n},
                            {"k", d.k}});
  }
  for (const auto& batch : list("batch")) {
    for (const auto& hidden : list("hidden")) {
      shapes.push_back(Params{{"shape", "batch"}, {"batch", batch}, {"hidden", hidden}});
    }
  }
  std::vector<Params> points;
  for (const auto& shape : shapes) {
    for (const auto& dtype : list("dtype")) {
      for (const auto& impl : list("impl")) {
        Params p = shape;
        p.set("dtype", dtype);
        p.set("impl", impl);
        points.push_back(std::move(p));
      }
    }
  }
  return with_measurement_axes(points, values);
}

namespace {

std::string gemm_shape_label(const GemmDims& d) {
  if (d.m == d.n && d.n == d.k) return "M=N=K=" + std::to_string(d.m);
  return std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k);
}

std::string own_kernel_label(const PointResult& p) {
  const Json impl = p.extra.is_object() ? p.extra.value("implementation", Json()) : Json();
  if (!impl.is_object() || !impl.contains("name")) return "";
  return impl.value("name", std::string()) + " v" + std::to_string(impl.value("version", 0));
}

}  // namespace

Json own_vs_cublas_summary(const std::vector<PointResult>& points) {
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::string, std::string>;
  std::map<Key, std::map<std::string, const PointResult*>> pairs;
  for (const auto& p : points) {
    if (p.workload != "gemm" || p.status != Status::ok || !p.metrics.is_object() ||
        !p.metrics.contains("tflops_per_gpu") || !p.params.contains("impl") ||
        !p.params.contains("dtype")) {
      continue;
    }
    const std::string measured = describe(p.measured);
    const GemmDims d = gemm_dims(p.params);
    const Key key{p.gpus, d.m, d.n, d.k, p.params.text("dtype"), measured};
    pairs[key][p.params.text("impl")] = &p;
  }
  Json rows = Json::array();
  for (const auto& [key, by_impl] : pairs) {
    const auto cublas = by_impl.find("cublas"), own = by_impl.find("mgbench");
    if (cublas == by_impl.end() || own == by_impl.end()) continue;
    const double ref = cublas->second->metrics["tflops_per_gpu"].get<double>();
    const double mine = own->second->metrics["tflops_per_gpu"].get<double>();
    rows.push_back({{"gpus", std::get<0>(key)},
                    {"shape", gemm_shape_label(gemm_dims(own->second->params))},
                    {"dtype", std::get<4>(key)},
                    {"measured", std::get<5>(key)},
                    {"cublas_tflops", ref},
                    {"own_tflops", mine},
                    {"own_vs_cublas", ref > 0 ? Json(mine / ref) : Json()},
                    {"kernel", own_kernel_label(*own->second)}});
  }
  return rows;
}

}  // namespace mgbench::bench
