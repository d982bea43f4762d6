// The export options through the real binary: report --format prom|gbench, compare --junit, and
// history export --format csv|jsonl; bad combinations are one line and exit 2.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/store/history.hpp"
#include "support.hpp"

namespace {

using mgbench::Json;
using mgbench::test::run_mgbench;

const std::string kSample = MGBENCH_SOURCE_DIR "/tests/data/report_sample.json";

bool one_line(const std::string& text) {
  return !text.empty() && std::count(text.begin(), text.end(), '\n') == 1 && text.back() == '\n';
}

struct Dir {
  std::string path = mgbench::test::temp_dir("exports-cli");
  ~Dir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("exports cli: report --format prom and gbench write to stdout", "[cli][exports]") {
  const auto prom = run_mgbench("report " + kSample + " --format prom");
  CHECK(prom.exit_code == 0);
  CHECK(prom.out.rfind("# HELP mgbench_run_info ", 0) == 0);
  CHECK(prom.out.find("modelName=\"NVIDIA H200\"") != std::string::npos);
  const auto gbench = run_mgbench("report " + kSample + " --format gbench");
  CHECK(gbench.exit_code == 0);
  const Json doc = Json::parse(gbench.out);
  CHECK(doc["context"]["json_schema_version"] == 1);
  CHECK(!doc["benchmarks"].empty());
}

TEST_CASE("exports cli: report -o x.prom picks the format from the extension", "[cli][exports]") {
  const Dir dir;
  const auto r = run_mgbench("report " + kSample + " -o " + dir.path + "/m.prom");
  CHECK(r.exit_code == 0);
  CHECK(mgbench::test::read_text(dir.path + "/m.prom").find("# TYPE mgbench_point_ok gauge") !=
        std::string::npos);
}

TEST_CASE("exports cli: an unknown report format exits 2 with one line", "[cli][exports]") {
  const auto r = run_mgbench("report " + kSample + " --format openmetrics");
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
}

TEST_CASE("exports cli: --junit belongs to the comparison of two runs", "[cli][exports]") {
  const auto r =
      run_mgbench("compare " + kSample + " " + kSample + " --offers --junit /tmp/never.xml");
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK_FALSE(std::filesystem::exists("/tmp/never.xml"));
}

TEST_CASE("exports cli: compare --junit of a run with itself has no failure", "[cli][exports]") {
  const Dir dir;
  const auto r =
      run_mgbench("compare " + kSample + " " + kSample + " --junit " + dir.path + "/j.xml");
  CHECK(r.exit_code == 0);
  const std::string xml = mgbench::test::read_text(dir.path + "/j.xml");
  CHECK(xml.find("<testsuite name=\"gemm\"") != std::string::npos);
  CHECK(xml.find("failures=\"0\"") != std::string::npos);
  CHECK(xml.find("<failure") == std::string::npos);
}

TEST_CASE("exports cli: history export as CSV and JSON lines", "[cli][exports][history]") {
  const Dir dir;
  const std::string db = dir.path + "/h.db";
  mgbench::RunResult run = mgbench::load_results(kSample);
  mgbench::record_run(run, db);
  run.started_at = "2025-02-01T00:00:00.000Z";
  mgbench::record_run(run, db);
  const std::size_t points = run.points.size();

  const auto jsonl = run_mgbench("history export all --format jsonl --db " + db);
  CHECK(jsonl.exit_code == 0);
  std::istringstream lines(jsonl.out);
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const Json row = Json::parse(line);
    CHECK(row.contains("driver"));
    CHECK(row["params"].is_object());
  }
  CHECK(n == 2 * points);

  const auto csv = run_mgbench("history export last --format csv --db " + db);
  CHECK(csv.exit_code == 0);
  CHECK(csv.out.rfind("run,started_at,", 0) == 0);
  CHECK(csv.out.find("metric.tflops_aggregate") != std::string::npos);
  CHECK(static_cast<std::size_t>(std::count(csv.out.begin(), csv.out.end(), '\n')) == points + 1);

  const auto json_all = run_mgbench("history export all --db " + db);
  CHECK(json_all.exit_code == 2);
  CHECK(one_line(json_all.err));
  const auto bad = run_mgbench("history export last --format xml --db " + db);
  CHECK(bad.exit_code == 2);
  CHECK(one_line(bad.err));
}

