// Every string from a results file is escaped: hostile host names, GPU names, parameters,
// messages, verdicts and doctor findings render as text in HTML, SVG, Markdown and CSV.
#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/model/results.hpp"

namespace {

const std::string kScript = "<script>alert(1)</script>";
const std::string kImg = "\"><img src=x onerror=alert(2)>";
const std::string kSvgBreak = "</svg><script>alert(3)</script>";

mgbench::PointResult hostile_point(std::size_t index, int gpus, double tflops) {
  mgbench::PointResult p;
  p.index = index;
  p.workload = "gemm";
  p.params = {{"dtype", kScript},
              {"impl", kSvgBreak},
              {"m", 4096 * (index % 2 + 1)},
              {"n", 4096 * (index % 2 + 1)},
              {"k", 4096 * (index % 2 + 1)},
              {"shape", "square"}};
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.samples = {0.001, 0.0011, 0.00105};
  p.stats = mgbench::compute_statistics(p.samples, 10);
  p.metrics = {{"tflops_per_gpu", tflops}, {"tflops_aggregate", tflops * gpus}};
  return p;
}

mgbench::RunResult hostile_run() {
  mgbench::RunResult run;
  run.host = kScript;
  run.tool = {{"name", "mgbench"}, {"version", kImg}};
  run.argv = {"mgbench", "sweep", "--out", kSvgBreak};
  run.environment = {{"gpus", {{{"name", kScript}, {"uuid", kImg}}}}, {"env", {{"X", kSvgBreak}}}};
  run.points = {hostile_point(0, 1, 700), hostile_point(1, 1, 750), hostile_point(2, 2, 690),
                hostile_point(3, 2, 740)};
  mgbench::PointResult failed = hostile_point(4, 1, 0);
  failed.status = mgbench::Status::failed;
  failed.message = kScript + " | *boom* " + kImg;
  failed.metrics = mgbench::Json::object();
  run.points.push_back(failed);
  mgbench::ScalingSeries series;
  series.workload = "gemm";
  series.params = run.points[0].params;
  series.metric = "tflops_aggregate";
  series.unit = kImg;
  series.mode = kScript;
  mgbench::ScalingRow one, two;
  one.throughput = 700;
  two.gpus = 2;
  two.throughput = 1380;
  two.speedup = 1.97;
  two.efficiency = 0.985;
  two.point_index = 2;
  series.rows = {one, two};
  run.scaling = {series};
  mgbench::RunVerdict verdict;
  verdict.workload = "gemm";
  verdict.text = kScript;
  verdict.anomalies = {kImg};
  run.verdicts = {verdict};
  // A hostile presentation: headers, titles and labels are text, never markup.
  run.presentation["gemm"] =
      mgbench::Presentation()
          .metric(mgbench::MetricSpec("tflops_per_gpu", kScript, kImg))
          .axis(mgbench::AxisSpec("m", kSvgBreak))
          .table(mgbench::TableSpec()
                     .column(mgbench::ColumnSpec::gpus())
                     .column(mgbench::ColumnSpec::params())
                     .column(mgbench::ColumnSpec::metric("tflops_per_gpu", kScript))
                     .tail())
          .chart(mgbench::ChartSpec::scaling())
          .chart(mgbench::ChartSpec::line(kImg, "tflops_per_gpu").titled(kSvgBreak));
  run.doctor = {
      {"checks",
       {{{"name", kScript}, {"status", "warn"}, {"finding", kImg}, {"next_step", kSvgBreak}}}}};
  run.telemetry_series = {{"t_s", {0.0, 0.5, 1.0}},
                          {"per_gpu",
                           {{{"device", kScript},
                             {"power_w", {100, 200, 300}},
                             {"temp_c", {40, 50, 60}},
                             {"sm_clock_mhz", {1800, 1900, 1980}},
                             {"throttled", {0, 1, 0}}}}}};
  return run;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

TEST_CASE("HTML report renders hostile strings as text", "[reports][hostile]") {
  const std::string html = lower(mgbench::reports::render_html_report(hostile_run()));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  // The hostile parameter reached the charts (legends, titles) and stayed text there.
  CHECK(html.find("&lt;/svg&gt;&lt;script&gt;alert(3)") != std::string::npos);
}

TEST_CASE("every chart of a hostile run stays one intact svg element", "[reports][hostile]") {
  const auto charts = mgbench::reports::build_charts(hostile_run());
  REQUIRE_FALSE(charts.empty());
  for (const auto& c : charts) {
    INFO(c.id);
    CHECK(lower(c.svg).find("<script") == std::string::npos);
    std::size_t opens = 0, pos = 0;
    while ((pos = c.svg.find("<svg", pos)) != std::string::npos) {
      ++opens;
      ++pos;
    }
    CHECK(opens == 1);
    CHECK(c.svg.find("</svg>") == c.svg.size() - 6);
  }
}

TEST_CASE("Markdown report escapes hostile strings", "[reports][hostile]") {
  const std::string md = lower(mgbench::reports::render_markdown_report(hostile_run(), "c"));
  CHECK(md.find("<script") == std::string::npos);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("&lt;script&gt;") != std::string::npos);
}

TEST_CASE("CSV quotes hostile messages and keeps one record per point", "[reports][hostile]") {
  std::ostringstream out;
  mgbench::reports::write_csv(hostile_run(), out);
  const std::string csv = out.str();
  std::size_t records = 0;
  for (std::size_t i = 0; i + 1 < csv.size(); ++i) {
    if (csv[i] == '\r' && csv[i + 1] == '\n') ++records;
  }
  CHECK(records == 1 + 5);  // header + points
  CHECK(csv.find("\"<script>alert(1)</script> | *boom* \"\"><img") != std::string::npos);
}
