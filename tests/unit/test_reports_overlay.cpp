// The overlay chart kind (ChartSpec::overlay): one metric of every workload of the run that
// declares the same overlay and unit, on one chart per GPU count (and split value), drawn once in
// the first such workload's section, never for a workload alone.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/presentation.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/charts.hpp"

namespace mr = mgbench::reports;
using mgbench::ChartSpec;
using mgbench::Json;
using mgbench::MetricSpec;
using mgbench::Presentation;

namespace {

Presentation overlay_presentation(const std::string& unit, const std::string& id = "bw") {
  return Presentation()
      .metric(MetricSpec("busbw_GBps", "busbw", unit))
      .axis(mgbench::AxisSpec("bytes", "message size").format(mgbench::ValueFormat::bytes).log2())
      .chart(ChartSpec::overlay(id, "busbw_GBps").titled("busbw of every collective").split_by(
          {"dtype"}));
}

void add_points(mgbench::RunResult& run, const std::string& workload, int gpus, double scale,
                const std::string& dtype = "fp32") {
  for (std::uint64_t bytes : {1024ull, 1048576ull, 1073741824ull}) {
    mgbench::PointResult p;
    p.index = run.points.size();
    p.workload = workload;
    p.gpus = gpus;
    p.status = mgbench::Status::ok;
    p.params = mgbench::Params{{"bytes", bytes}, {"dtype", dtype}};
    p.metrics = Json{{"busbw_GBps", scale * static_cast<double>(bytes) / 1e7}};
    run.points.push_back(p);
  }
}

std::vector<mr::ChartEntry> overlays(const mgbench::RunResult& run) {
  std::vector<mr::ChartEntry> out;
  for (const auto& c : mr::build_charts(run)) {
    if (c.kind == "bw") out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("overlay: one chart per GPU count, a line per workload, in the first one's section",
          "[reports][charts]") {
  mgbench::RunResult run;
  run.presentation["allgather"] = overlay_presentation("GB/s");
  run.presentation["broadcast"] = overlay_presentation("GB/s");
  add_points(run, "allgather", 2, 1.0);
  add_points(run, "broadcast", 2, 2.0);
  add_points(run, "allgather", 8, 1.5);
  add_points(run, "broadcast", 8, 2.5);
  const auto charts = overlays(run);
  REQUIRE(charts.size() == 2);  // 2 GPUs and 8 GPUs
  for (const auto& c : charts) {
    INFO(c.id);
    CHECK(c.section == "allgather");
    CHECK(c.title == "busbw of every collective");
    CHECK(c.svg.find(">allgather<") != std::string::npos);
    CHECK(c.svg.find(">broadcast<") != std::string::npos);
  }
  CHECK(charts[0].svg.find("2 GPUs") != std::string::npos);
  CHECK(charts[1].svg.find("8 GPUs") != std::string::npos);
}

TEST_CASE("overlay: not drawn for a workload alone, nor across units or ids",
          "[reports][charts]") {
  mgbench::RunResult run;
  run.presentation["allgather"] = overlay_presentation("GB/s");
  run.presentation["membw"] = overlay_presentation("TFLOP/s");   // another unit
  run.presentation["reduce"] = overlay_presentation("GB/s", "other");  // another overlay
  add_points(run, "allgather", 2, 1.0);
  add_points(run, "membw", 2, 1.0);
  add_points(run, "reduce", 2, 1.0);
  CHECK(overlays(run).empty());
  for (const auto& c : mr::build_charts(run)) CHECK(c.kind != "other");
  // A second GB/s member at another GPU count only: still no GPU count with two workloads.
  run.presentation["sendrecv"] = overlay_presentation("GB/s");
  add_points(run, "sendrecv", 4, 1.0);
  CHECK(overlays(run).empty());
  add_points(run, "sendrecv", 2, 3.0);
  REQUIRE(overlays(run).size() == 1);
}

TEST_CASE("overlay: split values get charts of their own, a varying parameter its own lines",
          "[reports][charts]") {
  mgbench::RunResult run;
  run.presentation["allgather"] = overlay_presentation("GB/s");
  run.presentation["allreduce"] = overlay_presentation("GB/s");
  add_points(run, "allgather", 4, 1.0, "fp32");
  add_points(run, "allgather", 4, 1.0, "bf16");
  add_points(run, "allreduce", 4, 2.0, "fp32");
  add_points(run, "allreduce", 4, 2.0, "bf16");
  for (auto& p : run.points) {
    if (p.workload == "allreduce" && p.params.text("dtype") == "fp32") p.params.set("impl", "nccl");
  }
  add_points(run, "allreduce", 4, 1.8, "fp32");
  for (std::size_t i = run.points.size() - 3; i < run.points.size(); ++i) {
    run.points[i].params.set("impl", "mgbench");
  }
  const auto charts = overlays(run);
  REQUIRE(charts.size() == 2);  // fp32 and bf16 on 4 GPUs
  CHECK(charts[0].section == "allgather");  // allgather comes first in the run
  const std::string& fp32 = charts[0].svg.find("fp32") != std::string::npos ? charts[0].svg
                                                                              : charts[1].svg;
  CHECK(fp32.find("allreduce · nccl") != std::string::npos);
  CHECK(fp32.find("allreduce · mgbench") != std::string::npos);
  CHECK(fp32.find(">allgather<") != std::string::npos);
}

TEST_CASE("overlay charts survive the presentation's JSON round trip", "[reports][charts]") {
  Json j = overlay_presentation("GB/s");
  const auto back = j.get<Presentation>();
  REQUIRE(back.charts.size() == 1);
  CHECK(back.charts[0].kind == mgbench::ChartKind::overlay);
  CHECK(back.charts[0].id == "bw");
  CHECK(back.charts[0].metric == "busbw_GBps");
  CHECK(back.charts[0].split_by_ == std::vector<std::string>{"dtype"});
  CHECK(j["charts"][0]["kind"] == "overlay");
}
