// The comparison report (`mgbench compare ... --report cmp.html`): registered writer and file
// names, environment diff first, a verdict row for every matched point with a text label,
// unmatched points on both sides, overlaid curves with verdict markers, efficiency side by
// side, the offer table, hostile strings as text, and well-formed SVG.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/compare_report.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"
#include "support.hpp"

namespace {

using mgbench::Json;
using mgbench::Params;
using mgbench::PointResult;
using mgbench::RunResult;
using mgbench::reports::CompareReportInput;

const std::string kData = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/compare/";
const std::string kScript = "<script>alert(1)</script>";
const std::string kImg = "\"><img src=x onerror=alert(2)>";

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size()))
    ++n;
  return n;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// ---- synthetic runs: GEMM (2 sizes x 2 implementations x 1, 2, 4 GPUs, with scaling tables)
// and all-reduce (4 message sizes x 2 and 4 GPUs) ---------------------------------------------

PointResult timed_point(std::size_t index, const std::string& workload, Params params, int gpus,
                        double seconds, unsigned seed) {
  PointResult p;
  p.index = index;
  p.workload = workload;
  p.params = std::move(params);
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  for (unsigned i = 0; i < 12; ++i) {
    const double jitter = static_cast<double>((i * 37u + seed * 11u) % 13u) - 6.0;
    p.samples.push_back(seconds * (1.0 + jitter * 2e-4));
  }
  p.stats = mgbench::compute_statistics(p.samples, 10);
  return p;
}

// The presentation the runs carry (what a sweep stores): a size axis for each workload, the
// first line chart of each is the comparison's metric-vs-size chart.
std::map<std::string, mgbench::Presentation> presentations() {
  using namespace mgbench;
  std::map<std::string, Presentation> out;
  out["gemm"] = Presentation()
                    .headline("tflops_aggregate", "TFLOP/s")
                    .metric(MetricSpec("tflops_per_gpu", "TFLOP/s per GPU", "TFLOP/s"))
                    .metric(MetricSpec("tflops_aggregate", "aggregate TFLOP/s", "TFLOP/s"))
                    .axis(AxisSpec("size", "matrix size"))
                    .chart(ChartSpec::scaling())
                    .chart(ChartSpec::line("size", "tflops_per_gpu"));
  out["allreduce"] = Presentation()
                         .headline("busbw_GBps", "GB/s")
                         .metric(MetricSpec("busbw_GBps", "busbw", "GB/s"))
                         .axis(AxisSpec("bytes", "message size").format(ValueFormat::bytes).log2())
                         .chart(ChartSpec::line("busbw", "busbw_GBps"));
  return out;
}

// `slow`: factor on the sample times of the points it returns != 1 for.
template <typename Slow>
RunResult synthetic_run(const std::string& host, const std::string& driver, unsigned seed,
                        Slow slow) {
  RunResult run;
  run.host = host;
  run.started_at = "2025-03-01T10:00:00.000Z";
  run.tool = {{"name", "mgbench"}, {"version", "0.1.0"}};
  run.environment = {{"versions", {{"driver", driver}, {"nccl_loaded", "2.28.9"}}},
                     {"gpus", {{{"index", 0}, {"name", "NVIDIA H200"}}}},
                     {"host", {{"hostname", host}}}};
  run.presentation = presentations();
  std::size_t index = 0;
  for (const std::string impl : {"cublas", "mgbench"}) {
    for (const int size : {4096, 8192}) {
      mgbench::ScalingSeries series;
      series.workload = "gemm";
      series.params = {{"dtype", "bf16"}, {"impl", impl}, {"size", size}};
      series.metric = "tflops_aggregate";
      series.unit = "TFLOP/s";
      series.mode = "weak";
      double x1 = 0;
      for (const int gpus : {1, 2, 4}) {
        const Params params{{"dtype", "bf16"}, {"impl", impl}, {"size", size}};
        const double t = 1e-4 * size / 4096.0 * (impl == "cublas" ? 1.0 : 1.6) *
                         (1.0 + 0.02 * (gpus - 1)) * slow("gemm", params, gpus);
        PointResult p = timed_point(index, "gemm", params, gpus, t, seed + index);
        const double per_gpu = 2.0 * std::pow(size, 3) / p.stats.median / 1e12;
        p.metrics = {{"tflops_per_gpu", per_gpu}, {"tflops_aggregate", per_gpu * gpus}};
        if (gpus == 1) x1 = per_gpu;
        mgbench::ScalingRow row;
        row.gpus = gpus;
        row.throughput = per_gpu * gpus;
        row.efficiency = per_gpu / x1;
        row.point_index = index;
        series.rows.push_back(row);
        run.points.push_back(std::move(p));
        ++index;
      }
      run.scaling.push_back(std::move(series));
    }
  }
  for (const int gpus : {2, 4}) {
    for (const double bytes : {1024.0, 65536.0, 4194304.0, 268435456.0}) {
      const Params params{{"bytes", bytes}, {"dtype", "fp32"}, {"impl", "nccl"}};
      const double t = (5e-6 + bytes / 300e9) * slow("allreduce", params, gpus);
      PointResult p = timed_point(index, "allreduce", params, gpus, t, seed + index);
      ++index;
      const double algbw = bytes / p.stats.median / 1e9;
      p.metrics = {{"algbw_GBps", algbw}, {"busbw_GBps", algbw * 2.0 * (gpus - 1) / gpus}};
      run.points.push_back(std::move(p));
    }
  }
  return run;
}

RunResult synthetic_base() {
  return synthetic_run("node-a", "570.86.15", 1,
                       [](const std::string&, const Params&, int) { return 1.0; });
}

// GEMM mgbench 8192 at 4 GPUs and the 256 MiB all-reduce at 4 GPUs 10 % slower, GEMM cuBLAS
// 4096 at 1 GPU 8 % faster; a newer driver.
RunResult synthetic_new() {
  return synthetic_run("node-a", "580.65.06", 5, [](const std::string& w, const Params& p, int g) {
    if (w == "gemm" && p.text("impl") == "mgbench" && p.integer("size") == 8192 && g == 4) {
      return 1.10;
    }
    if (w == "gemm" && p.text("impl") == "cublas" && p.integer("size") == 4096 && g == 1) {
      return 0.92;
    }
    if (w == "allreduce" && p.at("bytes").number() == 268435456.0 && g == 4) return 1.10;
    return 1.0;
  });
}

struct Rendered {
  std::vector<RunResult> runs;
  mgbench::Comparison cmp;
  mgbench::OfferComparison offers;
  bool offer_mode = false;
  Json doc;
  std::vector<std::string> labels;
  std::string html;
};

CompareReportInput input_of(const Rendered& r) {
  std::vector<const RunResult*> ptrs;
  for (const auto& run : r.runs) ptrs.push_back(&run);
  if (r.offer_mode) return CompareReportInput(r.offers, ptrs, r.labels);
  return CompareReportInput(r.cmp, ptrs, r.labels);
}

Rendered render_pair(RunResult base, RunResult next,
                     std::vector<std::string> labels = {"base", "new"}) {
  Rendered r;
  r.runs = {std::move(base), std::move(next)};
  r.cmp = mgbench::compare_runs(r.runs[0], r.runs[1]);
  r.cmp.base_label = labels[0];
  r.cmp.new_label = labels[1];
  r.cmp.base_path = "base.json";
  r.cmp.new_path = "new.json";
  r.doc = mgbench::comparison_to_json(r.cmp);
  r.labels = std::move(labels);
  r.html = mgbench::reports::render_compare_html(input_of(r));
  return r;
}

Rendered render_files(const std::vector<std::string>& names, bool offers,
                      const std::vector<double>& prices = {}) {
  Rendered r;
  for (const auto& n : names) r.runs.push_back(mgbench::load_results(kData + n + ".json"));
  r.labels = names;
  if (offers) {
    std::vector<mgbench::Offer> list;
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      mgbench::Offer o{names[i], names[i] + ".json", &r.runs[i], std::nullopt};
      if (i < prices.size()) o.price_per_gpu_hour = prices[i];
      list.push_back(o);
    }
    r.offers = mgbench::compare_offers(list);
    r.offer_mode = true;
    r.doc = mgbench::offers_to_json(r.offers);
  } else {
    r.cmp = mgbench::compare_runs(r.runs[0], r.runs[1]);
    r.cmp.base_label = names[0];
    r.cmp.new_label = names[1];
    r.doc = mgbench::comparison_to_json(r.cmp);
  }
  r.html = mgbench::reports::render_compare_html(input_of(r));
  return r;
}

std::vector<std::string> inline_svgs(const std::string& html) {
  std::vector<std::string> out;
  for (std::size_t pos = html.find("<svg"); pos != std::string::npos;
       pos = html.find("<svg", pos + 1)) {
    const std::size_t end = html.find("</svg>", pos);
    if (end == std::string::npos) break;
    out.push_back(html.substr(pos, end + 6 - pos));
  }
  return out;
}

// A strict little XML well-formedness check (elements nest, attributes quoted, no raw '<' or
// stray '&' in text or attribute values). Returns "" when well-formed, else the problem.
std::string xml_problem(const std::string& xml) {
  std::vector<std::string> stack;
  const auto entity_ok = [&](std::size_t at) {
    const std::size_t semi = xml.find(';', at);
    if (semi == std::string::npos || semi - at > 10) return false;
    const std::string name = xml.substr(at + 1, semi - at - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos")
      return true;
    if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      const std::string digits = name.substr(hex ? 2 : 1);
      return !digits.empty() && std::all_of(digits.begin(), digits.end(), [&](char c) {
        return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                   : std::isdigit(static_cast<unsigned char>(c)) != 0;
      });
    }
    return false;
  };
  std::size_t i = 0;
  while (i < xml.size()) {
    const char c = xml[i];
    if (c == '&') {
      if (!entity_ok(i)) return "bad entity at " + std::to_string(i);
      ++i;
      continue;
    }
    if (c == '>') return "stray '>' in text at " + std::to_string(i);
    if (c != '<') {
      ++i;
      continue;
    }
    const bool closing = i + 1 < xml.size() && xml[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_start = j;
    while (j < xml.size() && (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == '-' ||
                              xml[j] == ':' || xml[j] == '_'))
      ++j;
    const std::string name = xml.substr(name_start, j - name_start);
    if (name.empty()) return "tag without a name at " + std::to_string(i);
    if (closing) {
      if (j >= xml.size() || xml[j] != '>') return "bad closing tag " + name;
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
      i = j + 1;
      continue;
    }
    // Attributes: name="value" (no '<' inside, entities valid).
    while (true) {
      while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
      if (j >= xml.size()) return "unterminated <" + name;
      if (xml[j] == '>') {
        stack.push_back(name);
        ++j;
        break;
      }
      if (xml.compare(j, 2, "/>") == 0) {
        j += 2;
        break;
      }
      const std::size_t attr = j;
      while (j < xml.size() && xml[j] != '=' && !std::isspace(static_cast<unsigned char>(xml[j])))
        ++j;
      if (j == attr || j >= xml.size() || xml[j] != '=') return "bad attribute in <" + name;
      ++j;
      if (j >= xml.size() || (xml[j] != '"' && xml[j] != '\'')) return "unquoted attribute";
      const char quote = xml[j++];
      while (j < xml.size() && xml[j] != quote) {
        if (xml[j] == '<') return "'<' in an attribute of <" + name + ">";
        if (xml[j] == '&' && !entity_ok(j)) return "bad entity in an attribute of <" + name + ">";
        ++j;
      }
      if (j >= xml.size()) return "unterminated attribute in <" + name + ">";
      ++j;
    }
    i = j;
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  return {};
}

}  // namespace

// ---- writer and file names -------------------------------------------------------------------

TEST_CASE("compare --report FILE.html writes the HTML comparison report",
          "[reports][compare]") {
  const Rendered r = render_files({"base", "slower"}, false);
  const std::string path = mgbench::test::temp_dir("cmp-report") + "/cmp.html";
  mgbench::reports::write_compare_report_file(path, input_of(r));
  const std::string page = mgbench::test::read_text(path);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("mgbench comparison: base") != std::string::npos);
  CHECK(page.find("Content-Security-Policy") != std::string::npos);
}

TEST_CASE("compare --report FILE.json still writes the comparison JSON", "[reports][compare]") {
  const Rendered r = render_files({"base", "rerun"}, false);
  const std::string path = mgbench::test::temp_dir("cmp-report") + "/cmp.JSON";
  mgbench::reports::write_compare_report_file(path, input_of(r));
  CHECK(Json::parse(mgbench::test::read_text(path)) == r.doc);
}

TEST_CASE("compare --report with another file name is a usage error", "[reports][compare]") {
  const Rendered r = render_files({"base", "rerun"}, false);
  const std::string path = mgbench::test::temp_dir("cmp-report") + "/cmp.txt";
  CHECK_THROWS_AS(mgbench::reports::write_compare_report_file(path, input_of(r)),
                  mgbench::UsageError);
}

// ---- two runs --------------------------------------------------------------------------------

TEST_CASE("compare report shows the environment diff before the verdicts", "[reports][compare]") {
  const std::string html = render_files({"base", "slower"}, false).html;
  const auto env = html.find("id=\"environment\"");
  const auto verdicts = html.find("id=\"verdicts\"");
  REQUIRE(env != std::string::npos);
  REQUIRE(verdicts != std::string::npos);
  CHECK(env < verdicts);
  const auto driver = html.find("570.86.15", env);
  CHECK(driver < verdicts);
  CHECK(html.find("580.65.06", env) < verdicts);
  CHECK(html.find("96.00.89.00.01", env) < verdicts);  // VBIOS
}

TEST_CASE("compare report gives every matched point a labelled verdict row", "[reports][compare]") {
  const Rendered r = render_files({"base", "slower"}, false);
  CHECK(count_of(r.html, "<tr class=\"v-slower\">") == r.doc["points"].size());
  // The verdict is a word next to its symbol, never a colour alone.
  CHECK(count_of(r.html, "aria-hidden=\"true\">\u25BC</span>slower</span>") >= 2);
  CHECK(r.html.find("class=\"outcome bad\"") != std::string::npos);
  CHECK(r.html.find("exit code 1") != std::string::npos);
}

TEST_CASE("compare report of a rerun says no regression", "[reports][compare]") {
  const std::string html = render_files({"base", "rerun"}, false).html;
  CHECK(html.find("class=\"outcome good\"") != std::string::npos);
  CHECK(count_of(html, "<tr class=\"v-same\">") == 2);
  CHECK(count_of(html, "<tr class=\"v-slower\">") == 0);
  CHECK(html.find("No environment changes") != std::string::npos);
}

TEST_CASE("compare report lists points only in one run on both sides", "[reports][compare]") {
  RunResult base = synthetic_base(), next = synthetic_new();
  base.points.pop_back();                            // 256 MiB at 4 GPUs: only in new
  next.points.erase(next.points.begin());            // cuBLAS 4096 at 1 GPU: only in base
  next.points.back().status = mgbench::Status::oom;  // still listed, with its status
  const std::string html = render_pair(base, next).html;
  const auto unmatched = html.find("id=\"unmatched\"");
  REQUIRE(unmatched != std::string::npos);
  const auto only_base = html.find("Only in base", unmatched);
  const auto only_new = html.find("Only in new", unmatched);
  REQUIRE(only_base != std::string::npos);
  REQUIRE(only_new != std::string::npos);
  CHECK(html.find("dtype=bf16 impl=cublas size=4096", only_base) < only_new);
  CHECK(html.find("bytes=268435456.0", only_new) != std::string::npos);
  CHECK(html.find(">oom</td>", only_new) != std::string::npos);
}

TEST_CASE("compare report overlays the runs with verdict markers on the new run",
          "[reports][compare]") {
  const std::string html = render_pair(synthetic_base(), synthetic_new()).html;
  // Throughput vs GPU count (scaling tables), GEMM vs size, all-reduce busbw vs message size.
  CHECK(html.find("id=\"cmp-gemm-scaling-") != std::string::npos);
  CHECK(html.find("id=\"cmp-gemm-size-") != std::string::npos);
  CHECK(html.find("id=\"cmp-allreduce-size-") != std::string::npos);
  CHECK(html.find("ideal (linear from base)") != std::string::npos);
  CHECK(html.find("data-name=\"verdict: slower\"") != std::string::npos);
  CHECK(html.find("data-name=\"verdict: faster\"") != std::string::npos);
  CHECK(html.find("data-name=\"verdict: same\"") != std::string::npos);
  // The all-reduce message size axis is logarithmic, labelled in binary units.
  const auto ar = html.find("id=\"cmp-allreduce-size-");
  CHECK(html.find("MiB", ar) < html.find("</svg>", ar));
}

TEST_CASE("compare report shows scaling efficiency of both runs side by side",
          "[reports][compare]") {
  const std::string html = render_pair(synthetic_base(), synthetic_new()).html;
  const auto table = html.find("<h3>Scaling efficiency</h3>");
  REQUIRE(table != std::string::npos);
  CHECK(html.find("id=\"cmp-gemm-efficiency\"") != std::string::npos);
  // mgbench 8192 at 4 GPUs lost efficiency in the new run: a negative difference.
  const auto row = html.find("<td>impl=mgbench size=8192</td><td class=\"num\">4</td>", table);
  REQUIRE(row != std::string::npos);
  const std::string cells = html.substr(row, html.find("</tr>", row) - row);
  CHECK(cells.find("<td class=\"num\">-") != std::string::npos);
  CHECK(cells.find(" pp</td>") != std::string::npos);
}

TEST_CASE("compare report renders only what the data contain", "[reports][compare]") {
  const std::string html = render_files({"base", "rerun"}, false).html;
  // One GPU count: no scaling chart, no efficiency; no unmatched points.
  CHECK(html.find("-scaling-") == std::string::npos);
  CHECK(html.find("Scaling efficiency") == std::string::npos);
  CHECK(html.find("id=\"unmatched\"") == std::string::npos);
  CHECK(html.find("id=\"offers\"") == std::string::npos);
  // The GEMM size chart (two sizes) is there.
  CHECK(count_of(html, "<svg") == 1);
}

TEST_CASE("compare report shows per-point thresholds raised by baseline noise",
          "[reports][compare]") {
  Rendered r;
  r.runs = {mgbench::load_results(kData + "base.json"),
            mgbench::load_results(kData + "slower.json")};
  mgbench::NoiseMap noise;
  noise[mgbench::point_key(r.runs[0].points[0])] = mgbench::NoiseEstimate{0.02, 3};
  r.cmp = mgbench::compare_runs(r.runs[0], r.runs[1], {}, &noise);
  r.labels = {"base", "slower"};
  const std::string html = mgbench::reports::render_compare_html(input_of(r));
  CHECK(html.find("<th class=\"num\">threshold</th>") != std::string::npos);
  CHECK(html.find("6.0 % (noise 2.0 %)") != std::string::npos);
}

// ---- offers ----------------------------------------------------------------------------------

TEST_CASE("offer report shows the offer table with the best offer per row",
          "[reports][compare][offers]") {
  const Rendered r = render_files({"base", "slower", "cloud"}, true, {2.49, 1.80, 3.10});
  CHECK(r.html.find("mgbench offer comparison: base vs slower vs cloud") != std::string::npos);
  CHECK(r.html.find("VM (KVM)") != std::string::npos);
  CHECK(r.html.find("<h4>Per dollar") != std::string::npos);
  CHECK(r.html.find("<h4>Per watt") != std::string::npos);
  // Per dollar the cheap "slower" offer wins both rows; throughput "base" wins.
  const auto per_dollar = r.html.find("<h4>Per dollar");
  CHECK(count_of(r.html.substr(per_dollar), "<td class=\"num best\">") == 2);
  CHECK(r.html.find("<td>slower</td>", per_dollar) != std::string::npos);
  CHECK(r.html.find("id=\"verdicts\"") == std::string::npos);
}

TEST_CASE("offer report without prices says how to get per dollar", "[reports][compare][offers]") {
  const Rendered r = render_files({"base", "slower", "cloud"}, true);
  CHECK(r.html.find("<h4>Per dollar") == std::string::npos);
  CHECK(r.html.find("--price LABEL=USD_PER_GPU_HOUR") != std::string::npos);
}

// ---- escaping and SVG ------------------------------------------------------------------------

TEST_CASE("compare report renders hostile strings as text", "[reports][compare][hostile]") {
  const auto hostile = [](RunResult run) {
    run.host = kScript;
    run.environment["host"]["hostname"] = kImg;
    run.environment["gpus"][0]["name"] = kScript;
    for (auto& p : run.points) {
      if (p.workload == "gemm") p.params.set("impl", std::string("</svg>") + kScript);
    }
    return run;
  };
  RunResult base = hostile(synthetic_base()), next = hostile(synthetic_new());
  next.environment["versions"]["driver"] = kImg;
  next.points.back().status = mgbench::Status::failed;
  next.points.back().message = kScript;
  const std::string html = lower(render_pair(base, next, {kScript, kImg}).html);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&lt;img src=x onerror=alert(2)&gt;") != std::string::npos);
}

TEST_CASE("every chart of the comparison report is well-formed XML", "[reports][compare]") {
  RunResult base = synthetic_base(), next = synthetic_new();
  base.host = kScript;
  for (auto& p : next.points) p.params.set("dtype", kImg + "&amp;" + kScript);
  for (auto& p : base.points) p.params.set("dtype", kImg + "&amp;" + kScript);
  const std::string html = render_pair(base, next, {"a&b", "<c>"}).html;
  const auto svgs = inline_svgs(html);
  REQUIRE(svgs.size() >= 4);
  for (const auto& svg : svgs) {
    INFO(svg.substr(0, 200));
    CHECK(xml_problem(svg) == "");
  }
}

TEST_CASE("the XML check of the comparison test rejects broken markup", "[reports][compare]") {
  CHECK(xml_problem("<svg><g></svg>") != "");
  CHECK(xml_problem("<svg><text>a < b</text></svg>") != "");
  CHECK(xml_problem("<svg title=\"x & y\"></svg>") != "");
  CHECK(xml_problem("<svg><text x=\"1\">a &amp; b &#9660;</text><path d=\"M0 0\"/></svg>") == "");
}
