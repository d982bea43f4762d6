// The own-GEMM checker of gemm_check.hpp.
#include "gemm_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "gemm/gemm_math.hpp"
#include "mgbench/kernels/gemm.hpp"

namespace mgbench::test {

using kernels::DType;

namespace {

std::vector<std::int64_t> rows_to_check(std::int64_t m, std::int64_t row_budget) {
  std::vector<std::int64_t> rows;
  if (row_budget >= m) {
    for (std::int64_t i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  const std::int64_t count = std::max<std::int64_t>(row_budget, 2);
  for (std::int64_t r = 0; r < count; ++r) rows.push_back(r * (m - 1) / (count - 1));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::string describe(std::int64_t i, std::int64_t j, double got, double ref, double allowed) {
  std::ostringstream text;
  text.precision(8);
  text << "C[" << i << "][" << j << "] = " << got << ", reference " << ref << ", |error| "
       << std::fabs(got - ref) << ", allowed " << allowed;
  return text.str();
}

std::vector<float> decode_all(DType type, const std::vector<unsigned char>& raw,
                              std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = static_cast<float>(kernels::decode_element(type, raw.data(), i));  // exact
  }
  return out;
}

// Compares row `i` of C with the reference from decoded A (row i) and B.
void check_row(GemmCheck& check, const bench::GemmTolerance& tol, Shape s, std::int64_t i,
               const std::vector<float>& a_row, const std::vector<float>& b) {
  for (std::int64_t j = 0; j < s.n; ++j) {
    double ref = 0, abs_sum = 0;
    const float* bj = b.data() + j * s.k;
    for (std::int64_t q = 0; q < s.k; ++q) {
      const double p = static_cast<double>(a_row[static_cast<std::size_t>(q)]) * bj[q];
      ref += p;
      abs_sum += std::fabs(p);
    }
    const double got = check.c[static_cast<std::size_t>(i * s.n + j)];
    const double allowed = bench::gemm_allowed_error(tol, ref, abs_sum);
    const double err = std::fabs(got - ref);
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
    ++check.checked;
    if (!(ratio <= 1.0)) {
      if (check.wrong == 0) check.first_bad = describe(i, j, got, ref, allowed);
      ++check.wrong;
      ++check.wrong_by_row[(i % 128) / 16];
      ++check.wrong_by_col[(j % 256) / 32];
    }
    if (!(ratio <= check.worst_ratio)) {
      check.worst_ratio = std::isnan(ratio) ? INFINITY : ratio;
      check.worst = describe(i, j, got, ref, allowed);
    }
  }
}

}  // namespace

std::string gemm_dtype_name(DType type) {
  return type == DType::fp8_e4m3 ? "fp8" : kernels::to_string(type);
}

GemmLaunch dispatch_launch() {
  return [](DType type, Shape s, const void* a, const void* b, void* c) {
    return kernels::gemm(type, s.m, s.n, s.k, a, b, c, nullptr);
  };
}

std::string GemmCheck::summary() const {
  std::ostringstream text;
  text << wrong << " of " << checked << " checked elements wrong (" << rows.size()
       << " rows); worst |error|/allowed " << worst_ratio << " at " << worst;
  if (wrong > 0) {
    text << "; first wrong " << first_bad << "; wrong by row % 128 / 16:";
    for (const std::size_t w : wrong_by_row) text << " " << w;
    text << "; by column % 256 / 32:";
    for (const std::size_t w : wrong_by_col) text << " " << w;
  }
  return text.str();
}

GemmCheck check_gemm(DType type, Shape s, const GemmLaunch& launch, std::size_t extra,
                     double max_macs) {
  const DType in = kernels::storage_dtype(type);
  const DType out = type == DType::fp8_e4m3 ? DType::bf16 : in;
  const auto m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n),
             k = static_cast<std::size_t>(s.k);
  const std::size_t in_size = kernels::dtype_size(in), out_size = kernels::dtype_size(out);
  Buffer a(m * k * in_size), b(n * k * in_size), c((m * n + extra) * out_size);
  CUDA_REQUIRE(kernels::fill_uniform(a.get(), m * k, in, 11, -1.0, 1.0, nullptr));
  CUDA_REQUIRE(kernels::fill_uniform(b.get(), n * k, in, 12, -1.0, 1.0, nullptr));
  CUDA_REQUIRE(kernels::fill_poison(c.get(), m * n + extra, out, nullptr));
  CUDA_REQUIRE(launch(type, s, a.get(), b.get(), c.get()));
  CUDA_REQUIRE(cudaDeviceSynchronize());

  GemmCheck check;
  const auto hc = c.to_host();
  check.c.resize(m * n + extra);
  for (std::size_t i = 0; i < check.c.size(); ++i) {
    check.c[i] = kernels::decode_element(out, hc.data(), i);
  }
  const double macs_per_row = static_cast<double>(n) * static_cast<double>(k);
  check.rows = rows_to_check(s.m, static_cast<std::int64_t>(max_macs / macs_per_row));
  const std::vector<float> hb = decode_all(in, b.to_host(), n * k);
  const auto ha = a.to_host();
  const bench::GemmTolerance tol = bench::gemm_tolerance(gemm_dtype_name(type));
  std::vector<float> a_row(k);
  for (const std::int64_t i : check.rows) {
    for (std::size_t q = 0; q < k; ++q) {
      a_row[q] = static_cast<float>(
          kernels::decode_element(in, ha.data(), static_cast<std::size_t>(i) * k + q));
    }
    check_row(check, tol, s, i, a_row, hb);
  }
  return check;
}

}  // namespace mgbench::test
