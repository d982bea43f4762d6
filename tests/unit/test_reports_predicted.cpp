// `report --predict`: the predicted efficiency drawn dashed beside each measured scaling series
// (reports/src/charts_scaling.cpp), from the prediction of analysis/prediction.hpp; nothing of
// it without a prediction, and none for series a prediction does not describe.
#include <string>

#include "../../reports/src/chart_common.hpp"
#include "catch_compat.hpp"
#include "mgbench/analysis/prediction.hpp"
#include "work_costs.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/run/sweep.hpp"

using namespace mgbench;

namespace {

RunResult scenario(const std::string& name) {
  RunResult run = load_results(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/scenarios/" +
                               name + ".json");
  refresh_derived(run);
  return run;
}

std::optional<WorkCost> bench_cost(const PointResult& p) {
  if (p.workload == "allreduce") return bench::allreduce_cost(p.params);
  if (p.workload == "train_step") return bench::train_step_cost(p.params);
  return std::nullopt;
}

// What `report --predict` predicts: the series' GPU counts and the next power of two, on nodes
// the size of the run's.
Prediction report_prediction(const RunResult& run) {
  PredictOptions o;
  o.gpus_per_node = gpus_per_node_of(run);
  o.gpu_counts = series_gpu_counts(run, o.gpus_per_node);
  return predict(run, o, bench_cost);
}

const ScalingSeries& series_of(const RunResult& run, const std::string& workload) {
  for (const auto& s : run.scaling) {
    if (s.workload == workload) return s;
  }
  FAIL("no scaling series of " << workload);
  throw std::logic_error("unreachable");
}

const PredictedSeries& predicted_of(const Prediction& p, const std::string& workload) {
  for (const auto& s : p.series) {
    if (s.workload == workload) return s;
  }
  FAIL("no predicted series of " << workload);
  throw std::logic_error("unreachable");
}

std::string efficiency_svg(const std::vector<reports::ChartEntry>& charts) {
  for (const auto& c : charts) {
    if (c.section == "train_step" && c.kind == "efficiency") return c.svg;
  }
  FAIL("no train_step efficiency chart");
  return "";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report --predict: GPU counts are the series' and the next power of two",
          "[reports][predict]") {
  const RunResult run = scenario("hgx-nvlink");
  CHECK(gpus_per_node_of(run) == 8);
  CHECK(series_gpu_counts(run, 8) == std::vector<int>{1, 2, 4, 8, 16});
  // 16 does not fill nodes of 6: left out, as counts above the node that do not fill nodes.
  CHECK(series_gpu_counts(run, 6) == std::vector<int>{1, 2, 4});
  CHECK(series_gpu_counts(RunResult{}, 8).empty());
}

TEST_CASE("report --predict: the dashed series holds predict's efficiencies, first to last",
          "[reports][predict]") {
  const RunResult run = scenario("hgx-nvlink");
  const Prediction prediction = report_prediction(run);
  const PredictedSeries& expected = predicted_of(prediction, "train_step");
  const auto drawn =
      reports::detail::predicted_efficiency(prediction, series_of(run, "train_step"), "p", 2);
  REQUIRE(drawn);
  CHECK(drawn->line == reports::svg::LineStyle::dashed);
  CHECK(drawn->colour == 2);
  REQUIRE(drawn->x.size() == expected.rows.size());
  REQUIRE(drawn->x.size() == 5);
  CHECK(drawn->x.front() == 1);
  CHECK(drawn->y.front() == Approx(*expected.rows.front().efficiency * 100));
  CHECK(drawn->x.back() == 16);  // beyond the largest measured count (8)
  CHECK(drawn->y.back() == Approx(*expected.rows.back().efficiency * 100));
  CHECK(drawn->y.back() < drawn->y[1]);
}

TEST_CASE("report --predict: the efficiency chart draws 'predicted' only when asked",
          "[reports][predict]") {
  const RunResult run = scenario("hgx-nvlink");
  const Prediction prediction = report_prediction(run);
  const std::string with = efficiency_svg(reports::build_charts(run, &prediction));
  const std::string without = efficiency_svg(reports::build_charts(run));
  REQUIRE(count(with, "data-name=\"weak (predicted)\"") == 1);
  const auto group = with.find("data-name=\"weak (predicted)\"");
  const std::string drawn = with.substr(group, with.find("</g>", group) - group);
  CHECK(count(drawn, "stroke-dasharray=\"7 4\"") == 1);  // the line, dashed
  CHECK(count(drawn, "<title>weak (predicted): ") == 5);  // a marker per GPU count
  CHECK(with.find("dashed: predicted (nvlink4, ib-ndr, 8 GPUs/node)") != std::string::npos);
  CHECK(count(without, "stroke-dasharray=\"7 4\"") == 0);
  CHECK(without.find("predicted") == std::string::npos);
}

TEST_CASE("report --predict: no dashed line where the prediction does not describe the series",
          "[reports][predict]") {
  // Strong scaling: the series keeps the global batch, a prediction the per-GPU batch.
  const RunResult strong = scenario("nvlink-strong");
  const Prediction p = report_prediction(strong);
  CHECK_FALSE(reports::detail::predicted_efficiency(p, series_of(strong, "train_step"), "p", 0));
  // A series scaled against 2 GPUs (its 1-GPU point failed): predictions are against one.
  const RunResult failed = scenario("failed-baseline");
  const ScalingSeries& s = series_of(failed, "train_step");
  REQUIRE(s.baseline_gpus == 2);
  Prediction any;
  PredictedSeries same;
  same.workload = s.workload;
  same.params = s.params;
  same.rows.push_back(PredictedRow{});
  same.rows.back().efficiency = 1.0;
  any.series.push_back(same);
  CHECK_FALSE(reports::detail::predicted_efficiency(any, s, "p", 0));
}
