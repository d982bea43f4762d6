// Golden tests: the Markdown and CSV renderings of a fixed results file. After an intended
// change, regenerate with MGBENCH_UPDATE_GOLDEN=1 and review the diff.
#include <cstdlib>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"

namespace {

const std::string kData = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/report_sample.json";
const std::string kGolden = std::string(MGBENCH_SOURCE_DIR) + "/tests/golden/";

// Compares with the golden file. With MGBENCH_UPDATE_GOLDEN set it rewrites the file and
// FAILS: an update is never a passing test (review the diff, then run again without it).
void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = kGolden + name;
  if (std::getenv("MGBENCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    FAIL("golden updated: " << name << " rewritten by the code under test; review the diff and "
                            "rerun without MGBENCH_UPDATE_GOLDEN");
  }
  const std::string expected = mgbench::test::read_text(path);
  REQUIRE_FALSE(expected.empty());
  if (expected != actual) {
    // Report the first differing line, not two 50 kB strings.
    std::size_t line = 1, i = 0;
    while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) {
      if (expected[i] == '\n') ++line;
      ++i;
    }
    const auto excerpt = [&](const std::string& s) {
      const std::size_t b = s.rfind('\n', i == 0 ? 0 : i - 1);
      const std::size_t start = b == std::string::npos ? 0 : b + 1;
      return s.substr(start, s.find('\n', start) - start);
    };
    FAIL_CHECK(name << " differs from the golden file at line " << line
                    << "\nexpected: " << excerpt(expected) << "\nactual:   " << excerpt(actual)
                    << "\n(intended? rerun with MGBENCH_UPDATE_GOLDEN=1 and review the diff)");
  }
}

}  // namespace

TEST_CASE("Markdown report of the sample results matches the golden file", "[reports]") {
  const auto run = mgbench::load_results(kData);
  check_golden("report_sample.md", mgbench::reports::render_markdown_report(run, "report_charts"));
}

TEST_CASE("CSV of the sample results matches the golden file", "[reports]") {
  const auto run = mgbench::load_results(kData);
  std::ostringstream out;
  mgbench::reports::write_csv(run, out);
  check_golden("report_sample.csv", out.str());
}
