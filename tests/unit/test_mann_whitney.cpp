// Mann-Whitney U against known values. References: the scipy.stats.mannwhitneyu documentation
// example (males/females), R's wilcox.test values quoted in scipy's test suite (gh-9184), the
// exact-distribution table of Mann & Whitney (1947), and values computed by hand (Python with
// exact integer arithmetic: the Gaussian-binomial counts and math.erfc for the normal tail).
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/analysis/mann_whitney.hpp"

using mgbench::mann_whitney_u;
using mgbench::MannWhitneyMethod;

TEST_CASE("mann-whitney: scipy documentation example, exact p-value", "[mann_whitney]") {
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const auto r = mann_whitney_u(males, females);
  CHECK(r.u1 == 17.0);
  CHECK(r.u2 == 3.0);
  CHECK(r.exact);
  CHECK(r.p_value == Approx(0.1111111111111111).epsilon(1e-12));
}

TEST_CASE("mann-whitney: scipy documentation example, asymptotic p-value", "[mann_whitney]") {
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const auto r = mann_whitney_u(males, females, MannWhitneyMethod::asymptotic);
  CHECK_FALSE(r.exact);
  CHECK(r.p_value == Approx(0.11134688653314041).epsilon(1e-9));
}

TEST_CASE("mann-whitney: R wilcox.test values (scipy gh-9184)", "[mann_whitney]") {
  const std::vector<double> x = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  const std::vector<double> y = {1.15, 0.88, 0.90, 0.74, 1.21};
  const auto exact = mann_whitney_u(x, y);  // n2 = 5 <= 8, no ties: exact
  CHECK(exact.u1 == 35.0);
  CHECK(exact.exact);
  CHECK(exact.p_value == Approx(0.2544122544123).epsilon(1e-10));
  const auto normal = mann_whitney_u(x, y, MannWhitneyMethod::asymptotic);
  CHECK(normal.p_value == Approx(0.244623605127).epsilon(1e-10));
}

TEST_CASE("mann-whitney: ties use the normal approximation with tie correction", "[mann_whitney]") {
  // Tie groups: 2 (x2), 3 (x2), 4 (x4), 5 (x3), 6 (x2). Hand-computed: U1 = 8,
  // sum(t^3 - t) = 102, sigma^2 = 72/12 * (18 - 102/272), z = (64 - 36 - 0.5) / sigma.
  const std::vector<double> a = {1, 2, 2, 3, 4, 4, 4, 5};
  const std::vector<double> b = {3, 4, 5, 5, 6, 6, 7, 8, 9};
  const auto r = mann_whitney_u(a, b);
  CHECK(r.ties);
  CHECK_FALSE(r.exact);
  CHECK(r.u1 == 8.0);
  CHECK(r.z == Approx(2.674191510794733).epsilon(1e-12));
  CHECK(r.p_value == Approx(0.0074909659820025605).epsilon(1e-10));
}

TEST_CASE("mann-whitney: exact with ties requested falls back to the normal approximation",
          "[mann_whitney]") {
  const auto r = mann_whitney_u({1, 2, 2}, {2, 3, 4}, MannWhitneyMethod::exact);
  CHECK_FALSE(r.exact);
  CHECK(r.ties);
}

TEST_CASE("mann-whitney: every value tied gives p = 1", "[mann_whitney]") {
  const auto r = mann_whitney_u({1.0, 1.0, 1.0}, {1.0, 1.0});
  CHECK(r.u1 == 3.0);
  CHECK(r.p_value == 1.0);
}

TEST_CASE("mann-whitney: tiny fully separated samples, exact", "[mann_whitney]") {
  // 3 vs 3: 20 arrangements, U = 0 in one of them: p = 2/20.
  const auto r = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  CHECK(r.exact);
  CHECK(r.u1 == 0.0);
  CHECK(r.p_value == Approx(0.1).epsilon(1e-12));
}

TEST_CASE("mann-whitney: larger samples without ties, normal approximation", "[mann_whitney]") {
  std::vector<double> a, b;
  for (int i = 0; i < 12; ++i) {
    a.push_back(1.0 + 0.01 * i);
    b.push_back(1.045 + 0.01 * i);
  }
  const auto r = mann_whitney_u(a, b);
  CHECK_FALSE(r.exact);
  CHECK(r.u1 == 28.0);
  CHECK(r.p_value == Approx(0.012022825407617451).epsilon(1e-9));
}

TEST_CASE("mann-whitney: swapping the samples swaps U and keeps p", "[mann_whitney]") {
  const std::vector<double> x = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  const std::vector<double> y = {1.15, 0.88, 0.90, 0.74, 1.21};
  const auto a = mann_whitney_u(x, y);
  const auto b = mann_whitney_u(y, x);
  CHECK(a.u1 == b.u2);
  CHECK(a.p_value == Approx(b.p_value).epsilon(1e-12));
}

TEST_CASE("mann-whitney: exact CDF matches the Mann-Whitney (1947) table", "[mann_whitney]") {
  // n = 4, m = 3: P(U <= u) for u = 0..6.
  const double table[] = {0.028571, 0.057143, 0.114286, 0.2, 0.314286, 0.428571, 0.571429};
  for (int u = 0; u < 7; ++u) {
    CHECK(mgbench::mann_whitney_exact_cdf(3, 4, u) == Approx(table[u]).margin(1e-6));
  }
  CHECK(mgbench::mann_whitney_exact_cdf(3, 4, 12) == 1.0);
  CHECK(mgbench::mann_whitney_exact_cdf(3, 4, -1) == 0.0);
}

TEST_CASE("mann-whitney: exact CDF stays accurate for 8 vs 1000 samples", "[mann_whitney]") {
  // Exact integer arithmetic: counts / C(1008, 8).
  CHECK(mgbench::mann_whitney_exact_cdf(8, 1000, 500) ==
        Approx(1.2476882134777813e-07).epsilon(1e-9));
  CHECK(mgbench::mann_whitney_exact_cdf(8, 1000, 2500) ==
        Approx(0.033444561673786864).epsilon(1e-9));
  CHECK(mgbench::mann_whitney_exact_cdf(1000, 8, 3999) ==
        Approx(0.49976138913619333).epsilon(1e-9));
  // The upper half through symmetry: P(U <= 4000 + 1000) = 1 - P(U <= 2999).
  CHECK(mgbench::mann_whitney_exact_cdf(8, 1000, 5000) ==
        Approx(1.0 - mgbench::mann_whitney_exact_cdf(8, 1000, 2999)).epsilon(1e-12));
}

TEST_CASE("mann-whitney: an empty sample is a usage error", "[mann_whitney]") {
  CHECK_THROWS_AS(mann_whitney_u({}, {1.0}), mgbench::UsageError);
}

TEST_CASE("mann-whitney: a non-finite value is a usage error", "[mann_whitney]") {
  CHECK_THROWS_AS(mann_whitney_u({1.0, std::nan("")}, {1.0}), mgbench::UsageError);
}
