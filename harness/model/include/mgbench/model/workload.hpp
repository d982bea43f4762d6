#pragma once
// Workload declarations and the registry the benchmarks register with at link time.
//
//   MGBENCH_REGISTER_WORKLOAD(
//       mgbench::Workload("gemm")
//           .summary("Dense matrix multiply per GPU")
//           .axis(mgbench::Axis::text("dtype", {"fp32", "bf16"}).allowed({...}))
//           .throughput("tflops_aggregate", "TFLOP/s")
//           .present(mgbench::Presentation().metric(...).table(...).chart(...))
//           .runner(...));
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mgbench/core/macros.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/presentation.hpp"
#include "mgbench/model/work_cost.hpp"

namespace mgbench {

enum class Profile { quick, standard, full };
const char* to_string(Profile profile);
Profile profile_from_string(const std::string& text);  // throws UsageError
// The stopping rule of a profile (min samples, min and max time, noise target, max samples).
StoppingCriteria profile_stopping(Profile profile);

// What a workload measures, declared by the workload (`mgbench accept` picks its stages' workloads
// by it: the communication stage runs every `peer` and `collective` workload).
enum class WorkloadCategory { other, compute, memory, host_link, peer, collective, training };
const char* to_string(WorkloadCategory category);

enum class AxisKind { integer, size, text, boolean };

struct Axis {
  std::string name;
  AxisKind kind = AxisKind::text;
  std::string help;
  std::vector<std::string> standard_values;  // default values (strings as on the command line)
  std::vector<std::string> quick_values;     // empty: same as standard
  std::vector<std::string> full_values;      // empty: same as standard
  std::vector<std::string> allowed_values;   // empty: any value of the kind
  // Largest value of an integer or size axis; larger values are refused at planning time.
  // Every integer and size axis has one (kDefaultMaxInteger / kDefaultMaxSize unless declared).
  std::int64_t max_value = 0;

  static constexpr std::int64_t kDefaultMaxInteger = std::int64_t{1} << 20;
  static constexpr std::int64_t kDefaultMaxSize = std::int64_t{1} << 40;  // 1 TiB

  static Axis integer(std::string name, std::vector<std::string> values);
  static Axis size(std::string name, std::vector<std::string> values);
  static Axis text(std::string name, std::vector<std::string> values);
  static Axis boolean(std::string name, std::vector<std::string> values);
  Axis& describe(std::string text);
  Axis& quick(std::vector<std::string> values);
  Axis& full(std::vector<std::string> values);
  Axis& allowed(std::vector<std::string> values);
  Axis& at_most(std::int64_t max);

  const std::vector<std::string>& values_for(Profile profile) const;
  // Converts one command-line string into its typed value (the only place an axis value is
  // parsed); UsageError when invalid.
  ParamValue parse_value(const std::string& text) const;
};

// The value lists chosen for each axis (after profile and command-line overrides).
using AxisValues = std::map<std::string, std::vector<ParamValue>>;
// Turns axis values into point parameter sets. Default: the cartesian product.
using ExpandFn = std::function<std::vector<Params>(const AxisValues&)>;
// The same for a group of `gpus` GPUs, for points that depend on the group's size (a root rank,
// a size divided over the ranks).
using ExpandPerGpusFn = std::function<std::vector<Params>(const AxisValues&, int gpus)>;
// Why a point cannot run on `gpus` GPUs of nodes of `gpus_per_node` ("" when it can): the
// planner leaves it out of that GPU count's group, with a note (e.g. tensor parallelism that
// does not divide the heads).
using FitsFn = std::function<std::string(const Params& params, int gpus, int gpus_per_node)>;
// Run-level summary of one workload's finished points (e.g. the all-reduce busbw plateau
// per GPU count), stored in RunResult::summaries[workload].
using SummarizeFn = std::function<Json(const std::vector<PointResult>& points)>;
std::vector<Params> cartesian_product(const AxisValues& values);

class Workload {
 public:
  explicit Workload(std::string name);

  Workload& summary(std::string text);
  Workload& formulas(std::string text);      // what is measured, as in the file's header
  Workload& requirements(std::string text);  // e.g. "peer access between GPUs for impl=mgbench"
  // Further lines for `mgbench list` (e.g. the own kernels behind an impl, with versions).
  Workload& notes(std::vector<std::string> lines);
  Workload& axis(Axis axis);
  Workload& min_gpus(int n);
  Workload& category(WorkloadCategory category);
  // The metric (in PointResult::metrics) whose growth with GPU count is the scaling figure.
  Workload& throughput(std::string metric, std::string unit);
  // How reports show this workload (stored in results.json with every run that has its points).
  Workload& present(Presentation presentation);
  Workload& expand(ExpandFn fn);
  Workload& expand_per_gpus(ExpandPerGpusFn fn);
  Workload& fits(FitsFn fn);
  Workload& summarize(SummarizeFn fn);
  Workload& runner(GroupRunner fn);
  // Rough seconds one point takes at a profile (for --dry-run estimates).
  Workload& estimate_seconds_per_point(double seconds);
  // Power-bound workloads: warm up at least `warmup_s` before sampling, so that clocks have
  // settled at the power limit (unless --warmup is given), and time samples of at least
  // `sample_s`, so that the GPU idles between samples for a small share of the time only
  // (idle time lowers the average power and lets the clocks rise above their sustained level).
  Workload& sustained(double warmup_s, double sample_s);
  // The profiles whose default selection (a sweep without --workloads) includes it; default
  // every profile. Named with --workloads it runs in any profile.
  Workload& selected_by_default_in(std::vector<Profile> profiles);
  // What one op of a point is made of, for `mgbench predict` (model/work_cost.hpp).
  Workload& cost(CostFn fn);

  const std::string& name() const { return name_; }
  const std::string& summary() const { return summary_; }
  const std::string& formulas() const { return formulas_; }
  const std::string& requirements() const { return requirements_; }
  const std::vector<std::string>& notes() const { return notes_; }
  const std::vector<Axis>& axes() const { return axes_; }
  const Axis* find_axis(const std::string& name) const;
  int min_gpus() const { return min_gpus_; }
  WorkloadCategory category() const { return category_; }
  const std::string& throughput_metric() const { return throughput_metric_; }
  const std::string& throughput_unit() const { return throughput_unit_; }
  // The declared presentation; its headline is the throughput metric when not declared there.
  Presentation presentation() const;
  // The points of a group of `gpus` GPUs.
  std::vector<Params> expand_points(const AxisValues& values, int gpus = 1) const;
  // Why `params` cannot run on `gpus` GPUs ("" when it can; always "" without a fits function).
  std::string unfit(const Params& params, int gpus, int gpus_per_node) const;
  const GroupRunner& run() const { return runner_; }
  const SummarizeFn& summarizer() const { return summarize_; }
  double estimate_seconds_per_point() const { return estimate_s_; }
  double sustained_warmup() const { return sustained_warmup_s_; }
  double sustained_sample() const { return sustained_sample_s_; }
  bool selected_by_default(Profile profile) const;
  const CostFn& cost_model() const { return cost_; }

 private:
  std::string name_, summary_, formulas_, requirements_;
  std::vector<std::string> notes_;
  std::vector<Axis> axes_;
  int min_gpus_ = 1;
  WorkloadCategory category_ = WorkloadCategory::other;
  std::string throughput_metric_, throughput_unit_;
  Presentation presentation_;
  ExpandFn expand_;
  ExpandPerGpusFn expand_per_gpus_;
  FitsFn fits_;
  SummarizeFn summarize_;
  GroupRunner runner_;
  double estimate_s_ = 2.0;
  double sustained_warmup_s_ = 0;
  double sustained_sample_s_ = 0;
  std::vector<Profile> default_profiles_{Profile::quick, Profile::standard, Profile::full};
  CostFn cost_;
};

// All registered workloads, sorted by name.
const std::vector<Workload>& workloads();
const Workload* find_workload(const std::string& name);
bool register_workload(Workload workload);
// The settings a group of `workload` runs with: the sweep's, with the workload's sustained
// warm-up (unless --warmup fixed it) and sample length as minimums.
RunSettings settings_for_workload(RunSettings settings, const std::string& workload);

}  // namespace mgbench

#define MGBENCH_REGISTER_WORKLOAD(decl) \
  static const bool MGBENCH_CONCAT(mgbench_workload_registered_, __LINE__) = \
      ::mgbench::register_workload(decl)
