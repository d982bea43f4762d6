#pragma once
// Internal to the run report's charts: the chart list (unique ids), axis and series helpers
// shared by the scaling, point and telemetry charts.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/svg.hpp"

namespace mgbench::reports::detail {

using Points = std::vector<const PointResult*>;
using YFn = std::function<std::optional<double>(const PointResult&)>;

class ChartList {
 public:
  std::vector<ChartEntry> entries;

  void add(const std::string& section, const std::string& kind, svg::LineChart chart,
           const std::string& key = "");
  void add(const std::string& section, const std::string& kind, svg::StackedBarChart chart,
           const std::string& key = "");

 private:
  // "copy-scaling-pinned-size-4096": section, kind and a distinguishing key, at most 64
  // characters, unique.
  std::string make_id(const std::string& section, const std::string& kind,
                      const std::string& key);
  std::set<std::string> used_;
};

svg::Axis make_axis(std::string label, svg::Scale scale, svg::TickFormat format);
// The svg axis of a presentation axis over the values `xs` (automatic: log2 from a 3x span).
svg::Axis x_axis_for(const AxisSpec& axis, const std::string& label, const std::vector<double>& xs);
svg::Scale scale_of(AxisScale scale, const std::vector<double>& xs);

// "1 GPU · fp32": the GPU count (when `with_gpus`) and the `keys` of the point.
std::string series_name(const PointResult& p, const std::vector<std::string>& keys,
                        bool with_gpus);
// Groups points into series keyed by (GPU count when `with_gpus`, `keys`), x from the
// parameter `x_key`, y from `y`; points where y is missing are left out.
std::vector<svg::Series> make_series(const Points& points, const std::string& x_key,
                                     const std::vector<std::string>& keys, bool with_gpus,
                                     const YFn& y, const std::string& x_word);
bool gpus_vary(const Points& points);
Points ok_points(const Points& points);
std::vector<double> x_values(const Points& points, const std::string& key);
std::vector<std::string> without(std::vector<std::string> keys, const std::set<std::string>& drop);
// Splits points by the values of `keys` (one chart each), in order of appearance.
std::vector<std::pair<std::string, Points>> split_by(const Points& points,
                                                     const std::vector<std::string>& keys);

// The x axis of a chart: the declared one, else the first declared axis that varies.
std::optional<AxisSpec> x_axis_of(const Presentation& presentation, const ChartSpec& spec,
                                  const Points& points);
// The axis label: `equal_label` when every companion equals the axis value in every point.
std::string axis_label(const AxisSpec& axis, const Points& points);

// The charts of one kind.
// `prediction`: its efficiency drawn dashed beside each measured series it predicts.
void scaling_charts(const RunResult& run, const std::string& workload,
                    const Presentation& presentation, ChartList& charts,
                    const Prediction* prediction = nullptr);
// The predicted efficiency of a measured series (in %, dashed, named `name`, in `colour`): the
// rows of the prediction's series of the same workload and parameters; nullopt when the
// prediction has none or the series is not scaled against one GPU (predictions are).
std::optional<svg::Series> predicted_efficiency(const Prediction& prediction,
                                                const ScalingSeries& series,
                                                const std::string& name, int colour);
// Line charts that share their split parameters: per split value, one chart per spec.
void line_charts(const RunResult& run, const std::string& workload,
                 const Presentation& presentation, const std::vector<const ChartSpec*>& specs,
                 ChartList& charts);
void memory_charts(const RunResult& run, const std::string& workload,
                   const Presentation& presentation, const ChartSpec& spec, ChartList& charts);
void breakdown_charts(const RunResult& run, const std::string& workload,
                      const Presentation& presentation, const ChartSpec& spec, ChartList& charts);
void telemetry_charts(const RunResult& run, ChartList& charts);
// ChartSpec::overlay: `spec.metric` of every workload of the run that declares the same overlay,
// one chart per GPU count, in the section of the first of them (nothing in the others').
void overlay_charts(const RunResult& run, const std::string& workload, const ChartSpec& spec,
                    ChartList& charts);
// ChartSpec::timeseries: `spec.metric` of every GPU of the run's time windows against time.
void timeseries_charts(const RunResult& run, const std::string& workload, const ChartSpec& spec,
                       ChartList& charts);

}  // namespace mgbench::reports::detail
