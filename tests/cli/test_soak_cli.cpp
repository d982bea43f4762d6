// `mgbench soak` end to end on the CPU: the selftest workload with the fake health watch
// (MGBENCH_TEST_SOAK_FAKE, docs/TESTING-HOOKS.md): windows, verdict, early stops on an XID and on
// a temperature, Ctrl-C keeping the windows, the schema, and the report's time-series charts.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::string kSoakEnv =
    "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2 MGBENCH_TEST_SOAK_FAKE=";
const std::string kFlags = " --workload selftest --no-history -q";

}  // namespace

TEST_CASE("soak: windows, a stable verdict, valid results and the time-series charts") {
  const std::string out = mgbench::test::temp_dir("soak-ok");
  const auto r = run_mgbench("soak --duration 2s --window 0.2s --param behavior=brief --out " +
                                 out + kFlags,
                             kSoakEnv + "ok");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("runs stably") != std::string::npos);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.soak.is_object());
  const auto& windows = run.soak["windows"];
  CHECK(windows.size() >= 10);
  CHECK(run.points.size() == windows.size());
  // One planned point, repeated as the windows run: window i is point i.
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    CHECK(run.points[i].index == i);
    CHECK(windows[i]["index"] == i);
  }
  CHECK(windows[0]["gpus"].size() == 2);
  CHECK(windows[0]["gpus"][0]["throughput"].get<double>() == Approx(1000.0));
  CHECK(windows[0]["gpus"][1]["temp_c"].get<double>() == Approx(52.0));
  CHECK(run.soak["analysis"]["stable"] == true);
  CHECK(run.soak["analysis"]["throttled_spans"].size() == 1);  // the fake's windows 3 and 4
  CHECK(run.soak["analysis"]["hottest_device"] == 1);
  CHECK(run.soak["stopped_early"].is_null());
  CHECK_FALSE(run.interrupted);
  mgbench::test::check_results_schema(out + "/results.json");
  const std::string html = mgbench::test::read_text(out + "/report.html");
  CHECK(html.find("throughput per GPU over time") != std::string::npos);
  CHECK(html.find("temperature per GPU over time") != std::string::npos);
  CHECK(html.find("throttled") != std::string::npos);
  CHECK(html.find("runs stably") != std::string::npos);  // the verdict table
  CHECK(mgbench::test::read_text(out + "/report.md").find("stability soak") != std::string::npos);
  // `mgbench report` renders the saved file the same way.
  const std::string again = mgbench::test::temp_dir("soak-report");
  const auto rep = run_mgbench("report " + out + "/results.json --format html -o " + again +
                               "/r.html");
  INFO(rep.err);
  CHECK(rep.exit_code == 0);
  CHECK(mgbench::test::read_text(again + "/r.html").find("throughput per GPU over time") !=
        std::string::npos);
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(again);
}

TEST_CASE("soak: an XID stops it early, keeps the windows and fails the verdict") {
  const std::string out = mgbench::test::temp_dir("soak-xid");
  const auto r = run_mgbench("soak --duration 10s --window 0.2s --param behavior=slow --no-report "
                             "--out " + out + kFlags,
                             kSoakEnv + "xid@2");
  INFO(r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("NOT stable") != std::string::npos);
  const auto run = mgbench::load_results(out + "/results.json");
  const auto& soak = run.soak;
  CHECK(soak["windows"].size() >= 2);
  CHECK(soak["windows"].size() < 10);  // 52 were planned
  CHECK(soak["stopped_early"].get<std::string>().find("XID 79") != std::string::npos);
  REQUIRE(soak["health"]["events"].size() == 1);
  CHECK(soak["health"]["events"][0]["kind"] == "xid");
  CHECK(soak["analysis"]["stable"] == false);
  mgbench::test::check_results_schema(out + "/results.json");
  std::filesystem::remove_all(out);
}

TEST_CASE("soak: a temperature at the slowdown threshold stops it early") {
  const std::string out = mgbench::test::temp_dir("soak-hot");
  const auto r = run_mgbench("soak --duration 10s --window 0.2s --param behavior=slow --no-report "
                             "--out " + out + kFlags,
                             kSoakEnv + "hot@2");
  INFO(r.err);
  CHECK(r.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  CHECK(run.soak["windows"].size() == 3);  // windows 0, 1 and the hot window 2
  CHECK(run.soak["stopped_early"].get<std::string>().find("slowdown threshold") !=
        std::string::npos);
  CHECK(run.soak["analysis"]["stable"] == false);
  std::filesystem::remove_all(out);
}

TEST_CASE("soak: Ctrl-C keeps every window measured (exit 130)") {
  const std::string out = mgbench::test::temp_dir("soak-int");
  // Interrupted once the log shows window 1 (two windows measured, a third running).
  const std::string log = out + ".log";
  const std::string cmd = kSoakEnv + "ok sh -c '\"" MGBENCH_BINARY
                          "\" soak --duration 60s --window 1s --param behavior=slow --no-report "
                          "--workload selftest --no-history --out " + out + " >/dev/null 2>" +
                          log + " & pid=$!; for i in $(seq 600); do grep -qs \"window 1:\" " +
                          log + " && break; sleep 0.05; done; kill -INT $pid; wait $pid'";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto run = mgbench::load_results(out + "/results.json");
  CHECK(run.interrupted);
  CHECK(run.soak["interrupted"] == true);
  CHECK(run.soak["windows"].size() >= 2);
  CHECK(run.points.size() == run.soak["windows"].size());
  mgbench::test::check_results_schema(out + "/results.json");
  std::filesystem::remove_all(out);
  std::filesystem::remove(log);
}

TEST_CASE("soak: bad arguments are one line and exit 2") {
  const std::string env = "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2";
  for (const char* args : {"soak --duration 10x", "soak --duration 5s --window 10s",
                           "soak --workload nosuch --duration 1s", "soak --gpus 7 --duration 1s "
                           "--workload selftest --no-history", "soak --param broken"}) {
    const auto r = run_mgbench(args, env);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
  }
}
