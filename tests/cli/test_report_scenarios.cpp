// `mgbench report` over the scenario library (tests/data/scenarios) through the real binary: the
// fixtures hold points only, so every verdict printed was recomputed from them by this build.
#include <string>

#include "catch_compat.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::string kDir = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/scenarios/";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("report recomputes the verdicts of a results file from its points") {
  const auto r = run_mgbench("report " + kDir + "gemm-straggler-gpu5.json --format text");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "Verdicts"));
  CHECK(contains(r.out, "Waits for GPU 5"));
  CHECK(contains(r.out, "without it 97 %"));
}

TEST_CASE("report --json writes the recomputed scaling series and verdicts") {
  const auto r = run_mgbench("report " + kDir + "failed-baseline.json --json");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "\"no_baseline\": \"the 1-GPU point failed\""));
  CHECK(contains(r.out, "no baseline: the 1-GPU point failed, so 2 GPUs are the baseline."));
}

TEST_CASE("compare of two scenario runs names the part of the step that changed") {
  const auto r =
      run_mgbench("compare " + kDir + "compare-base.json " + kDir + "compare-new.json");
  CHECK(r.exit_code == 1);  // the all-reduce and the step are slower
  CHECK(contains(r.out, "most of the change is in exposed communication"));
}
