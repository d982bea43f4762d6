// The charts built from the fixed sample run (reports/charts.hpp, reports/svg.hpp).
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/svg.hpp"
#include "mgbench/model/results.hpp"

namespace mr = mgbench::reports;

namespace {

const std::vector<mr::ChartEntry>& sample_charts() {
  static const auto charts = mr::build_charts(
      mgbench::load_results(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json"));
  return charts;
}

std::vector<const mr::ChartEntry*> of_kind(const std::string& kind) {
  std::vector<const mr::ChartEntry*> out;
  for (const auto& c : sample_charts()) {
    if (c.kind == kind) out.push_back(&c);
  }
  return out;
}

}  // namespace

TEST_CASE("sample run yields every kind of chart", "[reports][charts]") {
  for (const char* kind : {"scaling", "efficiency", "size", "busbw", "time", "throughput", "memory",
                           "breakdown", "timeline"}) {
    INFO(kind);
    CHECK_FALSE(of_kind(kind).empty());
  }
}

TEST_CASE("chart ids are unique", "[reports][charts]") {
  std::set<std::string> ids;
  for (const auto& c : sample_charts()) CHECK(ids.insert(c.id).second);
}

TEST_CASE("every chart has data elements", "[reports][charts]") {
  for (const auto& c : sample_charts()) {
    INFO(c.id);
    CHECK(c.svg.find("class=\"data ") != std::string::npos);
  }
}

TEST_CASE("throughput vs GPU count has the ideal line", "[reports][charts]") {
  const auto charts = of_kind("scaling");
  REQUIRE_FALSE(charts.empty());
  for (const auto* c : charts) CHECK(c->svg.find("ideal (linear)") != std::string::npos);
}

TEST_CASE("all-reduce bandwidth uses a log2 byte axis from 8 B to 1 GiB", "[reports][charts]") {
  const auto charts = of_kind("busbw");
  REQUIRE(charts.size() == 2);  // fp32 and bf16
  const std::string& svg = charts[0]->svg;
  CHECK(svg.find(">8 B<") != std::string::npos);
  CHECK(svg.find(">1 GiB<") != std::string::npos);
  CHECK(svg.find("busbw (GB/s)") != std::string::npos);
}

TEST_CASE("memory chart marks the OOM boundary", "[reports][charts]") {
  const auto charts = of_kind("memory");
  REQUIRE(charts.size() == 1);
  CHECK(charts[0]->svg.find("OOM at batch 512") != std::string::npos);
}

TEST_CASE("telemetry timelines: three per GPU, throttled intervals shaded", "[reports][charts]") {
  const auto charts = of_kind("timeline");
  CHECK(charts.size() == 8 * 3);
  std::size_t shaded = 0;
  for (const auto* c : charts) shaded += c->svg.find("class=\"band\"") != std::string::npos;
  CHECK(shaded == 3);  // GPU 3: power, temperature, SM clock
}

TEST_CASE("a run without scaling, telemetry or points has no charts", "[reports][charts]") {
  mgbench::RunResult run;
  CHECK(mr::build_charts(run).empty());
}

TEST_CASE("log2 tick labels are thinned so they do not overlap", "[reports][charts]") {
  mr::svg::LineChart c;
  c.id = "t";
  c.width = 320;
  c.x.scale = mr::svg::Scale::log2;
  c.x.format = mr::svg::TickFormat::bytes;
  mr::svg::Series s;
  for (int e = 3; e <= 30; ++e) {
    s.x.push_back(std::ldexp(1.0, e));
    s.y.push_back(e);
  }
  c.series.push_back(s);
  const std::string svg = mr::svg::render(c);
  // Count x tick labels (text-anchor middle) and require fewer than the 28 powers.
  std::size_t labels = 0, pos = 0;
  while ((pos = svg.find("text-anchor=\"middle\">", pos)) != std::string::npos) {
    ++labels;
    ++pos;
  }
  CHECK(labels >= 3);
  CHECK(labels <= 8);
  CHECK(svg.find(">1 GiB<") != std::string::npos);
}

TEST_CASE("the efficiency chart marks where a run spans more nodes", "[reports][charts]") {
  auto run =
      mgbench::load_results(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json");
  REQUIRE_FALSE(run.scaling.empty());
  const std::string workload = run.scaling.front().workload;
  const auto efficiency_svg = [&](const mgbench::RunResult& r) {
    for (const auto& c : mr::build_charts(r)) {
      if (c.kind == "efficiency" && c.id.find(workload) != std::string::npos) return c.svg;
    }
    return std::string();
  };
  CHECK(efficiency_svg(run).find(" nodes") == std::string::npos);  // one node: no line
  for (auto& series : run.scaling) series.rows.back().nodes = 2;  // the largest count: 2 nodes
  const std::string svg = efficiency_svg(run);
  REQUIRE_FALSE(svg.empty());
  CHECK(svg.find("2 nodes") != std::string::npos);
  CHECK(svg.find("where the run spans more nodes") != std::string::npos);
}

TEST_CASE("a value flagged impossible is left out of its chart, and the chart says so",
          "[reports][charts]") {
  const auto path = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json";
  auto busbw_fp32 = [](const mgbench::RunResult& run) {
    for (const auto& c : mr::build_charts(run)) {
      if (c.kind == "busbw" && c.svg.find("fp32") != std::string::npos) return c.svg;
    }
    return std::string();
  };
  const auto titles = [](const std::string& svg) {
    std::size_t n = 0;
    for (auto at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) {
      ++n;
    }
    return n;
  };
  mgbench::RunResult run = mgbench::load_results(path);
  const std::string plain = busbw_fp32(run);
  REQUIRE_FALSE(plain.empty());
  CHECK(plain.find("impossible") == std::string::npos);
  bool flagged = false;
  for (auto& p : run.points) {
    if (p.workload == "allreduce" && p.params.text("dtype") == "fp32" &&
        p.params.text("impl") == "nccl" && p.params.integer("bytes") == 8388608) {
      p.flags = {{"impossible", "busbw_GBps", "above the copy limit"}};
      flagged = true;
      break;
    }
  }
  REQUIRE(flagged);
  const std::string svg = busbw_fp32(run);
  CHECK(svg.find("1 impossible value left out (see Flags)") != std::string::npos);
  CHECK(titles(svg) + 1 == titles(plain));
}

namespace {

// The train_step charts of `kind` in one string, and how many data points (one <title> each)
// they draw.
std::string train_charts(const mgbench::RunResult& run, const std::string& kind) {
  std::string svg;
  for (const auto& c : mr::build_charts(run)) {
    if (c.section == "train_step" && c.kind == kind) svg += c.svg;
  }
  return svg;
}

std::size_t title_count(const std::string& svg) {
  std::size_t n = 0;
  for (auto at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) {
    ++n;
  }
  return n;
}

void flag_point(mgbench::RunResult& run, std::size_t index) {
  for (auto& p : run.points) {
    if (p.index == index) {
      p.flags = {{"impossible", "tflops_per_gpu", "above the datasheet peak"}};
      return;
    }
  }
  FAIL("no point " << index);
}

}  // namespace

TEST_CASE("a point flagged impossible is left out of the scaling charts, and a flagged "
          "baseline takes its series out of the efficiency chart", "[reports][charts]") {
  // The sample's train_step series: batch 32, 64, 128, 256, each on 1, 2, 4 and 8 GPUs; batch
  // 128 is points 105 (1 GPU, the baseline) to 108.
  mgbench::RunResult run =
      mgbench::load_results(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json");
  const std::string scaling = train_charts(run, "scaling"), eff = train_charts(run, "efficiency");
  REQUIRE_FALSE(eff.empty());
  CHECK(scaling.find("impossible") == std::string::npos);
  // A flag on a per-GPU metric takes the point out of the aggregate throughput chart too.
  flag_point(run, 106);
  CHECK(title_count(train_charts(run, "scaling")) + 1 == title_count(scaling));
  CHECK(train_charts(run, "scaling").find("1 point with impossible values left out") !=
        std::string::npos);
  CHECK(title_count(train_charts(run, "efficiency")) + 1 == title_count(eff));
  // The baseline: batch 128's efficiencies are ratios to an impossible value, none is drawn.
  flag_point(run, 105);
  const std::string eff2 = train_charts(run, "efficiency");
  CHECK(title_count(eff2) + 4 == title_count(eff));
  CHECK(eff2.find("2 points with impossible values left out") != std::string::npos);
}
