#pragma once
// Sample statistics and the per-point stopping rule (docs/ARCHITECTURE.md, "The life of one point").
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mgbench {

struct Statistics {
  std::size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0;
  double stdev = 0;      // sample standard deviation (n - 1)
  double rel_stdev = 0;  // stdev / mean
  double p05 = 0, p95 = 0;          // linear interpolation between order statistics
  double ci_low = 0, ci_high = 0;   // bootstrap 95 % CI of the median (percentile method)
};

// Percentile q in [0, 1] of sorted values, linear interpolation (type 7, as numpy's default).
double percentile_sorted(const std::vector<double>& sorted, double q);
double median_of(std::vector<double> values);  // of the finite values
// Deterministic for a given seed. Empty input gives n = 0 and zeros. Non-finite samples are
// left out (n counts the finite ones); the caller rejects such a point (reject_non_finite).
// rel_stdev of a zero mean with spread is the largest finite double, never infinity.
Statistics compute_statistics(const std::vector<double>& samples, std::size_t bootstrap_resamples = 1000,
                              std::uint64_t seed = 0x6d676265ULL);
double relative_stdev(const std::vector<double>& samples);
// Half-width of a distribution-free 95 % CI of the median (order statistics), relative to the
// median: cheap enough for the stopping rule after every sample. The point's `noisy` flag uses
// the bootstrap CI of compute_statistics (point_quality.hpp).
double median_ci_half_width(std::vector<double> samples);

struct StoppingCriteria {
  std::size_t min_samples = 10;
  double min_time_s = 0.5;     // measured time (sum of samples) before convergence may stop it
  double max_time_s = 5.0;     // wall time of the sampling loop before giving up (noisy)
  double max_noise = 0.005;    // target for the relative stdev or the median's CI half-width
  std::size_t max_samples = 100000;
};

enum class StopDecision { keep_going, converged, noisy };

// `elapsed_s` is the wall time spent sampling this point so far.
StopDecision evaluate_stop(const StoppingCriteria& criteria, const std::vector<double>& samples,
                           double elapsed_s);

}  // namespace mgbench
