// Statistics and the stopping rule against hand-computed values.
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/stats.hpp"

using mgbench::compute_statistics;
using mgbench::evaluate_stop;
using mgbench::median_of;
using mgbench::percentile_sorted;
using mgbench::relative_stdev;
using mgbench::StopDecision;
using mgbench::StoppingCriteria;

namespace {

const std::vector<double> kOneToTen = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
// Mean 5, squared deviations sum to 32: sample variance 32/7.
const std::vector<double> kClassic = {4, 2, 9, 4, 5, 7, 4, 5};

std::vector<double> repeated(double value, std::size_t n) { return std::vector<double>(n, value); }

// 0.1, 0.2, 0.1, 0.2 ...: mean 0.15, every deviation 0.05, relative stdev about 35 %.
std::vector<double> alternating(std::size_t n) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(i % 2 == 0 ? 0.1 : 0.2);
  return v;
}

}  // namespace

TEST_CASE("percentile_sorted interpolates linearly between order statistics (type 7)") {
  // h = (n - 1) q = 9 q.
  CHECK(percentile_sorted(kOneToTen, 0.05) == Approx(1.45));  // h 0.45: 1 + 0.45 (2 - 1)
  CHECK(percentile_sorted(kOneToTen, 0.50) == Approx(5.5));   // h 4.5
  CHECK(percentile_sorted(kOneToTen, 0.95) == Approx(9.55));  // h 8.55: 9 + 0.55 (10 - 9)
  CHECK(percentile_sorted(kOneToTen, 0.25) == Approx(3.25));  // h 2.25
}

TEST_CASE("percentile_sorted weights the gap between unequal neighbours") {
  const std::vector<double> v = {2, 4, 4, 5, 7, 9};  // h = 5 q
  CHECK(percentile_sorted(v, 0.05) == Approx(2.5));   // h 0.25: 2 + 0.25 (4 - 2)
  CHECK(percentile_sorted(v, 0.25) == Approx(4.0));   // h 1.25 between 4 and 4
  CHECK(percentile_sorted(v, 0.90) == Approx(8.0));   // h 4.5: 7 + 0.5 (9 - 7)
}

TEST_CASE("percentile_sorted returns the extremes at q 0 and 1 and clamps outside") {
  CHECK(percentile_sorted(kOneToTen, 0.0) == 1.0);
  CHECK(percentile_sorted(kOneToTen, 1.0) == 10.0);
  CHECK(percentile_sorted(kOneToTen, -0.5) == 1.0);
  CHECK(percentile_sorted(kOneToTen, 1.5) == 10.0);
}

TEST_CASE("percentile_sorted of one value or of nothing") {
  CHECK(percentile_sorted({3.5}, 0.3) == 3.5);
  CHECK(percentile_sorted({}, 0.5) == 0.0);
}

TEST_CASE("median_of sorts its input: middle value when odd, mean of the two middles when even") {
  CHECK(median_of({5, 1, 3}) == 3.0);
  CHECK(median_of({4, 1, 3, 2}) == 2.5);
  CHECK(median_of({}) == 0.0);
}

TEST_CASE("relative_stdev uses the n - 1 sample standard deviation over the mean") {
  // sqrt(32 / 7) / 5 = 2.1380899353 / 5
  CHECK(relative_stdev(kClassic) == Approx(0.42761798706));
  // sqrt(10 * 0.05^2 / 9) / 0.15 = 0.0527046277 / 0.15
  CHECK(relative_stdev(alternating(10)) == Approx(0.35136418446));
}

TEST_CASE("relative_stdev is zero for fewer than two samples or identical samples") {
  CHECK(relative_stdev({}) == 0.0);
  CHECK(relative_stdev({0.25}) == 0.0);
  CHECK(relative_stdev({0.0, 0.0}) == 0.0);
  CHECK(relative_stdev(repeated(0.3, 5)) == 0.0);
}

TEST_CASE("compute_statistics matches a hand-computed table") {
  const mgbench::Statistics s = compute_statistics(kClassic);
  CHECK(s.n == 8);
  CHECK(s.min == 2.0);
  CHECK(s.max == 9.0);
  CHECK(s.mean == Approx(5.0));
  CHECK(s.median == Approx(4.5));            // sorted 2 4 4 4 5 5 7 9: (4 + 5) / 2
  CHECK(s.stdev == Approx(2.1380899353));    // sqrt(32 / 7)
  CHECK(s.rel_stdev == Approx(0.42761798706));
  CHECK(s.p05 == Approx(2.7));               // h 0.35: 2 + 0.35 (4 - 2)
  CHECK(s.p95 == Approx(8.3));               // h 6.65: 7 + 0.65 (9 - 7)
}

TEST_CASE("compute_statistics of an empty sample is all zeros") {
  const mgbench::Statistics s = compute_statistics({});
  CHECK(s.n == 0);
  CHECK(s.median == 0.0);
  CHECK(s.mean == 0.0);
  CHECK(s.stdev == 0.0);
  CHECK(s.ci_low == 0.0);
  CHECK(s.ci_high == 0.0);
}

TEST_CASE("compute_statistics of one sample: zero spread, the CI is the value itself") {
  const mgbench::Statistics s = compute_statistics({0.125});
  CHECK(s.n == 1);
  CHECK(s.median == 0.125);
  CHECK(s.p05 == 0.125);
  CHECK(s.p95 == 0.125);
  CHECK(s.stdev == 0.0);
  CHECK(s.rel_stdev == 0.0);
  CHECK(s.ci_low == 0.125);
  CHECK(s.ci_high == 0.125);
}

TEST_CASE("bootstrap CI of two samples spans both values") {
  // Resample medians of {1, 3}: 1 (p 1/4), 2 (p 1/2), 3 (p 1/4). With 1000 resamples about 250
  // land on each extreme, so the 2.5th and 97.5th percentiles are exactly 1 and 3.
  const mgbench::Statistics s = compute_statistics({3, 1});
  CHECK(s.ci_low == 1.0);
  CHECK(s.ci_high == 3.0);
}

TEST_CASE("bootstrap CI of identical samples collapses to the value") {
  const mgbench::Statistics s = compute_statistics(repeated(0.5, 20));
  CHECK(s.ci_low == 0.5);
  CHECK(s.ci_high == 0.5);
}

TEST_CASE("bootstrap CI brackets the median and stays inside the sample range") {
  const mgbench::Statistics s = compute_statistics(kOneToTen);
  CHECK(s.ci_low >= 1.0);
  CHECK(s.ci_low <= s.median);
  CHECK(s.ci_high >= s.median);
  CHECK(s.ci_high <= 10.0);
  CHECK(s.ci_low < s.ci_high);
}

TEST_CASE("bootstrap CI is deterministic for a seed") {
  const std::vector<double> v = {1.03, 0.97, 1.10, 0.99, 1.01, 1.25, 0.95, 1.00, 1.02, 0.98, 1.07};
  const mgbench::Statistics a = compute_statistics(v, 500, 42);
  const mgbench::Statistics b = compute_statistics(v, 500, 42);
  CHECK(a.ci_low == b.ci_low);
  CHECK(a.ci_high == b.ci_high);
}

TEST_CASE("bootstrap CI is the same on every standard library (pinned values)") {
  // Pinned from an independent Python re-implementation of the same algorithm: mt19937_64
  // (checked against the standard's 10000th-output value), unbiased draw by rejection then
  // r % n, resample medians, type-7 percentiles 2.5 / 97.5. std::mt19937_64 is fully specified
  // by the standard, so these hold on every library. 40 resamples make the bounds interpolate
  // between the two most extreme resample medians: sensitive to every draw.
  const std::vector<double> v = {1.031, 0.967, 1.102, 0.993, 1.014, 1.251,
                                 0.948, 1.006, 1.027, 0.982, 1.073, 1.119};
  const mgbench::Statistics s40 = compute_statistics(v, 40, 7);
  CHECK(s40.ci_low == Approx(0.992725).epsilon(1e-12));
  CHECK(s40.ci_high == Approx(1.0878625).epsilon(1e-12));
  const mgbench::Statistics s = compute_statistics(v);  // 1000 resamples, default seed
  CHECK(s.ci_low == Approx(0.9875).epsilon(1e-12));
  CHECK(s.ci_high == Approx(1.0875).epsilon(1e-12));
}

TEST_CASE("bootstrap with zero resamples gives the median as both bounds") {
  const mgbench::Statistics s = compute_statistics(kClassic, 0);
  CHECK(s.ci_low == Approx(4.5));
  CHECK(s.ci_high == Approx(4.5));
}

// ---- stopping rule ----------------------------------------------------------------------------

namespace {
StoppingCriteria criteria() {
  StoppingCriteria c;  // min_samples 10, min_time 0.5 s, max_time 5 s, max_noise 0.5 %
  return c;
}
}  // namespace

TEST_CASE("stop: keep going below min_samples even when quiet") {
  CHECK(evaluate_stop(criteria(), repeated(0.1, 9), 1.0) == StopDecision::keep_going);
}

TEST_CASE("stop: keep going below min_time even with enough samples") {
  // 10 x 0.01 s = 0.1 s of measured time < 0.5 s.
  CHECK(evaluate_stop(criteria(), repeated(0.01, 10), 0.2) == StopDecision::keep_going);
}

TEST_CASE("stop: converged once both minimums are met and the noise is below the target") {
  CHECK(evaluate_stop(criteria(), repeated(0.1, 10), 1.1) == StopDecision::converged);
}

TEST_CASE("stop: the noise target is inclusive") {
  StoppingCriteria c = criteria();
  const std::vector<double> v = {0.100, 0.101, 0.100, 0.101, 0.100, 0.101, 0.100, 0.101,
                                 0.100, 0.101};
  c.max_noise = relative_stdev(v);
  CHECK(evaluate_stop(c, v, 1.0) == StopDecision::converged);
}

TEST_CASE("stop: noisy samples keep going before max_time") {
  CHECK(evaluate_stop(criteria(), alternating(10), 1.6) == StopDecision::keep_going);
}

TEST_CASE("stop: noisy samples end as noisy at max_time") {
  CHECK(evaluate_stop(criteria(), alternating(10), 5.0) == StopDecision::noisy);
}

TEST_CASE("stop: noisy samples end as noisy at max_samples") {
  StoppingCriteria c = criteria();
  c.max_samples = 10;
  CHECK(evaluate_stop(c, alternating(10), 1.6) == StopDecision::noisy);
}

TEST_CASE("stop: max_time below the minimums ends as noisy once two samples exist") {
  // 3 samples of 2 s: min_samples 10 can never be reached within 5 s.
  CHECK(evaluate_stop(criteria(), repeated(2.0, 3), 6.0) == StopDecision::noisy);
}

TEST_CASE("stop: max_time with a single sample keeps going for a second one") {
  CHECK(evaluate_stop(criteria(), repeated(7.0, 1), 7.0) == StopDecision::keep_going);
}

TEST_CASE("stop: max_samples ends the loop even below the minimums") {
  StoppingCriteria c = criteria();
  c.max_samples = 1;
  CHECK(evaluate_stop(c, repeated(7.0, 1), 7.0) == StopDecision::noisy);
}

TEST_CASE("stop: never converged without a sample, whatever the minimums") {
  StoppingCriteria c = criteria();
  c.min_samples = 0;
  c.min_time_s = 0.0;
  CHECK(evaluate_stop(c, {}, 0.0) == StopDecision::keep_going);
}

TEST_CASE("stop: max_samples 0 means no cap") {
  StoppingCriteria c = criteria();
  c.max_samples = 0;
  CHECK(evaluate_stop(c, alternating(10), 1.6) == StopDecision::keep_going);
}
