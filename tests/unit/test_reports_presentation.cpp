// Self-describing workloads: a workload only this test knows (two metrics, a size axis)
// declares its presentation, and every report format renders it without any report code for it:
// console, Markdown, CSV, HTML with SVG charts, the comparison console and HTML. The
// presentation also survives results.json.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/scaling.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/compare_report.hpp"
#include "mgbench/reports/console.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/markdown.hpp"
#include "support.hpp"

namespace {

using namespace mgbench;

// Copy bandwidth in GiB/s and copies per second vs the copy size.
const bool registered = register_workload(
    Workload("zz_probe_copy")
        .summary("test-only: a copy probe")
        .axis(Axis::size("copy_bytes", {"1024", "1048576"}))
        .throughput("copy_GiBps", "GiB/s")
        .present(Presentation()
                     .metric(MetricSpec("copy_GiBps", "copy bandwidth", "GiB/s")
                                 .format(ValueFormat::fixed, 1))
                     .metric(MetricSpec("copies_per_s", "copy rate", "copies/s")
                                 .format(ValueFormat::rate, 3))
                     .axis(AxisSpec("copy_bytes", "copy size").format(ValueFormat::bytes).log2())
                     .table(TableSpec()
                                .column(ColumnSpec::gpus())
                                .column(ColumnSpec::param("copy_bytes", "copy size")
                                            .format(ValueFormat::bytes))
                                .column(ColumnSpec::params())
                                .column(ColumnSpec::metric("copy_GiBps", "bandwidth (GiB/s)")
                                            .format(ValueFormat::fixed, 1))
                                .column(ColumnSpec::metric("copies_per_s", "copies/s")
                                            .format(ValueFormat::rate, 3))
                                .column(ColumnSpec::speedup())
                                .column(ColumnSpec::efficiency())
                                .tail())
                     .chart(ChartSpec::scaling())
                     .chart(ChartSpec::line("bandwidth", "copy_GiBps")
                                .titled("bandwidth vs copy size")
                                .split_by({"mode"})))
        .runner([](GroupContext&) {}));

PointResult probe_point(std::size_t index, double bytes, int gpus, double gibps) {
  PointResult p;
  p.index = index;
  p.workload = "zz_probe_copy";
  p.params = {{"copy_bytes", bytes}, {"mode", "pinned"}};
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  const double seconds = bytes / (gibps * 1073741824.0);
  for (int i = 0; i < 12; ++i) p.samples.push_back(seconds * (1.0 + 1e-4 * (i % 5 - 2)));
  p.stats = compute_statistics(p.samples, 10);
  p.metrics = {{"copy_GiBps", gibps}, {"copies_per_s", 1.0 / seconds}};
  return p;
}

// What a sweep stores: the points, the declared presentation, the scaling series from it.
RunResult probe_run(double slow = 1.0) {
  REQUIRE(registered);
  RunResult run;
  run.host = "probe-host";
  std::size_t index = 0;
  for (const int gpus : {1, 2}) {
    for (const double bytes : {1024.0, 65536.0, 1048576.0}) {
      const double gibps = gpus * 10.0 * std::log2(bytes) / slow;
      run.points.push_back(probe_point(index++, bytes, gpus, gibps));
    }
  }
  run.presentation["zz_probe_copy"] = find_workload("zz_probe_copy")->presentation();
  run.scaling = compute_scaling(run.points, ScalingMode::weak, presentation_throughput(run));
  return run;
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("a declared presentation is stored in results.json and read back", "[reports]") {
  const RunResult run = probe_run();
  const std::string path = test::temp_dir("presentation") + "/results.json";
  save_results(run, path);
  const RunResult back = load_results(path);
  REQUIRE(back.presentation.count("zz_probe_copy") == 1);
  CHECK(Json(back.presentation.at("zz_probe_copy")) == Json(run.presentation.at("zz_probe_copy")));
  CHECK(back.presentation.at("zz_probe_copy").headline_->name == "copy_GiBps");
  CHECK(back.scaling.size() == 3);
  CHECK(back.schema_version == kSchemaVersion);
}

TEST_CASE("console and Markdown show the declared columns of an unknown workload", "[reports]") {
  const RunResult run = probe_run();
  std::ostringstream console;
  reports::render_console(run, console);
  const std::string markdown = reports::render_markdown_report(run, "charts");
  CHECK(has(console.str(), "zz_probe_copy"));
  CHECK(has(markdown, "## zz\\_probe\\_copy"));
  for (const std::string& text : {console.str(), markdown}) {
    CHECK(has(text, "bandwidth (GiB/s)"));
    CHECK(has(text, "copies/s"));
    CHECK(has(text, "copy size"));
    CHECK(has(text, "1 MiB"));   // the size column in binary units
    CHECK(has(text, "200.0"));   // 2 GPUs x 10 x log2(1 MiB), one decimal as declared
    CHECK(has(text, "2.00x"));   // speedup from the scaling series of the headline
  }
  CHECK(has(markdown, "![zz\\_probe\\_copy: bandwidth vs copy size]"
                      "(charts/zz-probe-copy-bandwidth-pinned.svg)"));
}

TEST_CASE("charts of an unknown workload come from its declaration", "[reports]") {
  const auto charts = reports::build_charts(probe_run());
  std::set<std::string> kinds;
  for (const auto& c : charts) kinds.insert(c.kind);
  CHECK(kinds == std::set<std::string>{"scaling", "efficiency", "bandwidth"});
  for (const auto& c : charts) {
    if (c.kind != "bandwidth") continue;
    CHECK(has(c.svg, "copy size"));   // x axis label
    CHECK(has(c.svg, ">1 MiB<"));     // log2 byte ticks
    CHECK(has(c.svg, "copy bandwidth (GiB/s)"));
  }
}

TEST_CASE("CSV and HTML carry an unknown workload's metrics", "[reports]") {
  const RunResult run = probe_run();
  std::ostringstream csv;
  reports::write_csv(run, csv);
  CHECK(has(csv.str(), "metric.copy_GiBps"));
  CHECK(has(csv.str(), "metric.copies_per_s"));
  const std::string html = reports::render_html_report(run);
  CHECK(has(html, "id=\"workload-zz-probe-copy\""));
  CHECK(has(html, "<th class=\"num\">bandwidth (GiB/s)</th>"));
  CHECK(has(html, "id=\"zz-probe-copy-bandwidth-pinned\""));
  CHECK(has(html, "id=\"zz-probe-copy-scaling-"));
}

TEST_CASE("the comparison of an unknown workload uses its headline and axis", "[reports]") {
  const RunResult base = probe_run(), next = probe_run(1.2);
  Comparison cmp = compare_runs(base, next);
  REQUIRE_FALSE(cmp.points.empty());
  CHECK(cmp.points[0].quantity.metric == "copy_GiBps");
  CHECK(cmp.any_slower());
  std::ostringstream console;
  reports::render_comparison(console, cmp);
  CHECK(has(console.str(), "zz_probe_copy: copy_GiBps [GiB/s] (higher is better)"));
  const std::string html =
      reports::render_compare_html(reports::CompareReportInput(cmp, {&base, &next}, {"a", "b"}));
  CHECK(has(html, "Compared: copy_GiBps (GiB/s), higher is better."));
  CHECK(has(html, "id=\"cmp-zz-probe-copy-size-"));  // metric vs the declared size axis
  CHECK(has(html, "zz_probe_copy: bandwidth vs copy size"));
  CHECK(has(html, "id=\"cmp-zz-probe-copy-scaling-"));
  const OfferComparison offers =
      compare_offers({Offer{"a", "a.json", &base, 2.0}, Offer{"b", "b.json", &next, 1.0}});
  const std::string offer_html = reports::render_compare_html(
      reports::CompareReportInput(offers, {&base, &next}, {"a", "b"}));
  CHECK(has(offer_html, "<h4>Throughput (GiB/s)</h4>"));
  CHECK(has(offer_html, "<h4>Per dollar"));
}

TEST_CASE("a version-1 file without presentation still renders from its data", "[reports]") {
  // The sample as version 1 wrote it: no presentation.
  Json doc = Json::parse(
      test::read_text(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json"));
  doc.erase("presentation");
  doc["schema_version"] = 1;
  const std::string path = test::temp_dir("presentation-v1") + "/results.json";
  std::ofstream(path) << doc.dump();
  const RunResult run = load_results(path);
  REQUIRE(run.schema_version == 1);
  REQUIRE(run.presentation.empty());
  const Presentation p = presentation_for(run, "gemm");
  REQUIRE(p.headline_.has_value());
  CHECK(p.headline_->name == "tflops_aggregate");  // the scaling series' metric
  const std::string markdown = reports::render_markdown_report(run, "charts");
  CHECK(has(markdown, "tflops per gpu"));  // every metric found becomes a column
  CHECK(has(markdown, "tflops aggregate"));
  CHECK(has(markdown, "| speedup |"));
}
