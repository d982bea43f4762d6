// A 20-second `mgbench soak` of the GEMM load on GPU 0 through the real binary: at least two
// windows, non-zero throughput on each, telemetry in the windows, a verdict computed, and results
// that validate against the JSON Schema where python3-jsonschema is installed.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"

TEST_CASE("a 20-second gemm soak on GPU 0 gives windows, throughput and a verdict") {
  const std::string out = mgbench::test::temp_dir("gpu-soak");
  const auto r = mgbench::test::run_mgbench("soak --duration 20s --window 5s --gpus 0 "
                                            "--workload gemm --no-history --out " + out);
  INFO(r.out << r.err);
  // 0 runs stably, 4 not stable (a busy shared GPU may be): both are a computed verdict.
  REQUIRE((r.exit_code == 0 || r.exit_code == 4));
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.soak.is_object());
  const auto& windows = run.soak["windows"];
  REQUIRE(windows.size() >= 2);
  for (const auto& w : windows) {
    CHECK(w["ok"] == true);
    CHECK(w["throughput"].get<double>() > 0);
    CHECK(w["t_end_s"].get<double>() > w["t_start_s"].get<double>());
  }
  // The load stops when the next window would end past the duration (predicted from the last).
  CHECK(run.soak["measured_s"].get<double>() <= 20.0 + 2.5);
  const auto& analysis = run.soak["analysis"];
  CHECK(analysis["verdict"].is_string());
  CHECK(analysis["stable"].get<bool>() == (r.exit_code == 0));
  for (const auto& p : run.points) {
    CHECK(p.status == mgbench::Status::ok);
    CHECK(p.verification.value("ok", false));
  }
  CHECK(std::filesystem::exists(out + "/report.html"));
  if (std::system("/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1") == 0) {
    const std::string cmd = "/usr/bin/python3 \"" MGBENCH_SOURCE_DIR
                            "/scripts/validate_results.py\" \"" MGBENCH_SOURCE_DIR
                            "/harness/schema/results.schema.json\" \"" + out +
                            "/results.json\" >/dev/null";
    CHECK(std::system(cmd.c_str()) == 0);
  } else {
    WARN("python3-jsonschema not installed: schema validation of the GPU soak not checked here");
  }
  std::filesystem::remove_all(out);
}
