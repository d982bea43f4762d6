// Two-sided Mann-Whitney U test (see mann_whitney.hpp for the conventions and formulas).
#include "mgbench/analysis/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include "mgbench/core/error.hpp"

namespace mgbench {
namespace {

// The exact distribution is used up to these sizes (memory and time stay small); larger
// samples use the normal approximation even when `exact` was asked for.
constexpr int kExactMaxSmallSample = 64;
constexpr double kExactMaxCells = 4e6;

// Number of arrangements with U = k, for k = 0..k_max, as the coefficients of the Gaussian
// binomial [n1 + n2 choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), m = min(n1, n2),
// n = max(n1, n2). Every step only reads lower coefficients, so truncating at k_max is exact.
// Dividing before multiplying keeps every intermediate polynomial non-negative.
std::vector<long double> exact_counts(int n1, int n2, long k_max) {
  const int m = std::min(n1, n2);
  const long n = std::max(n1, n2);
  std::vector<long double> c(static_cast<std::size_t>(k_max) + 1, 0.0L);
  c[0] = 1.0L;
  for (int i = 1; i <= m; ++i) {
    for (long k = i; k <= k_max; ++k) c[k] += c[k - i];
    for (long k = k_max; k >= n + i; --k) c[k] -= c[k - n - i];
  }
  return c;
}

long double binomial(int n1, int n2) {
  const int m = std::min(n1, n2);
  const int n = std::max(n1, n2);
  long double result = 1.0L;
  for (int i = 1; i <= m; ++i) result = result * static_cast<long double>(n + i) / i;
  return result;
}

bool exact_feasible(int n1, int n2) {
  return std::min(n1, n2) <= kExactMaxSmallSample &&
         static_cast<double>(n1) * static_cast<double>(n2) <= kExactMaxCells;
}

void check_sample(const std::vector<double>& sample, const char* name) {
  if (sample.empty()) {
    throw UsageError(std::string("Mann-Whitney U test: sample ") + name + " is empty");
  }
  for (double v : sample) {
    if (!std::isfinite(v)) {
      throw UsageError(std::string("Mann-Whitney U test: sample ") + name +
                       " holds a non-finite value");
    }
  }
}

}  // namespace

double mann_whitney_exact_cdf(int n1, int n2, double u) {
  if (n1 <= 0 || n2 <= 0) throw UsageError("Mann-Whitney exact distribution: empty sample");
  const long total_cells = static_cast<long>(n1) * n2;
  if (u < 0) return 0.0;
  if (u >= static_cast<double>(total_cells)) return 1.0;
  const long k = static_cast<long>(std::floor(u));
  // Use the shorter tail: P(U <= k) = 1 - P(U <= n1 n2 - k - 1) by symmetry.
  const bool upper = 2 * k > total_cells;
  const long k_max = upper ? total_cells - k - 1 : k;
  const std::vector<long double> counts = exact_counts(n1, n2, k_max);
  const long double tail = std::accumulate(counts.begin(), counts.end(), 0.0L);
  const double p = static_cast<double>(tail / binomial(n1, n2));
  return std::clamp(upper ? 1.0 - p : p, 0.0, 1.0);
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y,
                                 MannWhitneyMethod method) {
  check_sample(x, "x");
  check_sample(y, "y");
  const std::size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;

  // Pooled sample, sorted; mid-ranks for tied groups; tie sizes for the variance correction.
  std::vector<std::pair<double, bool>> pooled;  // value, belongs to x
  pooled.reserve(n);
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_x += mid_rank;
    }
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }

  MannWhitneyResult result;
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  result.u1 = rank_sum_x - d1 * (d1 + 1) / 2;
  result.u2 = d1 * d2 - result.u1;
  result.ties = ties;

  bool use_exact = false;
  const int i1 = static_cast<int>(std::min<std::size_t>(n1, 1u << 30));
  const int i2 = static_cast<int>(std::min<std::size_t>(n2, 1u << 30));
  if (!ties && exact_feasible(i1, i2)) {
    if (method == MannWhitneyMethod::exact) use_exact = true;
    if (method == MannWhitneyMethod::automatic) use_exact = std::min(n1, n2) <= 8;
  }

  if (use_exact) {
    result.exact = true;
    const double u_min = std::min(result.u1, result.u2);
    result.p_value = std::min(1.0, 2.0 * mann_whitney_exact_cdf(i1, i2, u_min));
    return result;
  }

  const double dn = static_cast<double>(n);
  const double mu = d1 * d2 / 2.0;
  const double variance = d1 * d2 / 12.0 * ((dn + 1.0) - tie_term / (dn * (dn - 1.0)));
  if (!(variance > 0)) {  // every value tied (or n = 2 with a tie): no evidence either way
    result.p_value = 1.0;
    return result;
  }
  const double u_max = std::max(result.u1, result.u2);
  result.z = (u_max - mu - 0.5) / std::sqrt(variance);
  result.p_value = std::clamp(std::erfc(result.z / std::sqrt(2.0)), 0.0, 1.0);
  return result;
}

}  // namespace mgbench
