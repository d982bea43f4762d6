// GEMM workload host math (no GPU): point expansion, metrics, verification tolerance and
// sampling, and the host side of the fill kernels (bit decoding, fill_value replica).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "gemm/gemm_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/model/workload.hpp"

using mgbench::AxisValues;
using mgbench::Json;
using mgbench::Params;
using mgbench::ParamValue;
using mgbench::bench::expand_gemm_points;
using mgbench::bench::gemm_allowed_error;
using mgbench::bench::gemm_metrics;
using mgbench::bench::gemm_sample_indices;
using mgbench::bench::gemm_tolerance;
using mgbench::kernels::DType;

namespace {

std::vector<ParamValue> ints(std::vector<std::int64_t> values) {
  return std::vector<ParamValue>(values.begin(), values.end());
}

std::vector<ParamValue> texts(std::vector<std::string> values) {
  return std::vector<ParamValue>(values.begin(), values.end());
}

AxisValues axis_values(std::vector<std::int64_t> sizes, std::vector<std::int64_t> batches,
                       std::vector<std::int64_t> hiddens, std::vector<std::string> dtypes,
                       std::vector<std::string> impls) {
  return AxisValues{{"size", ints(sizes)},     {"batch", ints(batches)},
                    {"hidden", ints(hiddens)}, {"dtype", texts(dtypes)},
                    {"impl", texts(impls)}};
}


// Round-to-nearest-even of a double to bf16 (8 significant bits), via float.
double round_to_bf16(double x) {
  const float f = static_cast<float>(x);
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

}  // namespace

TEST_CASE("gemm expand: square sizes give M = N = K points for every dtype and impl") {
  const auto points = expand_gemm_points(
      axis_values({4096, 8192}, {}, {8192}, {"bf16", "fp32"}, {"cublas", "mgbench"}));
  REQUIRE(points.size() == 8);
  for (const auto& p : points) {
    CHECK(p.text("shape") == "square");
    CHECK(p.at("m") == p.at("n"));
    CHECK(p.at("n") == p.at("k"));
  }
  CHECK(points.front().integer("m") == 4096);
  CHECK(points.back().integer("m") == 8192);
}

TEST_CASE("gemm expand: batch points keep batch and hidden, M = batch and N = K = hidden") {
  const auto points = expand_gemm_points(axis_values({}, {1, 64}, {4096}, {"bf16"}, {"cublas"}));
  REQUIRE(points.size() == 2);
  // "batch" stays a parameter: with --scaling strong the planner's per-GPU batches of one global
  // batch then form a series (an "m" would differ per GPU count and form none).
  CHECK(points[0] == Params{{"shape", "batch"}, {"batch", 1}, {"hidden", 4096},
                            {"dtype", "bf16"}, {"impl", "cublas"}});
  CHECK(points[1].integer("batch") == 64);
  CHECK(points[1].text("shape") == "batch");
  const mgbench::bench::GemmDims d = mgbench::bench::gemm_dims(points[1]);
  CHECK(d.m == 64);
  CHECK(d.n == 4096);
  CHECK(d.k == 4096);
}

TEST_CASE("gemm dims: square points and points that name M, N and K read as they are") {
  const auto d = mgbench::bench::gemm_dims(Params{{"m", 2048}, {"n", 8192}, {"k", 4096}});
  CHECK(d.m == 2048);
  CHECK(d.n == 8192);
  CHECK(d.k == 4096);
  CHECK_THROWS_AS(mgbench::bench::gemm_dims(Params{{"batch", 8}}), mgbench::UsageError);
}

TEST_CASE("gemm expand: batch points cross every hidden size and follow the square points") {
  const auto points =
      expand_gemm_points(axis_values({512}, {16, 32}, {1024, 2048}, {"fp16"}, {"mgbench"}));
  REQUIRE(points.size() == 5);
  CHECK(points[0].text("shape") == "square");
  std::set<std::pair<std::int64_t, std::int64_t>> batch_shapes;
  for (std::size_t i = 1; i < points.size(); ++i) {
    CHECK(points[i].text("shape") == "batch");
    CHECK_FALSE(points[i].contains("m"));
    batch_shapes.insert({points[i].integer("batch"), points[i].integer("hidden")});
  }
  CHECK(batch_shapes.size() == 4);
}

TEST_CASE("gemm expand: every dtype is planned for both impls, fp8 included") {
  const auto points =
      expand_gemm_points(axis_values({256}, {}, {8192}, {"fp8", "bf16"}, {"cublas", "mgbench"}));
  REQUIRE(points.size() == 4);
  int own_fp8 = 0;
  for (const auto& p : points) {
    own_fp8 += p.text("impl") == "mgbench" && p.text("dtype") == "fp8";
  }
  CHECK(own_fp8 == 1);
}

TEST_CASE("gemm metrics: TFLOP/s = 2 M N K / t and aggregate = GPUs x per GPU") {
  const Params p{{"m", 1000}, {"n", 2000}, {"k", 500}, {"dtype", "bf16"}, {"impl", "cublas"}};
  const Json metrics = gemm_metrics(p, 4, 1e-3);  // 2e9 flop in 1 ms: 2 TFLOP/s
  CHECK(metrics.at("tflops_per_gpu").get<double>() == Approx(2.0));
  CHECK(metrics.at("tflops_aggregate").get<double>() == Approx(8.0));
  CHECK(metrics.at("time_ms").get<double>() == Approx(1.0));
}

TEST_CASE("gemm tolerance: wider types get tighter bounds") {
  const auto fp32 = gemm_tolerance("fp32");
  const auto tf32 = gemm_tolerance("tf32");
  const auto fp16 = gemm_tolerance("fp16");
  const auto bf16 = gemm_tolerance("bf16");
  const auto fp8 = gemm_tolerance("fp8");
  CHECK(fp32.sum_rel < fp16.sum_rel);
  CHECK(fp16.sum_rel < tf32.sum_rel);
  CHECK(tf32.sum_rel == Approx(std::ldexp(1.0, -9) + 1e-5));
  CHECK(fp16.value_rel < bf16.value_rel);
  CHECK(bf16.value_rel == Approx(std::ldexp(1.0, -8)).epsilon(0.02));
  CHECK(fp8.value_rel == bf16.value_rel);  // fp8 writes bf16
}

TEST_CASE("gemm tolerance: an unknown dtype is a usage error") {
  CHECK_THROWS_AS(gemm_tolerance("int8"), mgbench::UsageError);
}

TEST_CASE("gemm tolerance: a correctly rounded bf16 result passes") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const auto tol = gemm_tolerance("bf16");
  for (int trial = 0; trial < 200; ++trial) {
    double ref = 0, abs_sum = 0;
    for (int k = 0; k < 4096; ++k) {
      const double p = round_to_bf16(dist(rng)) * round_to_bf16(dist(rng));
      ref += p;
      abs_sum += std::fabs(p);
    }
    const double got = round_to_bf16(ref);
    REQUIRE(std::fabs(got - ref) <= gemm_allowed_error(tol, ref, abs_sum));
  }
}

TEST_CASE("gemm tolerance: an fp32 result missing one product fails") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const auto tol = gemm_tolerance("fp32");
  double ref = 0, abs_sum = 0, dropped = 0;
  for (int k = 0; k < 8192; ++k) {
    const double p = dist(rng) * dist(rng);
    // Drop the first product of about average magnitude (E|a b| = 1/4).
    if (dropped == 0 && std::fabs(p) > 0.2) dropped = p;
    ref += p;
    abs_sum += std::fabs(p);
  }
  const double got = ref - dropped;
  CAPTURE(dropped, abs_sum);
  CHECK(std::fabs(got - ref) > gemm_allowed_error(tol, ref, abs_sum));
}

TEST_CASE("gemm sample indices: distinct and sorted and including both ends") {
  const auto idx = gemm_sample_indices(10000, 16, 42);
  REQUIRE(idx.size() == 16);
  CHECK(idx.front() == 0);
  CHECK(idx.back() == 9999);
  CHECK(std::set<std::int64_t>(idx.begin(), idx.end()).size() == 16);
  for (std::size_t i = 1; i < idx.size(); ++i) CHECK(idx[i - 1] < idx[i]);
}

TEST_CASE("gemm sample indices: every index when the extent is small") {
  CHECK(gemm_sample_indices(5, 16, 1) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(gemm_sample_indices(1, 8, 1) == std::vector<std::int64_t>{0});
}

TEST_CASE("gemm sample indices: deterministic per seed") {
  CHECK(gemm_sample_indices(1 << 20, 16, 3) == gemm_sample_indices(1 << 20, 16, 3));
  CHECK(gemm_sample_indices(1 << 20, 16, 3) != gemm_sample_indices(1 << 20, 16, 4));
}

TEST_CASE("fill decode: bf16 and fp16 and fp8 e4m3 bit patterns decode exactly") {
  using namespace mgbench::kernels;
  CHECK(decode_bf16(0x3f80) == 1.0);
  CHECK(decode_bf16(0xc000) == -2.0);
  CHECK(decode_fp16(0x3c00) == 1.0);
  CHECK(decode_fp16(0x0001) == std::ldexp(1.0, -24));  // smallest subnormal
  CHECK(decode_fp16(0x7bff) == 65504.0);
  CHECK(std::isinf(decode_fp16(0xfc00)));
  CHECK(decode_fp8_e4m3(0x38) == 1.0);
  CHECK(decode_fp8_e4m3(0x7e) == 448.0);                  // largest finite
  CHECK(decode_fp8_e4m3(0x01) == std::ldexp(1.0, -9));    // smallest subnormal
  CHECK(decode_fp8_e4m3(0xb4) == -0.75);
  CHECK(std::isnan(decode_fp8_e4m3(0x7f)));
}

TEST_CASE("fill_value: floating-point fills are in range and never zero") {
  for (DType dtype : {DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3}) {
    CAPTURE(mgbench::kernels::to_string(dtype));
    int negative = 0;
    for (std::size_t i = 0; i < 20000; ++i) {
      const double v = mgbench::kernels::fill_value(dtype, 99, i, -1.0, 1.0);
      REQUIRE(std::isfinite(v));
      REQUIRE(v != 0.0);
      REQUIRE(v >= -1.0);
      REQUIRE(v <= 1.0);
      negative += v < 0 ? 1 : 0;
    }
    // Uniform in [-1, 1): about half negative.
    CHECK(negative > 9000);
    CHECK(negative < 11000);
  }
}

TEST_CASE("fill_value: fp8 values that would round to zero become the smallest normal") {
  // [0, 1e-3): every raw value is below half the smallest e4m3 subnormal (2^-10).
  for (std::size_t i = 0; i < 100; ++i) {
    const double v = mgbench::kernels::fill_value(DType::fp8_e4m3, 5, i, 0.0, 9e-4);
    REQUIRE(v == std::ldexp(1.0, -6));
  }
}

TEST_CASE("fill_value: int32 fills are integers in the range and never zero") {
  std::set<double> seen;
  for (std::size_t i = 0; i < 5000; ++i) {
    const double v = mgbench::kernels::fill_value(DType::int32, 1, i, -3.0, 3.0);
    REQUIRE(v == std::floor(v));
    REQUIRE(v >= -3.0);
    REQUIRE(v <= 3.0);
    REQUIRE(v != 0.0);
    seen.insert(v);
  }
  CHECK(seen.size() == 6);
}

TEST_CASE("fill_value: the seed changes the sequence") {
  int same = 0;
  for (std::size_t i = 0; i < 1000; ++i) {
    same += mgbench::kernels::fill_value(DType::fp32, 1, i, -1, 1) ==
                    mgbench::kernels::fill_value(DType::fp32, 2, i, -1, 1)
                ? 1
                : 0;
  }
  CHECK(same < 5);
}

TEST_CASE("fill_value: an empty or inverted range gives NaN") {
  CHECK(std::isnan(mgbench::kernels::fill_value(DType::fp32, 1, 0, 1.0, -1.0)));
  CHECK(std::isnan(mgbench::kernels::fill_value(DType::bf16, 1, 0, 0.0, 0.0)));
  CHECK(std::isnan(mgbench::kernels::fill_value(DType::int32, 1, 0, 0.2, 0.8)));
}

TEST_CASE("tf32 is stored, filled and decoded as fp32", "[gemm]") {
  using mgbench::kernels::decode_element;
  using mgbench::kernels::dtype_size;
  using mgbench::kernels::fill_value;
  using mgbench::kernels::storage_dtype;
  CHECK(storage_dtype(DType::tf32) == DType::fp32);
  for (DType t : {DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3, DType::int32}) {
    CHECK(storage_dtype(t) == t);
  }
  CHECK(dtype_size(DType::tf32) == 4);
  CHECK(std::string(mgbench::kernels::to_string(DType::tf32)) == "tf32");
  const float value = 1.2345678f;
  CHECK(decode_element(DType::tf32, &value, 0) == static_cast<double>(value));
  for (std::size_t i = 0; i < 64; ++i) {
    CHECK(fill_value(DType::tf32, 7, i, -1.0, 1.0) == fill_value(DType::fp32, 7, i, -1.0, 1.0));
  }
}

namespace {

mgbench::PointResult gemm_point(const std::string& impl, const std::string& dtype,
                                std::int64_t m, double tflops, const std::string& timing) {
  mgbench::PointResult p;
  p.workload = "gemm";
  p.gpus = 1;
  p.params = {{"impl", impl}, {"dtype", dtype}, {"m", m}, {"n", 8192}, {"k", 8192}};
  p.metrics = {{"tflops_per_gpu", tflops}};
  p.measured = {mgbench::timing_from_string(timing), mgbench::CacheMode::cold};
  if (impl == "mgbench") p.extra = {{"implementation", {{"name", "simt_fp32"}, {"version", 2}}}};
  return p;
}

}  // namespace

TEST_CASE("own vs cuBLAS summary pairs the two impls of one shape, dtype and method") {
  std::vector<mgbench::PointResult> points = {
      gemm_point("cublas", "fp32", 8192, 50.0, "host"),
      gemm_point("mgbench", "fp32", 8192, 46.0, "host"),
      gemm_point("cublas", "fp32", 2048, 50.0, "host"),
      gemm_point("mgbench", "fp32", 2048, 45.0, "device"),  // another method: no pair
      gemm_point("cublas", "bf16", 8192, 700.0, "host"),     // no own point
      gemm_point("mgbench", "tf32", 8192, 300.0, "host"),
      gemm_point("cublas", "tf32", 8192, 350.0, "host")};
  points.back().status = mgbench::Status::wrong;  // a wrong figure is never a reference
  const Json rows = mgbench::bench::own_vs_cublas_summary(points);
  REQUIRE(rows.size() == 1);
  const Json& r = rows[0];
  CHECK(r["shape"] == "M=N=K=8192");
  CHECK(r["dtype"] == "fp32");
  CHECK(r["measured"] == "host, cold");
  CHECK(r["own_vs_cublas"].get<double>() == Approx(0.92));
  CHECK(r["kernel"] == "simt_fp32 v2");
  // A batch shape is labelled M x N x K.
  points = {gemm_point("cublas", "bf16", 2048, 700.0, "host"),
            gemm_point("mgbench", "bf16", 2048, 630.0, "host")};
  CHECK(mgbench::bench::own_vs_cublas_summary(points)[0]["shape"] == "2048x8192x8192");
}

TEST_CASE("gemm expand: shape=MxNxK points follow the square points, M, N, K as given") {
  AxisValues v = axis_values({4096}, {}, {}, {"bf16"}, {"cublas"});
  v["shape"] = texts({"8192x6144x4096", "8192x4096x14336"});
  const auto points = expand_gemm_points(v);
  REQUIRE(points.size() == 3);
  CHECK(points[0].text("shape") == "square");
  CHECK(points[1].text("shape") == "8192x6144x4096");
  CHECK((points[1].integer("m") == 8192 && points[1].integer("n") == 6144 &&
         points[1].integer("k") == 4096));
  CHECK((points[2].integer("m") == 8192 && points[2].integer("n") == 4096 &&
         points[2].integer("k") == 14336));
  const mgbench::bench::GemmDims d = mgbench::bench::gemm_dims(points[2]);
  CHECK((d.m == 8192 && d.n == 4096 && d.k == 14336));
  CHECK(gemm_metrics(points[1], 1, 1.0)["tflops_per_gpu"].get<double>() ==
        2.0 * 8192 * 6144 * 4096 / 1e12);
}

TEST_CASE("gemm shape: MxNxK of positive integers, anything else refused") {
  using mgbench::bench::parse_gemm_shape;
  const auto d = parse_gemm_shape("1x2x3", 100);
  CHECK((d.m == 1 && d.n == 2 && d.k == 3));
  CHECK(parse_gemm_shape("100x100x100", 100).k == 100);
  for (const char* bad : {"", "8192", "8192x4096", "8192x4096x", "x1x2", "1x2x3x4", "0x2x3",
                          "1x-2x3", "1x2xk", "101x1x1", "1 x2x3", "1x2x99999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_gemm_shape(bad, 100), mgbench::UsageError);
  }
}
