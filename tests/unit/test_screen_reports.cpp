// `mgbench screen`'s outputs and hooks: the heat-map chart kind, the findings table (most severe
// first), the exclude list, the report's section (escaped, and a section from elsewhere with
// indices out of range ignored), and the fault hook of the fake fleet.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/fleet.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/reports/screen_render.hpp"
#include "mgbench/reports/svg.hpp"

using mgbench::ScreenFigure;
using mgbench::ScreenFinding;
using mgbench::ScreenSection;
namespace svg = mgbench::reports::svg;
namespace hooks = mgbench::test_hooks;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ScreenFinding finding(const char* kind, int node, int gpu, double gap, int peer = -1) {
  ScreenFinding f;
  f.kind = kind;
  f.node = node;
  f.gpu = gpu;
  f.peer = peer;
  f.gap = gap;
  f.text = std::string(kind) + " text";
  return f;
}

ScreenSection two_nodes() {
  ScreenSection s;
  s.gpus_per_node = 2;
  s.stages = {1, 2, 3};
  for (const char* host : {"alpha", "beta", "gamma"}) {
    mgbench::ScreenNode n;
    n.host = host;
    n.gpus = 2;
    s.nodes.push_back(n);
  }
  return s;
}

}  // namespace

TEST_CASE("heat map: cells on one ramp, dark below, light at the top, grey without a value") {
  svg::HeatMap map;
  map.id = "hm";
  map.title = "nodes <x> metrics";
  map.rows = {"a&b", "c"};
  map.columns = {"gemm", "membw"};
  map.values = {{1.0, 0.5}, {std::nullopt, 2.0}};
  map.low = 0.6;
  map.high = 1.0;
  map.low_label = "40 % below";
  map.high_label = "at the reference";
  CHECK(svg::heat_colour(map, 0.2) == svg::heat_colour(map, 0.6));  // clamped at `low`
  CHECK(svg::heat_colour(map, 0.6) == "#7f0000");
  CHECK(svg::heat_colour(map, 1.0) == "#fff7ec");
  CHECK(svg::heat_colour(map, 2.0) == "#fff7ec");
  CHECK(svg::heat_dark(map, 0.61));
  CHECK_FALSE(svg::heat_dark(map, 0.99));
  const std::string out = svg::render(map);
  CHECK(count(out, "<g class=\"cell\">") == 4);
  CHECK(out.find("class=\"chart heatmap\"") != std::string::npos);
  CHECK(out.find("a&amp;b") != std::string::npos);
  CHECK(out.find("nodes &lt;x&gt; metrics") != std::string::npos);
  CHECK(out.find("#e6e6e6") != std::string::npos);  // the cell without a value
  CHECK(out.find(">0.5<") != std::string::npos);     // a value's default text
  CHECK(out.find("no data") == std::string::npos);
  CHECK(svg::has_data(map));
  map.values = {{std::nullopt, std::nullopt}, {std::nullopt, std::nullopt}};
  CHECK_FALSE(svg::has_data(map));
  CHECK(svg::render(map).find("no data") != std::string::npos);
}

TEST_CASE("screen outputs: the table is most severe first, the exclude list one entry a line") {
  ScreenSection s = two_nodes();
  s.findings = {finding(mgbench::kFindingNodeFailed, 2, -1, 1.0),
                finding(mgbench::kFindingGpu, 0, 1, 0.3),
                finding(mgbench::kFindingNodeLink, 0, -1, 0.2, 1),
                finding(mgbench::kFindingGpu, 2, 0, 0.1),  // on a node left out whole
                finding(mgbench::kFindingGpu, 0, 1, 0.08)};  // the same GPU, another metric
  const auto t = mgbench::reports::screen_findings_table(s);
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[0][0] == "failed");
  CHECK(t.rows[0][1] == "gamma");
  CHECK(t.rows[1][0] == "-30.0 %");
  CHECK(t.rows[1][1] == "alpha GPU 1");
  CHECK(t.rows[2][1] == "alpha - beta");
  const std::string list = mgbench::reports::screen_exclude_list(s);
  std::istringstream in(list);
  std::vector<std::string> entries;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') entries.push_back(line);
  }
  CHECK(entries == std::vector<std::string>{"gamma", "alpha:1"});
  CHECK(list.find("# alpha - beta: node_link text") != std::string::npos);
  s.findings.clear();
  CHECK(mgbench::reports::screen_exclude_list(s).find('\n', 0) != std::string::npos);
  std::istringstream none(mgbench::reports::screen_exclude_list(s));
  for (std::string line; std::getline(none, line);) CHECK(line[0] == '#');
}

TEST_CASE("screen outputs: the report's section, and a section with foreign indices ignored") {
  mgbench::RunResult run;
  ScreenSection s = two_nodes();
  s.nodes[0].host = "<script>";
  for (int n = 0; n < 3; ++n) {
    ScreenFigure f;
    f.metric = "gemm";
    f.node = n;
    f.gpu = 0;
    f.value = n == 1 ? 70 : 100;
    s.figures.push_back(f);
  }
  s.findings = {finding(mgbench::kFindingGpu, 1, 0, 0.3)};
  run.screen = s;
  const std::string html = mgbench::reports::screen_html_section(run);
  CHECK(html.find("<section id=\"screen\">") != std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;") != std::string::npos);
  CHECK(count(html, "class=\"chart heatmap\"") == 2);  // nodes x metrics, GPUs x metrics
  CHECK(html.find("-30.0 %") != std::string::npos);
  std::ostringstream console;
  mgbench::reports::render_screen_console(run, console);
  CHECK(console.str().find("1 finding(s)") != std::string::npos);
  s.figures[0].node = 7;  // no such node
  run.screen = s;
  CHECK_FALSE(mgbench::reports::screen_of(run).has_value());
  CHECK(mgbench::reports::screen_html_section(run).empty());
  s.figures[0].node = 0;
  s.figures[0].gpu = 1 << 30;  // no such GPU: a matrix of it would not fit in memory
  run.screen = s;
  CHECK_FALSE(mgbench::reports::screen_of(run).has_value());
}

TEST_CASE("screen fault hook: entries parsed, matched by GPU, host, pair and link") {
  ::setenv(hooks::kEnable, "1", 1);
  ::setenv(hooks::kScreenFault, "gpu:3@0.1,gpu:b:1@0.2,host:c@0.3,pair:a+b@0.5,link:0-2@1,hang:d",
           1);
  const auto f = hooks::screen_faults();
  REQUIRE(f.size() == 6);
  CHECK(f[1].host == "b");
  CHECK(f[1].gpu == 1);
  CHECK(f[3].other == "b");
  CHECK(f[4].peer == 2);
  CHECK(hooks::screen_slowdown(f, {"a"}, "a", 3) == Approx(1.1));
  CHECK(hooks::screen_slowdown(f, {"a"}, "a", 1) == 1.0);
  CHECK(hooks::screen_slowdown(f, {"b"}, "b", 1) == Approx(1.2));
  CHECK(hooks::screen_slowdown(f, {"c"}, "c", 0) == Approx(1.3));
  CHECK(hooks::screen_slowdown(f, {"a", "b"}, "a", 0) == Approx(1.5));
  CHECK(hooks::screen_slowdown(f, {"a"}, "a", 0) == 1.0);
  CHECK(hooks::screen_slowdown(f, {"x"}, "x", 2, 0) == Approx(2.0));
  CHECK(hooks::screen_slowdown(f, {"x"}, "x", 1, 0) == 1.0);
  CHECK(hooks::screen_hangs(f, {"a", "d"}));
  CHECK_FALSE(hooks::screen_hangs(f, {"a"}));
  for (const char* bad : {"gpu:x@0.1", "host:a", "hang:a@1", "pair:a@1", "link:1@1", "link:1-1@1",
                          "gpu:1@-1", "gpu:1@200", "disk:a@1", "gpu:1@0.1,"}) {
    INFO(bad);
    ::setenv(hooks::kScreenFault, bad, 1);
    CHECK_THROWS_AS(hooks::screen_faults(), mgbench::UsageError);
  }
  ::unsetenv(hooks::kScreenFault);
  CHECK(hooks::screen_faults().empty());
  ::unsetenv(hooks::kEnable);
}

TEST_CASE("screen outputs: the figures table, one row a metric, its lowest figure and whose") {
  mgbench::RunResult run;
  ScreenSection s = two_nodes();
  auto add = [&](const char* metric, int node, double value) {
    ScreenFigure f;
    f.metric = metric;
    f.unit = "GB/s";
    f.node = node;
    f.gpu = 0;
    f.value = value;
    s.figures.push_back(f);
  };
  add("membw", 0, 100);  // alone: no peer, no reference, no gap
  add("gemm", 0, 100);
  add("gemm", 1, 70);
  add("gemm", 2, 100);
  const auto t = mgbench::reports::screen_figures_table(s);
  REQUIRE(t.rows.size() == 2);
  // stage, metric, group, figures, reference, lowest, gap, lowest is
  CHECK(t.rows[0][1] == "membw");
  CHECK(t.rows[0][3] == "1");
  CHECK(t.rows[0][4] == "-");
  CHECK(t.rows[0][6] == "-");
  CHECK(t.tones[0] == mgbench::reports::RowTone::normal);
  CHECK(t.rows[1][1] == "gemm");
  CHECK(t.rows[1][3] == "3");
  CHECK(t.rows[1][4] == "100 GB/s");
  CHECK(t.rows[1][5] == "70 GB/s");
  CHECK(t.rows[1][6] == "30.0 %");
  CHECK(t.rows[1][7] == "beta GPU 0");
  CHECK(t.tones[1] == mgbench::reports::RowTone::warn);
  // No finding, with peers: nothing found; without a peer anywhere: nothing to compare.
  run.screen = s;
  std::ostringstream peers;
  mgbench::reports::render_screen_console(run, peers);
  CHECK(peers.str().find("Nothing found") != std::string::npos);
  CHECK(peers.str().find("Figures") != std::string::npos);
  s.figures.resize(2);  // membw and gemm, one figure each
  run.screen = s;
  std::ostringstream alone;
  mgbench::reports::render_screen_console(run, alone);
  CHECK(alone.str().find("Nothing to compare") != std::string::npos);
  CHECK(alone.str().find("Nothing found") == std::string::npos);
}
