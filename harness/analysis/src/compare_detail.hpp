#pragma once
// Helpers shared by the comparison's source files (compare*.cpp, offers.cpp): text matching,
// number formatting, JSON look-ups, the telemetry walk and the scaling efficiencies of a run.
// Private to the analysis library.
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/mann_whitney.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::compare_detail {

// ---- text ----------------------------------------------------------------------------------

std::string lower(std::string text);
bool contains(const std::string& text, const char* part);
bool starts_with(const std::string& text, const char* prefix);
bool ends_with(const std::string& text, const std::string& suffix);
std::string format_percent(double fraction);  // "3.0 %"
std::string format_p(double p);

// ---- JSON ----------------------------------------------------------------------------------

// The first of `keys` holding a non-empty string (or a number, as text); "" when none.
std::string find_string(const Json& object, std::initializer_list<const char*> keys);
Json optional_json(const std::optional<double>& value);
Json quantity_json(const Quantity& q);
Json test_json(const std::optional<MannWhitneyResult>& test);

// ---- telemetry walking ---------------------------------------------------------------------

// The per-GPU entries of a point's telemetry summary: telemetry.gpus[], a bare array, or the
// object itself (their figures: read_gpu_telemetry, model/point_view.hpp).
std::vector<const Json*> telemetry_gpus(const Json& telemetry);
std::string gpu_label(const Json& gpu, std::size_t index);
bool is_severe_reason(const std::string& name);
// Severe throttle reasons named anywhere under a "...reason..." key: strings, arrays of
// strings, or objects whose keys are reasons with a truthy / non-zero value.
void collect_severe_reasons(const Json& node, bool under_reason, std::set<std::string>& out);

// ---- efficiencies --------------------------------------------------------------------------

struct EffEntry {
  std::string workload;
  Params params;
  int gpus = 1;
  double value = 0;
  std::optional<std::size_t> point_index;  // PointResult::index behind a scaling row
};

// The run's scaling rows, plus X(N) / (N X(1)) for workloads without rows.
std::vector<EffEntry> collect_efficiencies(const RunResult& run, const CompareOptions& options);
// The efficiency of a point: the scaling row that names it, else the row with its params.
// The entries hashed by point index and by configuration, looked up by point_efficiency.
struct EffIndex {
  std::unordered_map<std::string, double> by_point;   // workload|index|gpus
  std::unordered_map<std::string, double> by_config;  // efficiency_key
};
EffIndex index_efficiencies(const std::vector<EffEntry>& entries);
std::optional<double> point_efficiency(const EffIndex& index, const PointResult& p);
// Efficiency side by side for every multi-GPU configuration either run has.
std::vector<EfficiencyRow> efficiency_rows(const RunResult& base, const RunResult& next,
                                           const CompareOptions& options);

}  // namespace mgbench::compare_detail
