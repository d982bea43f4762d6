// scripts/regression_gate.sh end to end with the CPU selftest workload: a baseline recorded in a
// history database, a check sweep where nothing changed (exit 0, JUnit without failures), and
// one with a slowdown injected through MGBENCH_TEST_SLOWDOWN: compare calls no regression across
// runs with different test hooks, so the gate fails inconclusive (exit 5), the JUnit file still
// carrying a <failure> per slower point; a check that measured fewer GPU counts fails unless
// --allow-missing; without the SQLite runtime library the baseline stops before its sweep.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include "catch_compat.hpp"
#include "support.hpp"

namespace {

struct Gate {
  std::string dir = mgbench::test::temp_dir("gate");
  ~Gate() { std::filesystem::remove_all(dir); }

  // Runs the script with `mode` (and gate options) and `env`, sweeping on `gpus`; returns its
  // exit status.
  int run(const std::string& mode, const std::string& env = "",
          const std::string& gpus = "1,2") const {
    const std::string cmd =
        "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2 MGBENCH=\"" MGBENCH_BINARY
        "\" " +
        env + " bash \"" MGBENCH_SOURCE_DIR "/scripts/regression_gate.sh\" " + mode + " --state " +
        dir + "/state --db " + dir + "/history.db -- --workloads selftest --param behavior=steady" +
        " --gpus " + gpus + " --skip-doctor --no-telemetry --no-report >>" + dir +
        "/log 2>&1 </dev/null";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string junit() const { return mgbench::test::read_text(dir + "/state/junit.xml"); }
  std::string log() const { return mgbench::test::read_text(dir + "/log"); }
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("regression gate: check without a baseline exits 2", "[cli][gate]") {
  const Gate gate;
  CHECK(gate.run("check") == 2);
  CHECK(gate.log().find("no baseline yet") != std::string::npos);
}

TEST_CASE("regression gate: unchanged passes, an injected slowdown fails with JUnit failures",
          "[cli][gate]") {
  // The slowdown comes from a test hook the baseline lacks: inconclusive (5), never a pass.
  const Gate gate;
  REQUIRE(gate.run("baseline") == 0);
  INFO(gate.log());

  REQUIRE(gate.run("check") == 0);
  const std::string same = gate.junit();
  CHECK(count(same, "<testcase ") == 2);  // one per matched point: 1 and 2 GPUs
  CHECK(count(same, "<failure ") == 0);
  CHECK(gate.log().find("PASS") != std::string::npos);

  REQUIRE(gate.run("check", "MGBENCH_TEST_SLOWDOWN=0.5") == 5);
  CHECK(gate.log().find("inconclusive: the runs had different test hooks") != std::string::npos);
  CHECK(gate.log().find("compare failed (exit 5)") != std::string::npos);
  const std::string slower = gate.junit();
  CHECK(count(slower, "<testcase ") == 2);
  CHECK(count(slower, "<failure ") == 2);
  CHECK(slower.find("type=\"slower\"") != std::string::npos);
  CHECK(slower.find("p-value") != std::string::npos);
}


TEST_CASE("regression gate: a check that measured fewer GPU counts than the baseline fails",
          "[cli][gate]") {
  // The baseline has 1 and 2 GPUs, the check only 1: the 2-GPU point is listed, is a
  // <failure type="missing"> in JUnit, and the gate exits 5 unless --allow-missing.
  const Gate gate;
  REQUIRE(gate.run("baseline") == 0);
  INFO(gate.log());

  CHECK(gate.run("check", "", "1") == 5);
  const std::string listed = "not measured by the check: selftest batch=1 behavior=steady on ";
  CHECK(gate.log().find(listed + "2 GPU(s)") != std::string::npos);
  CHECK(gate.log().find(listed + "1 GPU(s)") == std::string::npos);
  CHECK(gate.log().find("FAIL: the check did not measure every point") != std::string::npos);
  const std::string missing = gate.junit();
  CHECK(count(missing, "<testcase ") == 2);  // the matched 1-GPU point and the missing one
  CHECK(count(missing, "<failure ") == 1);
  CHECK(missing.find("type=\"missing\"") != std::string::npos);
  CHECK(missing.find("tests=\"2\" failures=\"1\"") != std::string::npos);  // <testsuites>

  CHECK(gate.run("check --allow-missing", "", "1") == 0);
  CHECK(gate.log().find("(allowed by --allow-missing)") != std::string::npos);
  const std::string allowed = gate.junit();
  CHECK(count(allowed, "<failure ") == 0);
  CHECK(count(allowed, "<skipped ") == 1);
}

TEST_CASE("regression gate: without the SQLite library, baseline stops before its sweep",
          "[cli][gate]") {
  const Gate gate;
  CHECK(gate.run("baseline", "MGBENCH_SQLITE_LIBRARY=/nonexistent/libsqlite3.so.0") == 4);
  CHECK(gate.log().find("/nonexistent/libsqlite3.so.0") != std::string::npos);
  CHECK(gate.log().find("cannot read the history database") != std::string::npos);
  CHECK(std::filesystem::is_empty(gate.dir + "/state/sweeps"));
}
