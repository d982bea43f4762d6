#pragma once
// `mgbench compare`: the regression gate between two runs, and the side-by-side comparison of
// several offers (cloud A vs cloud B vs bare metal). Rendering lives in reports/
// (mgbench/reports/compare_render.hpp); this header is the logic and the JSON form.
//
// Verdict of one matched point (both runs `ok`):
//   noisy   the point was flagged noisy, or throttled (a GPU's throttle fraction above
//           CompareOptions::throttle_limit, or a thermal / power-brake / HW-slowdown reason),
//           in either run; also when a run kept no raw samples. Never `slower`. Time at the
//           software power cap alone does not count unless power_cap_throttles (--strict-
//           throttle): see unreliable_reason().
//   slower  two-sided Mann-Whitney U on the raw sample times p < alpha AND the median of the
//           compared quantity moved by at least the point's threshold in the bad direction
//           (and both agree on the direction).
//   faster  the same in the good direction.
//   same    otherwise.
// The compared quantity is the workload's headline metric, from the runs' presentation (its
// better direction) when both points carry it with a positive value, else the median time per
// op (lower is better).
// The samples are times either way; the rank test is the same for times and throughputs.
//
// Threshold per point: max(threshold, noise_k * noise), where noise is the run-to-run noise
// of that point estimated from --baseline runs: the relative standard deviation (n - 1) of
// the point's medians over BASE and the baseline runs (at least two runs must hold it).
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "mgbench/analysis/mann_whitney.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

enum class Verdict { same, faster, slower, noisy };
const char* to_string(Verdict verdict);

struct CompareOptions {
  double threshold = 0.03;           // minimum effect on the median (fraction, 0.03 = 3 %)
  double alpha = 0.05;               // significance level of the two-sided rank test
  double noise_k = 3.0;              // threshold = max(threshold, noise_k * baseline noise)
  double throttle_limit = 0.05;      // a GPU throttled longer than this fraction -> noisy
  bool power_cap_throttles = false;  // count time at the software power cap as throttled
  bool env_all = false;              // environment diff: keep volatile fields (times, serials...)
  bool env_hostname = false;         // environment diff: show a changed host name
  // workload -> metric name compared (overrides the headline; "" compares time).
  std::map<std::string, std::string> metrics;
  // workload -> headline metric of the runs' presentation (presentation_for; the first run that
  // has one wins). compare_runs, estimate_noise, efficiencies and compare_offers add
  // those of their runs (with_headlines).
  std::map<std::string, MetricSpec> headlines;
};

// `options` plus the headline metric of every workload of `runs` not yet in options.headlines.
CompareOptions with_headlines(CompareOptions options, const std::vector<const RunResult*>& runs);

// ---- environment diff ----------------------------------------------------------------------

struct EnvChange {
  std::string path;    // "driver_version", "gpus[*].vbios", "host.kernel"...
  std::string before;  // "(absent)" when missing on that side
  std::string after;
  int rank = 0;   // lower = more important (printed first)
  int count = 1;  // array entries folded into this one ("gpus[*]...")
};

// Changed scalar leaves of two environment documents, most important first. Array elements
// that changed the same way on every index are folded into one "[*]" entry.
std::vector<EnvChange> diff_environment(const Json& before, const Json& after,
                                        const CompareOptions& options = {});
// diff_environment of RunResult::environment plus the tool version and git revision.
std::vector<EnvChange> diff_runs(const RunResult& before, const RunResult& after,
                                 const CompareOptions& options = {});

// ---- per-point analysis --------------------------------------------------------------------

// What is compared for a workload: metric name, unit and direction.
struct Quantity {
  std::string metric;  // "" = median time per op (seconds)
  std::string unit;    // "s" for time
  bool higher_is_better = false;
};
Quantity quantity_for(const std::string& workload, const CompareOptions& options);
// The point's value of `quantity` (metric value, or median time); nullopt when absent.
std::optional<double> quantity_value(const PointResult& point, const Quantity& quantity);

// Non-empty when the point must not be judged: "noisy", "throttled 12.0 % of the time on
// GPU 0", "hw_thermal on GPU 1"... `limit` is the throttle-fraction limit. A throttle fraction
// caused by the software power cap alone (reasons seen: sw_power_cap and nothing severe)
// counts only with `power_cap_throttles`: a GPU at its power limit is in its normal steady
// state, and a changed power limit shows in the environment diff.
std::string unreliable_reason(const PointResult& point, double limit,
                              bool power_cap_throttles = false);

// Run-to-run noise per point key (relative stdev of the medians of the compared quantity).
struct NoiseEstimate {
  double relative = 0;
  int runs = 0;
};
using NoiseMap = std::map<std::string, NoiseEstimate>;
NoiseMap estimate_noise(const std::vector<const RunResult*>& runs,
                        const CompareOptions& options = {});

// One part of a step-time breakdown in both runs (the presentation's breakdown chart: its parts
// and the remainder of the total), in seconds.
struct PartChange {
  std::string label;  // "exposed communication", "compute" (the remainder)
  double base_s = 0, new_s = 0;
};

struct PointComparison {
  std::string key;  // point_key()
  std::string workload;
  Params params;
  int gpus = 1;
  std::vector<int> base_devices, new_devices;
  Quantity quantity;
  double base_value = 0, new_value = 0;   // compared quantity (median)
  double change = 0;                      // new_value / base_value - 1
  double threshold = 0;                   // applied to this point (fraction)
  std::optional<NoiseEstimate> noise;     // from --baseline runs
  std::optional<MannWhitneyResult> test;  // absent without raw samples
  Verdict verdict = Verdict::same;
  std::string reason;  // why this verdict, in words
  // The compared metric as a share of each side's hardware peak (analysis/peaks.hpp).
  std::optional<double> base_of_peak, new_of_peak;
  // Which part of the step changed: every part of the workload's breakdown chart when both
  // points carry its total (empty otherwise).
  std::vector<PartChange> parts;
};

// "step +0.62 ms (+15.5 %): exposed communication +0.60 ms, compute +0.02 ms, ...; most of the
// change is in exposed communication" ("" without parts).
std::string parts_change_text(const PointComparison& point);
// The parts of `presentation`'s breakdown chart in both points (PointComparison::parts).
std::vector<PartChange> step_parts(const PointResult& base, const PointResult& next,
                                   const Presentation& presentation);

// A point present on both sides but not `ok` on at least one.
struct NotCompared {
  std::string key, workload;
  Params params;
  int gpus = 1;
  Status base_status = Status::ok, new_status = Status::ok;
  std::string message;
};

struct UnmatchedPoint {
  std::string key, workload;
  Params params;
  int gpus = 1;
  Status status = Status::ok;
};

// Scaling efficiency of one (workload, params, GPU count) in both runs.
struct EfficiencyRow {
  std::string workload;
  Params params;
  int gpus = 1;
  std::optional<double> base, next;
};

struct Comparison {
  std::string base_label, new_label;
  std::string base_path, new_path;
  CompareOptions options;
  std::vector<EnvChange> environment;
  bool fingerprint_differs = false;  // environment.fingerprint_hash present and different
  std::string hooks_differ;          // non-empty (in words) when environment.test_hooks differ
  // Matched points whose extra.implementation (the code that ran, e.g. an own kernel and its
  // version) differs, as "<point key>: <name> v<N> -> <name> v<M>": a changed number there is
  // not evidence of a driver change.
  std::vector<std::string> implementation_changes;
  std::vector<PointComparison> points;
  std::vector<NotCompared> not_compared;
  std::vector<UnmatchedPoint> only_in_base, only_in_new;
  std::vector<EfficiencyRow> efficiency;

  int count(Verdict verdict) const;
  bool any_slower() const { return count(Verdict::slower) > 0; }
};

// Throws Error(ExitCode::inconclusive) when no point matches at all ("nothing matched"), or
// when no matched point is `ok` in both runs (nothing could be judged: a gate must not pass
// silently).
Comparison compare_runs(const RunResult& base, const RunResult& next,
                        const CompareOptions& options = {}, const NoiseMap* noise = nullptr);
// "" when the runs' environment.test_hooks agree, else why no regression may be called.
std::string hooks_difference(const RunResult& base, const RunResult& next);
// Why the gate cannot conclude, "" when it can: every compared point noisy, or a slower point
// between runs with different test hooks.
std::string inconclusive_reason(const Comparison& comparison);
// 5 (ExitCode::inconclusive) when inconclusive_reason() says so, else 1 (ExitCode::regression)
// when any point is slower, else 0.
int comparison_exit_code(const Comparison& comparison);
Json comparison_to_json(const Comparison& comparison);

// Scaling efficiency per "workload|params|gpus" key: from RunResult::scaling rows when they
// carry one, else X(N) / (N X(1)) of the throughput metric (needs a 1-GPU point).
std::map<std::string, double> efficiencies(const RunResult& run,
                                           const CompareOptions& options = {});
std::string efficiency_key(const std::string& workload, const Params& params, int gpus);

// ---- offer comparison ----------------------------------------------------------------------
// Per dollar: throughput / (price per GPU-hour x GPUs), i.e. "<unit> per $/h" (e.g. TFLOP/s
// per $/h: the throughput one dollar per hour of rented GPUs buys). Neither per dollar nor per
// watt for a quantity that does not add across GPUs (OfferTable::per_gpu_quantity).
// Per watt: the point's "<metric>_per_watt" metric when present, else throughput divided by
// the sum over the point's GPUs of the average power (telemetry gpus[].avg_power_w).

struct Prediction;  // analysis/prediction.hpp

// An offer's prediction at a GPU count (`compare --predict-gpus`): `prediction` from its own
// results and links, or nullptr with `why` it has none. Given to compare_offers (one per offer,
// in input order), it adds a predicted row per parameter set (OfferRow::predicted).
struct OfferPrediction {
  int gpus = 1;
  const Prediction* prediction = nullptr;
  std::string why;
};

struct Offer {
  std::string label;
  std::string path;
  const RunResult* run = nullptr;
  std::optional<double> price_per_gpu_hour;  // USD
};

struct OfferSummary {
  std::string label, path, host;
  std::string gpu_model;  // "NVIDIA H200" ("A x4 + B x4" when mixed)
  // GPUs of the submitting host (environment.gpus[]) or, when the points ran on more GPUs
  // (across nodes), the most GPUs a point ran on; `nodes` the most nodes a point ran on.
  int gpu_count = 0;
  int nodes = 1;
  std::string interconnect;  // "NVLink (18 links/GPU)", "PCIe Gen5 x16", "unknown"
  std::string driver, cuda, nccl;
  std::string platform;  // "bare metal", "VM (kvm)", "unknown"
  std::optional<double> price_per_gpu_hour;
};

struct OfferCell {
  bool present = false;  // the offer has this point
  Status status = Status::ok;
  bool unreliable = false;  // noisy or throttled
  std::optional<double> throughput, efficiency, per_watt, per_dollar;
};

// The best offer of a row for one figure: `offer` is its index, -1 unless at least two offers
// have a value. Offers within CompareOptions::threshold of the best value are a tie: `tied`
// lists them all (best first), and no single best is named.
struct BestOffer {
  int offer = -1;
  std::vector<int> tied;
  bool tie() const { return tied.size() > 1; }
};

struct OfferRow {
  Params params;
  int gpus = 1;
  // 1-GPU rows of a configuration measured on several GPUs alone (--baseline each): one row
  // per device, matched across offers by device; empty otherwise.
  std::vector<int> devices;
  std::vector<OfferCell> cells;  // one per offer, in input order
  BestOffer best_throughput, best_per_watt, best_per_dollar;
  // Every cell predicted (OfferPrediction): throughput (or time), efficiency and per dollar of
  // each offer's prediction at `gpus`, after the measured rows of the same parameters.
  bool predicted = false;
};

struct OfferTable {
  std::string workload;
  Quantity quantity;
  std::vector<OfferRow> rows;
  // The quantity is per GPU and does not add across GPUs (a collective's bus bandwidth: no
  // offer has it on one GPU): no per-watt or per-dollar figure.
  bool per_gpu_quantity = false;
};

struct OfferComparison {
  std::vector<OfferSummary> offers;
  std::vector<OfferTable> tables;
  double tie_margin = 0.03;  // CompareOptions::threshold: offers this close tie (BestOffer)
  std::optional<int> predicted_gpus;     // the GPU count of the predicted rows, when asked
  std::vector<std::string> not_predicted;  // "LABEL: why", per offer without a prediction
};

OfferComparison compare_offers(const std::vector<Offer>& offers,
                               const CompareOptions& options = {},
                               const std::vector<OfferPrediction>& predicted = {});
OfferSummary summarize_offer(const Offer& offer);
Json offers_to_json(const OfferComparison& comparison);

}  // namespace mgbench
