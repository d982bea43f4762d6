// The orchestrator killed from outside: SIGKILL at a random moment then --resume (no finished
// point lost, none run twice), its worker dying with it, and SIGTERM/SIGHUP acting like Ctrl-C.
#include <filesystem>
#include <random>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Status;
using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::run_mgbench;

namespace {

// Shell: fails (exit 9) when a process listed in $kids is still alive (zombies are dead).
const std::string kNoSurvivor =
    "sleep 0.3\n"
    "for k in $kids; do\n"
    "  s=$(cut -d')' -f2 /proc/$k/stat 2>/dev/null | cut -c2)\n"
    "  if [ -n \"$s\" ] && [ \"$s\" != Z ]; then kill -KILL $k; exit 9; fi\n"
    "done\n";

}  // namespace

TEST_CASE("SIGKILL at a random moment, then --resume: no finished point lost or run twice") {
  std::random_device rd;
  const unsigned seed = rd();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_ms(200, 1800);  // start-up to the last point
  const std::string plan = "sweep --workloads selftest --param behavior=brief"
                           " --param batch=1,2,3,4,5,6 --gpus 1,2";
  for (int round = 0; round < 10; ++round) {
    const std::string out = mgbench::test::temp_dir("sigkill");
    const int delay = delay_ms(rng);
    INFO("seed " << seed << ", round " << round << ", SIGKILL after " << delay << " ms");
    const int rc = mgbench::test::run_script(
        "\"$MGBENCH\" " + plan + " --out " + out + kQuiet + " 2>/dev/null & pid=$!\n" +
        "sleep " + std::to_string(delay / 1000.0) + "\n" +
        "kids=$(pgrep -P $pid)\nkill -KILL $pid\n{ wait $pid; } 2>/dev/null\n" + kNoSurvivor);
    CHECK(rc == 0);  // 9: a worker outlived its orchestrator
    const auto before = mgbench::test::read_journal_points(out + "/journal.jsonl");
    // Killed before the journal's header was written: nothing finished; start over.
    const auto r = run_mgbench(before.has_header ? "sweep --resume " + out + kQuiet
                                                 : plan + " --force --out " + out + kQuiet,
                               kSelftestEnv);
    CHECK(r.exit_code == 0);
    const auto run = mgbench::load_results(out + "/results.json");
    REQUIRE(run.points.size() == 12);
    for (std::size_t i = 0; i < 12; ++i) {
      CHECK(run.points[i].index == i);
      CHECK(run.points[i].status == Status::ok);
    }
    const auto after = mgbench::test::read_journal_points(out + "/journal.jsonl");
    CHECK(after.count.size() == 12);
    for (const auto& [index, n] : after.count) CHECK(n == 1);  // nothing ran twice
    for (const auto& [index, started] : before.started_at) {
      CHECK(run.points[index].started_at == started);  // the finished point was kept
    }
    std::filesystem::remove_all(out);
  }
}

TEST_CASE("a worker dies with its SIGKILLed orchestrator") {
  const std::string out = mgbench::test::temp_dir("orphan");
  const int rc = mgbench::test::run_script(
      "\"$MGBENCH\" sweep --workloads selftest --param behavior=hang --gpus 1 --out " + out +
      kQuiet + " 2>/dev/null & pid=$!\n" +
      "for i in $(seq 500); do [ -s " + out + "/journal.jsonl ] && kids=$(pgrep -P $pid) && "
      "[ -n \"$kids\" ] && break; sleep 0.01; done\n"
      "[ -n \"$kids\" ] || exit 8\nkill -KILL $pid\n{ wait $pid; } 2>/dev/null\n" + kNoSurvivor);
  CHECK(rc == 0);  // 8: no worker seen; 9: the worker survived
  const auto journal = mgbench::test::read_journal_points(out + "/journal.jsonl");
  CHECK(journal.has_header);
  CHECK(journal.count.empty());  // the hung point never finished
  std::filesystem::remove_all(out);
}

TEST_CASE("SIGTERM and SIGHUP save the finished points like Ctrl-C (exit 130)") {
  for (const std::string signal : {"TERM", "HUP"}) {
    INFO("SIG" << signal);
    const std::string out = mgbench::test::temp_dir("signal");
    const int rc = mgbench::test::run_script(
        "\"$MGBENCH\" sweep --workloads selftest --param behavior=slow,slow,slow,slow,slow,slow"
        " --gpus 1 --out " + out + kQuiet + " 2>/dev/null & pid=$!\n" +
        "for i in $(seq 600); do grep -qs '\"type\":\"point\"' " + out +
        "/journal.jsonl && break; sleep 0.02; done\n" +
        "kill -" + signal + " $pid\nwait $pid");
    CHECK(rc == 130);
    const auto run = mgbench::load_results(out + "/results.json");
    CHECK(run.interrupted);
    REQUIRE(run.points.size() == 6);
    int ok = 0, skipped = 0;
    for (const auto& p : run.points) {
      ok += p.status == Status::ok;
      if (p.status == Status::skipped) {
        ++skipped;
        CHECK(p.message == "interrupted");
      }
    }
    CHECK(ok >= 1);
    CHECK(skipped >= 1);
    CHECK(ok + skipped == 6);
    std::filesystem::remove_all(out);
  }
}
