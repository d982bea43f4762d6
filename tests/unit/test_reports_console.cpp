// Console tables at the end of a sweep (reports/console.hpp) on the fixed sample run.
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/reports/console.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/model/results.hpp"

namespace {

const mgbench::RunResult& sample() {
  static const mgbench::RunResult run =
      mgbench::load_results(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json");
  return run;
}

std::string console_text(bool colour) {
  std::ostringstream out;
  mgbench::reports::render_console(sample(), out, mgbench::reports::ConsoleOptions{colour});
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of the table titled `title` (header first), up to the next blank line.
std::vector<std::string> table_lines(const std::string& text, const std::string& title) {
  const auto lines = lines_of(text);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != title) continue;
    for (std::size_t j = i + 1; j < lines.size() && !lines[j].empty(); ++j) out.push_back(lines[j]);
    break;
  }
  return out;
}

}  // namespace

TEST_CASE("console output has no colour codes unless asked", "[reports][console]") {
  CHECK(console_text(false).find('\x1b') == std::string::npos);
  CHECK(console_text(true).find('\x1b') != std::string::npos);
}

TEST_CASE("console prints one table per workload and all-reduce per dtype", "[reports][console]") {
  const std::string text = console_text(false);
  for (const char* title :
       {"gemm", "allreduce fp32", "allreduce bf16", "allreduce plateau", "train_step"}) {
    INFO(title);
    CHECK_FALSE(table_lines(text, title).empty());
  }
}

TEST_CASE("all-reduce columns follow nccl-tests' order", "[reports][console]") {
  const auto lines = table_lines(console_text(false), "allreduce fp32");
  REQUIRE(lines.size() > 2);
  const std::string& header = lines[0];
  std::size_t last = 0;
  for (const char* col :
       {"size", "count", "impl", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong", "status"}) {
    const std::size_t at = header.find(col);
    INFO(col);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
}

TEST_CASE("console shows only the parameters that vary", "[reports][console]") {
  const auto lines = table_lines(console_text(false), "train_step");
  REQUIRE(lines.size() > 3);
  CHECK(lines[0].find("fixed: ") != std::string::npos);  // caption with the fixed ones
  CHECK(lines[1].find("batch") != std::string::npos);
  CHECK(lines[1].find("hidden") == std::string::npos);
}

TEST_CASE("console columns are aligned", "[reports][console]") {
  const auto lines = table_lines(console_text(false), "allreduce fp32");
  REQUIRE(lines.size() > 3);
  // Right-aligned "busbw (GB/s)": every row ends its number where the header ends.
  const std::size_t end = lines[0].find("busbw (GB/s)") + std::string("busbw (GB/s)").size();
  for (std::size_t i = 2; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(lines[i][end - 1] != ' ');
    CHECK(lines[i][end] == ' ');
  }
}

TEST_CASE("non-ok points show their status and message", "[reports][console]") {
  const std::string text = console_text(false);
  CHECK(text.find("failed: worker exited with signal 11") != std::string::npos);
  CHECK(text.find("waived: fp8 needs compute capability") != std::string::npos);
  CHECK(text.find("oom: out of memory") != std::string::npos);
  CHECK(text.find("wrong: 12 elements differ") != std::string::npos);
}

TEST_CASE("telemetry columns appear only with telemetry", "[reports][console]") {
  const std::string text = console_text(false);
  CHECK(table_lines(text, "gemm").at(1).find("W/GPU") != std::string::npos);
  CHECK(table_lines(text, "train_step").at(1).find("W/GPU") == std::string::npos);
}

TEST_CASE("speedup and efficiency come from the scaling tables", "[reports][console]") {
  const auto lines = table_lines(console_text(false), "gemm");
  bool found = false;
  for (const auto& l : lines) {
    std::istringstream fields(l);
    std::string gpus;
    fields >> gpus;
    if (gpus == "8" && l.find("cublas") != std::string::npos &&
        l.find("8192") != std::string::npos && l.find("bf16") != std::string::npos) {
      CHECK(l.find("7.70x") != std::string::npos);
      CHECK(l.find("96.2 %") != std::string::npos);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("verdicts follow the tables", "[reports][console]") {
  const std::string text = console_text(false);
  const auto at = text.find("\nVerdicts\n");
  REQUIRE(at != std::string::npos);
  CHECK(text.find("train_step batch 256: 8 GPUs give 7.29x", at) != std::string::npos);
  CHECK(text.find("anomalies: slow gpu", at) != std::string::npos);
}

TEST_CASE("devices are shown as ranges", "[reports][console]") {
  mgbench::RunResult run;
  mgbench::PointResult p;
  p.workload = "probe";
  p.gpus = 5;
  p.devices = {0, 1, 2, 3, 6};
  run.points.push_back(p);
  std::ostringstream out;
  mgbench::reports::render_console(run, out, {});
  CHECK(out.str().find("0-3,6") != std::string::npos);
}
