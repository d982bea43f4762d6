#pragma once
// Two-sided Mann-Whitney U (Wilcoxon rank-sum) test on two independent samples.
//
// Conventions follow scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method="auto"):
// - U1 = R1 - n1 (n1 + 1) / 2, with R1 the sum of the (mid-)ranks of x in the pooled sample;
//   U2 = n1 n2 - U1.
// - Exact null distribution when there are no ties and min(n1, n2) <= 8 (scipy's "auto"
//   rule): p = 2 P(U <= min(U1, U2)), clipped to 1.
// - Otherwise the normal approximation with tie correction and continuity correction:
//   mu = n1 n2 / 2, sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1))),
//   z = (max(U1, U2) - mu - 0.5) / sigma, p = 2 (1 - Phi(z)), clipped to 1.
//   When every value is tied (sigma = 0) the samples cannot be told apart: p = 1.
#include <vector>

namespace mgbench {

enum class MannWhitneyMethod { automatic, exact, asymptotic };

struct MannWhitneyResult {
  double u1 = 0;       // U statistic of the first sample
  double u2 = 0;       // U statistic of the second sample (n1 n2 - u1)
  double p_value = 1;  // two-sided
  double z = 0;        // normal score (asymptotic method only; 0 for exact)
  bool exact = false;  // the exact distribution was used
  bool ties = false;   // the pooled sample has ties
};

// Throws UsageError when a sample is empty or holds a non-finite value. `method` exact with
// ties falls back to the asymptotic method (the exact distribution assumes no ties).
MannWhitneyResult mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y,
                                 MannWhitneyMethod method = MannWhitneyMethod::automatic);

// P(U <= u) under the null hypothesis for sample sizes n1, n2 without ties (exact).
double mann_whitney_exact_cdf(int n1, int n2, double u);

}  // namespace mgbench
