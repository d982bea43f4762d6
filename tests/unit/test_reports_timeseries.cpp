// ChartSpec::timeseries: the windows of a run drawn against time, one line per GPU, throttled
// spans shaded; nothing without windows; the chart kind survives results.json.
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/charts.hpp"

namespace {

mgbench::RunResult windowed_run() {
  mgbench::RunResult run;
  mgbench::Json windows = mgbench::Json::array();
  for (int i = 0; i < 6; ++i) {
    mgbench::Json gpus = mgbench::Json::array();
    for (int d = 0; d < 2; ++d) {
      gpus.push_back({{"device", d}, {"throughput", 100.0 - i}, {"temp_c", 60.0 + i + d}});
    }
    windows.push_back({{"index", i}, {"t_start_s", 10.0 * i}, {"t_end_s", 10.0 * (i + 1)},
                       {"gpus", gpus}});
  }
  run.soak = {{"windows", windows},
              {"analysis",
               {{"throttled_spans", mgbench::Json::array({{{"t_start_s", 20.0},
                                                          {"t_end_s", 40.0}}})}}}};
  run.presentation["load"] =
      mgbench::Presentation()
          .chart(mgbench::ChartSpec::timeseries("over-time", "throughput").titled("rate over time"))
          .chart(mgbench::ChartSpec::timeseries("temp", "temp_c").y_axis("temperature (°C)"));
  mgbench::PointResult p;
  p.workload = "load";
  run.points.push_back(p);
  return run;
}

}  // namespace

TEST_CASE("time-series charts draw one line per GPU with the throttled spans shaded") {
  const auto charts = mgbench::reports::build_charts(windowed_run());
  int found = 0;
  for (const auto& c : charts) {
    if (c.kind != "over-time" && c.kind != "temp") continue;
    ++found;
    CHECK(c.section == "load");
    CHECK(c.svg.find("class=\"bands\"") != std::string::npos);
    CHECK(c.svg.find("GPU 0") != std::string::npos);
    CHECK(c.svg.find("GPU 1") != std::string::npos);
    CHECK(c.svg.find("time (s)") != std::string::npos);
  }
  CHECK(found == 2);
}

TEST_CASE("time-series charts need windows") {
  auto run = windowed_run();
  run.soak = nullptr;
  for (const auto& c : mgbench::reports::build_charts(run)) CHECK(c.kind != "over-time");
}

TEST_CASE("the timeseries chart kind round-trips through JSON") {
  const mgbench::Json j = windowed_run().presentation.at("load");
  const auto back = j.get<mgbench::Presentation>();
  REQUIRE(back.charts.size() == 2);
  CHECK(back.charts[0].kind == mgbench::ChartKind::timeseries);
  CHECK(back.charts[0].metric == "throughput");
  CHECK(back.charts[1].y_label == "temperature (°C)");
}
