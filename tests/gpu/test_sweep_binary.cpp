// A 1-GPU `mgbench sweep` through the real binary: exit 0, every point ok, and the results
// file validates against the JSON Schema (python3-jsonschema) where that is installed.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"

TEST_CASE("a 1-GPU gemm sweep through the real binary writes valid results") {
  const std::string out = mgbench::test::temp_dir("gpu-sweep");
  const auto r = mgbench::test::run_mgbench(
      "sweep --gpus 1 --workloads gemm --param size=512 --param dtype=bf16,fp32 --profile quick"
      " --no-history --skip-doctor --out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 4);
  for (const auto& p : run.points) {
    CHECK(p.status == mgbench::Status::ok);
    CHECK(p.metrics.value("tflops_per_gpu", 0.0) > 0.0);
    CHECK(p.verification.value("ok", false));
  }
  CHECK(std::filesystem::exists(out + "/journal.jsonl"));
  CHECK(std::filesystem::exists(out + "/report.html"));
  // Schema validation needs python3 with jsonschema; where it is missing this check says so.
  if (std::system("/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1") == 0) {
    const std::string cmd = "/usr/bin/python3 \"" MGBENCH_SOURCE_DIR
                            "/scripts/validate_results.py\" \"" MGBENCH_SOURCE_DIR
                            "/harness/schema/results.schema.json\" \"" + out +
                            "/results.json\" >/dev/null";
    CHECK(std::system(cmd.c_str()) == 0);
  } else {
    WARN("python3-jsonschema not installed: schema validation of the GPU run not checked here");
  }
  std::filesystem::remove_all(out);
}
