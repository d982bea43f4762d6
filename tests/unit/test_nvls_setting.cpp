// NVLink SHARP (NCCL_NVLS_ENABLE) is NCCL's default unless the user asks: no product code sets
// the variable except `sweep --nvls`, every environment records the setting as "nccl_nvls", the
// report's run table shows it and `compare` names it in its environment diff.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/reports/compare_report.hpp"
#include "mgbench/reports/markdown.hpp"

namespace fs = std::filesystem;

TEST_CASE("nvls: the setting reads NCCL_NVLS_ENABLE as NCCL does") {
  CHECK(mgbench::nccl_nvls_setting(nullptr) == "auto (NCCL's default)");
  CHECK(mgbench::nccl_nvls_setting("2") == "auto (NCCL's default)");
  CHECK(mgbench::nccl_nvls_setting("0") == "off (NCCL_NVLS_ENABLE=0)");
  CHECK(mgbench::nccl_nvls_setting("1") == "on (NCCL_NVLS_ENABLE=1)");
  CHECK(mgbench::nccl_nvls_setting("yes") == "NCCL_NVLS_ENABLE=yes");
}

TEST_CASE("nvls: no product source sets NCCL_NVLS_ENABLE but the --nvls option") {
  const fs::path root = MGBENCH_SOURCE_DIR;
  std::vector<std::string> setters;
  for (const char* dir : {"app", "harness", "benchmarks", "kernels", "reports"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh") continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (line.find("setenv") != std::string::npos &&
            line.find("NCCL_NVLS_ENABLE") != std::string::npos) {
          setters.push_back(fs::relative(entry.path(), root).string() + ":" + std::to_string(n));
        }
      }
    }
  }
  REQUIRE_FALSE(setters.empty());  // apply_nvls (setenv, and unsetenv for auto)
  for (const std::string& at : setters) {
    CAPTURE(at);
    CHECK(at.rfind("harness/run/src/sweep_options.cpp:", 0) == 0);
  }
}

TEST_CASE("nvls: the report's run table shows the recorded setting, and nothing unrecorded") {
  mgbench::RunResult run;
  run.tool = mgbench::Json{{"name", "mgbench"}};
  const std::string without = mgbench::reports::render_markdown_report(run, "charts");
  CHECK(without.find("NVLS") == std::string::npos);
  run.environment["nccl_nvls"] = "off (NCCL_NVLS_ENABLE=0)";
  const std::string with = mgbench::reports::render_markdown_report(run, "charts");
  const auto row = with.find("NCCL NVLink SHARP (NVLS)");
  REQUIRE(row != std::string::npos);
  CHECK(with.find("off (NCCL\\_NVLS\\_ENABLE=0)", row) < with.find('\n', row));
}

TEST_CASE("nvls: compare names a changed setting in its environment diff") {
  const std::string base = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/compare/base.json";
  mgbench::RunResult before = mgbench::load_results(base), after = before;
  before.environment["nccl_nvls"] = "off (NCCL_NVLS_ENABLE=0)";
  after.environment["nccl_nvls"] = "auto (NCCL's default)";
  const mgbench::Comparison cmp = mgbench::compare_runs(before, after);
  REQUIRE(cmp.environment.size() == 1);
  CHECK(cmp.environment[0].path == "nccl_nvls");
  CHECK(cmp.environment[0].before == "off (NCCL_NVLS_ENABLE=0)");
  CHECK(cmp.environment[0].after == "auto (NCCL's default)");
  const mgbench::reports::CompareReportInput input(cmp, {&before, &after}, {"base", "new"});
  const std::string html = mgbench::reports::render_compare_html(input);
  const auto kind = html.find("NCCL setting");
  REQUIRE(kind != std::string::npos);
  CHECK(html.find("nccl_nvls", kind) != std::string::npos);
}
