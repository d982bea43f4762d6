// One rank of a multi-device group failing, with the real binary and the CPU-only selftest
// workload on three fake GPUs: a rank that crashes during set-up fails its point with its own
// error within seconds (no group timeout), and a rank that never joins a collective makes the
// point a `timeout` after the watchdog's deadline, well before the orchestrator's
// --group-timeout, with the points left run by a fresh worker. Also the dry-run's plan lines.
#include <chrono>
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Status;
using mgbench::test::kQuiet;
using mgbench::test::run_mgbench;

namespace {

const std::string kThreeGpus = "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=3";

std::string sweep_on_three(const std::string& behaviors, const std::string& out) {
  return "sweep --workloads selftest --param behavior=" + behaviors +
         " --gpus 3 --group-timeout 40 --out " + out + kQuiet;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a rank that crashes in set-up fails its point with its own error, at once") {
  const std::string out = mgbench::test::temp_dir("setupcrash");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_mgbench(sweep_on_three("ok,setup-crash,ok", out), kThreeGpus + " timeout 60");
  CHECK(seconds_since(t0) < 30.0);
  CHECK(r.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == Status::ok);
  CHECK(run.points[1].status == Status::failed);
  CHECK(run.points[1].message.find("set-up failed on rank 2") != std::string::npos);
  CHECK(run.points[2].status == Status::ok);  // a fresh worker ran the rest
  std::filesystem::remove_all(out);
}

TEST_CASE("a rank that never joins a collective times out before the group timeout") {
  const std::string out = mgbench::test::temp_dir("hangcoll");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r =
      run_mgbench(sweep_on_three("ok,hang-in-collective,ok", out), kThreeGpus + " timeout 120");
  // The watchdog's deadline is a quarter of --group-timeout 40: about 10 s.
  CHECK(seconds_since(t0) < 35.0);
  CHECK(r.exit_code == 4);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == Status::ok);
  CHECK(run.points[1].status == Status::timeout);
  CHECK(run.points[1].message.find("deadline") != std::string::npos);
  CHECK(run.points[2].status == Status::ok);  // restarted, never "not run: the group timed out"
  std::filesystem::remove_all(out);
}

TEST_CASE("the dry run prints each group's devices as a plain list") {
  const auto r = run_mgbench("sweep --dry-run --workloads selftest --gpus 1,3" + kQuiet,
                             kThreeGpus);
  CHECK(r.exit_code == 0);
  CAPTURE(r.out);
  CHECK(r.out.find("GPUs 0,1,2 ") != std::string::npos);
  CHECK(r.out.find(" ,") == std::string::npos);  // no padding inside the list
}
