// The answer-first summary of a report: per-workload best figure, efficiency and verdict, the
// folded 1-GPU sentence, the flags, and the order of the HTML and Markdown reports.
#include <algorithm>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/analysis/scaling.hpp"
#include "mgbench/analysis/verdict.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/reports/summary.hpp"

namespace {

using mgbench::reports::Table;

const std::string kData = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json";

mgbench::RunResult sample() { return mgbench::load_results(kData); }

const Table& table_of(const std::vector<Table>& tables, const std::string& title) {
  const auto it = std::find_if(tables.begin(), tables.end(),
                               [&](const Table& t) { return t.title == title; });
  REQUIRE(it != tables.end());
  return *it;
}

// The cells of the row whose first cell is `label`, keyed by column header.
std::string cell(const Table& t, const std::string& label, const std::string& header) {
  std::size_t col = t.columns.size();
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c].header == header) col = c;
  }
  REQUIRE(col < t.columns.size());
  for (const auto& row : t.rows) {
    if (row.at(0) == label) return row.at(col);
  }
  FAIL("no row " << label);
  return {};
}

// The sample reduced to its 1-GPU points, with the scaling and verdicts recomputed.
mgbench::RunResult one_gpu_run() {
  auto run = sample();
  run.points.erase(std::remove_if(run.points.begin(), run.points.end(),
                                  [](const mgbench::PointResult& p) { return p.gpus != 1; }),
                   run.points.end());
  run.scaling = mgbench::compute_scaling(run.points, mgbench::ScalingMode::weak,
                                         mgbench::presentation_throughput(run));
  run.verdicts = mgbench::compute_verdicts(run.scaling, run.points, {});
  return run;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("summary: a row per configuration with its best figure, efficiency and verdict",
          "[reports][summary]") {
  const auto tables = mgbench::reports::run_summary(sample()).tables;
  REQUIRE(tables.size() == 3);  // gemm, allreduce, train_step: one table per workload
  const Table& gemm = table_of(tables, "gemm");
  CHECK(gemm.columns[1].header == "best aggregate TFLOP/s");
  // bf16 cuBLASLt: the best aggregate is size 8192 on 8 GPUs, 7.70x (96 %).
  CHECK(cell(gemm, "bf16 · cublas", "best aggregate TFLOP/s") == "5787");
  CHECK(cell(gemm, "bf16 · cublas", "at") == "size 8192, 8 GPUs");
  CHECK(cell(gemm, "bf16 · cublas", "scaling efficiency") == "96 % at 8 GPUs");
  CHECK(cell(gemm, "bf16 · cublas", "verdict") == "8 GPUs give 7.70x (96 %).");
  // The failed 8-GPU point of size 8192 is counted in the row's notes.
  CHECK(cell(gemm, "bf16 · mgbench", "notes") == "1 failed");
  CHECK(cell(gemm, "bf16 · mgbench", "at") == "size 4096, 8 GPUs");  // 2962.96 vs 2962.88
  // fp8 was waived: no figure, and the reason is counted.
  CHECK(cell(gemm, "fp8 · cublas", "best aggregate TFLOP/s") == "—");
  CHECK(cell(gemm, "fp8 · cublas", "notes") == "1 waived");
}

TEST_CASE("summary: a workload without a 1-GPU baseline says so instead of an efficiency",
          "[reports][summary]") {
  const auto tables = mgbench::reports::run_summary(sample()).tables;
  const Table& ar = table_of(tables, "allreduce");
  REQUIRE_FALSE(ar.rows.empty());
  for (const auto& row : ar.rows) {
    CHECK(row.at(3) == "—");
    CHECK(row.at(4) == "—");
  }
  REQUIRE(ar.notes.size() == 1);  // one sentence for every row
  CHECK(ar.notes[0].rfind("Measured on more GPUs without a 1-GPU point in this run", 0) == 0);
}

TEST_CASE("summary: measured on 1 GPU only folds into one sentence per workload",
          "[reports][summary]") {
  const auto run = one_gpu_run();
  const auto summary = mgbench::reports::run_summary(run);
  CHECK(summary.note.rfind("Measured on 1 GPU only: no scaling efficiency", 0) == 0);
  const Table& gemm = table_of(summary.tables, "gemm");
  CHECK(cell(gemm, "bf16 · cublas", "best aggregate TFLOP/s") == "752.0");
  for (const auto& t : summary.tables) {
    CHECK(t.notes.empty());  // the run-wide sentence replaces one per table
    for (const auto& row : t.rows) CHECK(row.at(3) == "—");
  }
  // The verdicts keep no "1 GPU only" line: one note counts them. Here no verdict says more,
  // so the verdicts section is left out and the summary's sentence is the only one.
  const Table verdicts = mgbench::reports::verdicts_table(run);
  CHECK(verdicts.rows.empty());
  REQUIRE(verdicts.notes.size() == 1);
  CHECK(verdicts.notes[0] == std::to_string(run.verdicts.size()) +
                                 " series measured on 1 GPU only: no scaling figure.");
  const std::string html = mgbench::reports::render_html_report(run);
  CHECK(count(html, "1 GPU only") == 1);
  CHECK(html.find("<section id=\"verdicts\">") == std::string::npos);
  // Nor a scaling section of 1.00x / 100 % tables; the full sample keeps its tables.
  CHECK(mgbench::reports::scaling_tables(run).empty());
  CHECK(html.find("<section id=\"scaling\">") == std::string::npos);
  CHECK(mgbench::reports::scaling_tables(sample()).size() >= 2);
}

TEST_CASE("summary: a workload with only waived points does not stop the 1-GPU sentence folding",
          "[reports][summary]") {
  auto run = one_gpu_run();
  mgbench::PointResult waived = run.points.front();
  waived.index = 9999;
  waived.workload = "p2p";
  waived.params = mgbench::Json{{"engine", "ce"}};
  waived.status = mgbench::Status::waived;
  waived.metrics = mgbench::Json::object();
  run.points.push_back(waived);
  const auto summary = mgbench::reports::run_summary(run);
  CHECK(summary.note.rfind("Measured on 1 GPU only", 0) == 0);
  CHECK(cell(table_of(summary.tables, "p2p"), "all points", "notes") == "1 waived");
  for (const auto& t : summary.tables) CHECK(t.notes.empty());
  // One point on 2 GPUs: the run is no longer 1-GPU only, each table speaks for itself.
  run.points.front().gpus = 2;
  CHECK(mgbench::reports::run_summary(run).note.empty());
}

TEST_CASE("verdicts: a 1-GPU verdict that says more keeps only what it adds",
          "[reports][summary]") {
  auto run = one_gpu_run();
  REQUIRE(run.verdicts.size() > 1);
  const std::string label = run.verdicts[0].text.substr(0, run.verdicts[0].text.find(": "));
  run.verdicts[0].text += " The optimizer takes 2 % of the step.";
  const Table verdicts = mgbench::reports::verdicts_table(run);
  REQUIRE(verdicts.rows.size() == 1);
  CHECK(verdicts.rows[0].at(1) == label + ": The optimizer takes 2 % of the step.");
  CHECK(verdicts.notes.at(0).rfind(std::to_string(run.verdicts.size()) + " series", 0) == 0);
}

TEST_CASE("summary: a flagged value is never the best figure", "[reports][summary]") {
  auto run = sample();
  for (auto& p : run.points) {
    if (p.index == 7) {  // cublas bf16 8192 on 8 GPUs, the best of its row
      p.flags = {{"impossible", "tflops_aggregate", "too fast"}};
    }
  }
  const auto tables = mgbench::reports::run_summary(run).tables;
  const Table& gemm = table_of(tables, "gemm");
  CHECK(cell(gemm, "bf16 · cublas", "at") == "size 4096, 8 GPUs");
  CHECK(cell(gemm, "bf16 · cublas", "notes") == "1 with impossible values");
  const auto flags = mgbench::reports::run_flags(run);
  const auto it = std::find_if(flags.begin(), flags.end(), [](const auto& g) {
    return g.title == "Impossible values";
  });
  REQUIRE(it != flags.end());
  REQUIRE(it->lines.size() == 1);
  CHECK(it->lines[0] == "gemm bf16 · cublas, size 8192, 8 GPUs: too fast");
}

TEST_CASE("flags: noise with its reason, oscillation folded per workload, doctor warnings",
          "[reports][summary]") {
  auto run = sample();
  for (auto& p : run.points) {
    if (p.workload == "gemm" && p.gpus == 1 && p.status == mgbench::Status::ok) {
      p.spread = mgbench::Spread{0.03, std::nullopt, true, "power cap", ""};
    }
    if (p.noisy) {
      p.spread = mgbench::Spread{};
      p.spread->reason = "median uncertain: 95 % CI +/- 2.00 %";
    }
  }
  const auto flags = mgbench::reports::run_flags(run);
  const auto group = [&](const std::string& title) {
    const auto it = std::find_if(flags.begin(), flags.end(),
                                 [&](const auto& g) { return g.title == title; });
    REQUIRE(it != flags.end());
    return it->lines;
  };
  const auto noise = group("Noise");
  REQUIRE(noise.size() == 2);
  CHECK(noise[0].find(": median uncertain: 95 % CI +/- 2.00 %") != std::string::npos);
  CHECK(noise[0].rfind("allreduce ", 0) == 0);
  CHECK(noise[1] == "gemm: 8 points oscillate from sample to sample (power cap); the medians "
                    "are certain, so they are not noisy.");
  const auto doctor = group("Doctor warnings");
  REQUIRE(doctor.size() == 2);
  CHECK(doctor[0].rfind("pcie_link (warn): GPU 5 PCIe link Gen4 x16", 0) == 0);
  CHECK(doctor[1].rfind("ecc (fail): GPU 3: 2 pending row remaps. Next: reset GPU 3", 0) == 0);
  CHECK(group("Points without a result").size() == 6);  // 4 oom, 1 wrong, 1 failed
}

TEST_CASE("HTML report: summary, then flags, then details, settings at the end",
          "[reports][summary]") {
  const std::string html = mgbench::reports::render_html_report(sample());
  const auto at = [&](const std::string& needle) {
    const auto pos = html.find(needle);
    INFO(needle);
    REQUIRE(pos != std::string::npos);
    return pos;
  };
  const auto main_start = at("<main>");
  CHECK(main_start < at("<section id=\"summary\">"));
  CHECK(at("<section id=\"summary\">") < at("<section id=\"flags\">"));
  CHECK(at("<section id=\"flags\">") < at("<section id=\"verdicts\">"));
  CHECK(at("<section id=\"verdicts\">") < at("<section id=\"workload-gemm\">"));
  CHECK(at("<section id=\"points\">") < at("<section id=\"settings\">"));
  CHECK(at("<section id=\"settings\">") < at("<section id=\"environment\">"));
  // The summary holds the figures, the flags the doctor's warning, the settings the command.
  const std::string summary = html.substr(at("<section id=\"summary\">"),
                                          at("<section id=\"flags\">") - at("<section id=\"summary\">"));
  CHECK(summary.find("<td class=\"num\">5787</td>") != std::string::npos);
  CHECK(summary.find("96 % at 8 GPUs") != std::string::npos);
  CHECK(at("GPU 5 PCIe link Gen4 x16 under load") < at("<section id=\"verdicts\">"));
  CHECK(at("settings.max_noise") > at("<section id=\"settings\">"));
}

TEST_CASE("Markdown report opens with the summary and ends with the settings",
          "[reports][summary]") {
  const std::string md = mgbench::reports::render_markdown_report(sample(), "charts");
  const auto summary = md.find("## Summary");
  const auto flags = md.find("## Flags");
  const auto settings = md.find("## Settings");
  REQUIRE(summary != std::string::npos);
  REQUIRE(flags != std::string::npos);
  REQUIRE(settings != std::string::npos);
  CHECK(summary < flags);
  CHECK(flags < md.find("## Verdicts"));
  CHECK(md.find("## All points") < settings);
  CHECK(md.find("### gemm") > summary);
}
