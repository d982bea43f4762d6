// Sample statistics and the per-point stopping rule (docs/ARCHITECTURE.md, "The life of one point").
//
// - Percentiles: linear interpolation between order statistics (Hyndman-Fan type 7, numpy's
//   default): h = (n - 1) q, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
// - stdev is the sample standard deviation (divisor n - 1); rel_stdev = stdev / |mean|.
// - The 95 % CI of the median is a percentile bootstrap: `bootstrap_resamples` resamples of n
//   draws with replacement, the 2.5th and 97.5th percentiles (type 7) of their medians. The
//   random stream is std::mt19937_64 (fully specified by the standard) with our own unbiased
//   index draw, so the interval is identical across standard libraries for a given seed.
#include "mgbench/model/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace mgbench {
namespace {

// Unbiased draw in [0, n) by rejection: only the top partial block of the 64-bit range is
// rejected, so the result does not depend on the standard library's distributions.
std::uint64_t uniform_index(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - (max % n + 1) % n;  // accept r <= limit
  std::uint64_t r = rng();
  while (r > limit) r = rng();
  return r % n;
}

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double sample_stdev(const std::vector<double>& values, double mean) {
  if (values.size() < 2) return 0.0;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

// Spread around a zero mean has no relative size: the largest finite value stands for it (an
// infinity would reach results.json as null and never compare as converged anyway).
double relative(double stdev, double mean) {
  if (stdev == 0.0) return 0.0;
  if (mean == 0.0) return std::numeric_limits<double>::max();
  const double r = stdev / std::fabs(mean);
  return std::isfinite(r) ? r : std::numeric_limits<double>::max();
}

// The finite values, in their order: NaN makes std::sort undefined behaviour, and an infinite
// sample is not a measurement.
std::vector<double> finite_only(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) {
    if (std::isfinite(v)) out.push_back(v);
  }
  return out;
}

// Median of one bootstrap resample of `sorted`. Because `sorted` is ascending, the k-th
// smallest drawn value is sorted[k-th smallest drawn index]: counting the drawn indices gives
// the order statistics without sorting the resample (O(n) per resample).
double resample_median(const std::vector<double>& sorted, std::mt19937_64& rng,
                       std::vector<std::uint32_t>& counts) {
  const std::size_t n = sorted.size();
  std::fill(counts.begin(), counts.end(), 0u);
  for (std::size_t i = 0; i < n; ++i) ++counts[uniform_index(rng, n)];
  // 0-based ranks of the middle order statistics (equal when n is odd).
  const std::size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;
  double lo = 0.0;
  std::size_t seen = 0;
  for (std::size_t idx = 0; idx < n; ++idx) {
    if (counts[idx] == 0) continue;
    const std::size_t before = seen;
    seen += counts[idx];
    if (before <= lo_rank && lo_rank < seen) lo = sorted[idx];
    if (before <= hi_rank && hi_rank < seen) return 0.5 * (lo + sorted[idx]);
  }
  return lo;  // unreachable: hi_rank < n
}

}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  if (!(q > 0.0)) return sorted.front();  // also NaN
  if (q >= 1.0) return sorted.back();
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median_of(std::vector<double> values) {
  values = finite_only(values);
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, 0.5);
}

double relative_stdev(const std::vector<double>& all_samples) {
  const std::vector<double> samples = finite_only(all_samples);
  const double mean = mean_of(samples);
  return relative(sample_stdev(samples, mean), mean);
}

Statistics compute_statistics(const std::vector<double>& all_samples,
                              std::size_t bootstrap_resamples, std::uint64_t seed) {
  const std::vector<double> samples = finite_only(all_samples);
  Statistics s;
  s.n = samples.size();
  if (samples.empty()) return s;

  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile_sorted(sorted, 0.5);
  s.p05 = percentile_sorted(sorted, 0.05);
  s.p95 = percentile_sorted(sorted, 0.95);
  s.mean = mean_of(samples);
  s.stdev = sample_stdev(samples, s.mean);
  s.rel_stdev = relative(s.stdev, s.mean);

  // One sample or no resamples: the interval degenerates to the median itself.
  s.ci_low = s.ci_high = s.median;
  if (sorted.size() >= 2 && bootstrap_resamples > 0) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint32_t> counts(sorted.size());
    std::vector<double> medians(bootstrap_resamples);
    for (double& m : medians) m = resample_median(sorted, rng, counts);
    std::sort(medians.begin(), medians.end());
    s.ci_low = percentile_sorted(medians, 0.025);
    s.ci_high = percentile_sorted(medians, 0.975);
  }
  return s;
}

double median_ci_half_width(std::vector<double> samples) {
  const std::size_t n = samples.size();
  if (n < 2) return std::numeric_limits<double>::max();
  std::sort(samples.begin(), samples.end());
  const double median = percentile_sorted(samples, 0.5);
  // Distribution-free interval: order statistics k and n - 1 - k, k = (n - 1.96 sqrt(n)) / 2.
  const double k = std::floor((static_cast<double>(n) - 1.96 * std::sqrt(static_cast<double>(n))) / 2.0);
  const auto lo = static_cast<std::size_t>(std::max(k, 0.0));
  const double half = (samples[n - 1 - lo] - samples[lo]) / 2.0;
  if (!(median > 0)) return half > 0 ? std::numeric_limits<double>::max() : 0.0;
  return half / median;
}

// The rule, in order (n = number of samples, "minimums" = n >= max(min_samples, 1) and
// sum(samples) >= min_time_s; max_samples == 0 means no cap):
//   1. minimums met: converged when rel_stdev <= max_noise or the median's CI half-width
//      (median_ci_half_width, relative) <= max_noise: samples that oscillate around a
//      certain median need not run to max_time_s; otherwise noisy once
//      elapsed_s >= max_time_s or n >= max_samples; otherwise keep going.
//   2. minimums not met: noisy once n >= max_samples (the cap always ends the loop), or once
//      elapsed_s >= max_time_s with n >= 2 (a point whose samples are slower than the budget
//      allows still ends, flagged noisy because its spread was never established). With
//      n < 2 the loop keeps going past max_time_s until a second sample exists, so every
//      stopped point has a standard deviation.
StopDecision evaluate_stop(const StoppingCriteria& criteria, const std::vector<double>& samples,
                           double elapsed_s) {
  const std::size_t n = samples.size();
  const bool capped = criteria.max_samples > 0 && n >= criteria.max_samples;
  const double total = std::accumulate(samples.begin(), samples.end(), 0.0);
  const bool minimums = n >= std::max<std::size_t>(criteria.min_samples, 1) &&
                        total >= criteria.min_time_s;
  if (minimums) {
    if (relative_stdev(samples) <= criteria.max_noise ||
        median_ci_half_width(samples) <= criteria.max_noise) {
      return StopDecision::converged;
    }
    if (elapsed_s >= criteria.max_time_s || capped) return StopDecision::noisy;
    return StopDecision::keep_going;
  }
  if (capped) return StopDecision::noisy;
  if (elapsed_s >= criteria.max_time_s && n >= 2) return StopDecision::noisy;
  return StopDecision::keep_going;
}

}  // namespace mgbench
