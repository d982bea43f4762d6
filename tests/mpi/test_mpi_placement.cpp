// Where the ranks of an mpirun sweep run, through the real mpirun on this GPU-less machine
// (selftest, fake GPUs): a launch that does not start stops the sweep in one line (root without
// consent), the device probe runs on the ranks (an orchestrator that sees no GPU), ranks that
// each see their own GPU take it by identity, two names of one machine are one node, a rank
// confined to one CPU is noted once, and more GPUs per node than this host has are refused.
// Skipped (exit 77, with the reason) where mpirun or MPI support is missing.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"
#include "cli/sweep_support.hpp"

using mgbench::Status;
using mgbench::test::line_count;
using mgbench::test::run_mgbench;

namespace {

const std::string kConsent = " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
const std::string kQuietKeepDoctor = " --no-history --no-report --no-telemetry -q";

// Skips where mpirun cannot run; the selftest switch, and mpirun's consent to run as root.
std::string mpi_env() {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this mgbench was built without MPI");
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("mpirun is not on PATH (install openmpi-bin)");
  }
  return "MGBENCH_ENABLE_TEST_WORKLOADS=1" + kConsent;
}

struct Swept {
  int exit_code = -1;
  std::string err;
  bool has_results = false;
  mgbench::RunResult run;
};

// `mgbench sweep --workloads selftest --launcher mpirun ARGS` in a fresh directory.
Swept sweep(const std::string& env, const std::string& args,
            const std::string& quiet = kQuietKeepDoctor) {
  const std::string out = mgbench::test::temp_dir("mpi-place");
  const auto r = run_mgbench(
      "sweep --workloads selftest --launcher mpirun " + args + " --out " + out + quiet, env);
  Swept s{r.exit_code, r.err, std::filesystem::exists(out + "/results.json"), {}};
  if (s.has_results) s.run = mgbench::load_results(out + "/results.json");
  std::filesystem::remove_all(out);
  return s;
}

}  // namespace

TEST_CASE("mpirun as root without consent: exit 4, one line with the fix, no point failed") {
  const std::string env = mpi_env();
  if (::geteuid() != 0) mgbench::test::skip_test("OpenMPI refuses root only: run as root");
  const std::string refused =
      "env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM "
      "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2";
  const auto no = sweep(refused, "--gpus 1,2");
  INFO(no.err);
  CHECK(no.exit_code == 4);
  CHECK(line_count(no.err) == 1);
  CHECK(no.err.find("mpirun failed before any rank started (exit code 1): it refuses to run as "
                    "root") != std::string::npos);
  CHECK(no.err.find("--launcher-arg=--allow-run-as-root") != std::string::npos);
  for (const auto& p : no.run.points) CHECK(p.status != Status::failed);  // none are there
  const auto yes = sweep(refused, "--gpus 1,2 --launcher-arg=--allow-run-as-root");
  INFO(yes.err);
  CHECK(yes.exit_code == 0);
  REQUIRE(yes.run.points.size() == 2);
  for (const auto& p : yes.run.points) CHECK(p.status == Status::ok);
}

TEST_CASE("a launch that cannot place its ranks stops the sweep: one line, the rest skipped") {
  // Each task sees the fake GPU of its local rank, and there is one: rank 1 sees none.
  const std::string env =
      mpi_env() + " MGBENCH_TEST_FAKE_DEVICES=1 MGBENCH_TEST_FAKE_GPU_PER_TASK=1";
  const auto s = sweep(env, "--hosts localhost:2 --gpus 1,2 --param behavior=ok,brief");
  INFO(s.err);
  CHECK(s.exit_code == 4);
  CHECK(line_count(s.err) == 1);
  CHECK(s.err.find("mpirun: the ranks cannot be placed: rank ") != std::string::npos);
  CHECK(s.err.find("rank 1 on ") != std::string::npos);
  CHECK(s.err.find("sees no GPU") != std::string::npos);
  REQUIRE(s.run.points.size() == 4);
  CHECK(s.run.points[0].status == Status::ok);  // one rank: placed
  CHECK(s.run.points[1].status == Status::ok);
  for (std::size_t i = 2; i < 4; ++i) {
    INFO(s.run.points[i].message);
    CHECK(s.run.points[i].status == Status::skipped);  // for --resume, never `failed`
    CHECK(s.run.points[i].message.find("not run: mpirun: the ranks cannot be placed") == 0);
  }
}

TEST_CASE("an orchestrator that sees no GPU sweeps through ranks that do") {
  // The orchestrator's probe would find no device; the ranks get two fake GPUs from mpirun.
  const std::string env = mpi_env() + " MGBENCH_TEST_FAKE_DEVICES=0";
  const auto s = sweep(env, "--hosts localhost:2 --launcher-arg=-x "
                            "--launcher-arg=MGBENCH_TEST_FAKE_DEVICES=2");
  INFO(s.err);
  CHECK(s.exit_code == 0);
  REQUIRE(s.run.points.size() == 2);  // the default counts of the ranks' two GPUs: 1, 2
  for (const auto& p : s.run.points) CHECK(p.status == Status::ok);
  CHECK(s.run.environment.value("gpu_count", 0) == 2);
  CHECK(s.run.environment.value("fake_devices", false));
  CHECK(s.run.doctor.is_null());  // fake devices: no doctor checks, and none from this host
}

TEST_CASE("ranks that each see one GPU take it by identity, and the leader samples it by bus id") {
  const std::string env =
      mpi_env() + " MGBENCH_TEST_FAKE_DEVICES=2 MGBENCH_TEST_FAKE_GPU_PER_TASK=1";
  const auto s = sweep(env, "--hosts localhost:2 --gpus 1,2",
                       " --no-history --no-report --skip-doctor --no-telemetry");
  INFO(s.err);
  CHECK(s.exit_code == 0);
  CHECK(s.err.find("sees 1 of the node's 2 GPUs") == std::string::npos);  // the slots say 2
  REQUIRE(s.run.points.size() == 2);
  const auto& two = s.run.points[1];
  INFO(two.message);
  REQUIRE(two.status == Status::ok);
  const auto& ranks = two.extra.at("process_group").at("ranks");
  REQUIRE(ranks.size() == 2);
  std::set<std::string> buses;
  for (const auto& rank : ranks) {
    const int r = rank.at("rank").get<int>();
    CHECK(rank.at("device") == 0);  // its only GPU, whatever its local rank
    CHECK(rank.at("bus_id") == "0000:00:0" + std::to_string(r) + ".0");
    buses.insert(rank.at("bus_id").get<std::string>());
  }
  CHECK(buses.size() == 2);
}

TEST_CASE("two names of one machine in --hosts are one node, and no verdict is between nodes") {
  const std::string env = mpi_env() + " MGBENCH_TEST_FAKE_DEVICES=2";
  const auto s = sweep(env, "--hosts localhost:2,LOCALHOST:2,127.0.0.1:2 --gpus 1,2,4",
                       " --no-history --no-report --skip-doctor --no-telemetry");
  INFO(s.err);
  CHECK(s.exit_code == 0);
  CHECK(s.err.find("'LOCALHOST' is the machine 'localhost' already reaches") != std::string::npos);
  CHECK(s.err.find("'127.0.0.1' is the machine 'localhost' already reaches") != std::string::npos);
  CHECK(s.err.find("--gpus 4 left out: 4 GPUs need 2 nodes of 2, 1 known") != std::string::npos);
  REQUIRE(s.run.points.size() == 2);
  for (const auto& p : s.run.points) {
    CHECK(p.status == Status::ok);
    CHECK(p.placement.nodes == 1);
  }
  CHECK(mgbench::Json(s.run.verdicts).dump().find("between nodes") == std::string::npos);
}

TEST_CASE("a rank confined to one CPU is noted once for the whole sweep") {
  if (std::system("command -v taskset >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("taskset is not installed (util-linux)");
  }
  const std::string env = mpi_env() + " MGBENCH_TEST_FAKE_DEVICES=2 taskset -c 0";
  const auto s = sweep(env, "--gpus 1,2 --param behavior=ok,brief",
                       " --no-history --no-report --skip-doctor --no-telemetry");
  INFO(s.err);
  CHECK(s.exit_code == 0);
  const auto first = s.err.find("may run on one CPU only (0)");
  CHECK(first != std::string::npos);
  CHECK(s.err.find("may run on one CPU only", first + 1) == std::string::npos);
  CHECK(s.err.find("--cpus-per-task") != std::string::npos);
}

TEST_CASE("mpirun without --hosts refuses more GPUs per node than this host has (exit 2)") {
  const std::string env = mpi_env() + " MGBENCH_TEST_FAKE_DEVICES=2";
  const auto s = sweep(env, "--gpus-per-node 64 --gpus 1,64");
  INFO(s.err);
  CHECK(s.exit_code == 2);
  CHECK(line_count(s.err) == 1);
  CHECK(s.err.find("--gpus-per-node 64 asks for more GPUs than the 2 of this host") !=
        std::string::npos);
  CHECK_FALSE(s.has_results);
}
