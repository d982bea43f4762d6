// One process per GPU through mpirun, on this GPU-less machine: the CPU selftest workload over
// 1 to 4 ranks (fake devices). Bootstrap, every rank running rank 0's group, the gather to rank
// 0, two "hosts" on localhost, a rank that crashes, a rank that hangs (named with its host,
// rank 0 too), every node's telemetry (fake) gathered to rank 0, and Ctrl-C then --resume.
// Skipped (exit 77, with the reason) where mpirun or MPI support is missing.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"
#include "cli/sweep_support.hpp"

using mgbench::Status;
using mgbench::test::kQuiet;
using mgbench::test::run_mgbench;

namespace {

// The name MPI gives this machine's processes (MPI_Get_processor_name: the host name).
std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Skips the test where it cannot run; returns the environment of a selftest sweep with
// `devices` fake GPUs (and mpirun's consent to run as root, in the test only).
std::string mpi_env(int devices) {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this mgbench was built without MPI");
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("mpirun is not on PATH (install openmpi-bin)");
  }
  std::string env = "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=" +
                    std::to_string(devices);
  if (::geteuid() == 0) env += " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
  return env;
}

const std::string kMpirun = " --workloads selftest --launcher mpirun";

// The journal's finished (not skipped) point lines: index -> how many, and their start times.
std::map<std::size_t, std::vector<std::string>> finished_lines(const std::string& journal) {
  std::map<std::size_t, std::vector<std::string>> lines;
  std::istringstream in(mgbench::test::read_text(journal));
  for (std::string line; std::getline(in, line);) {
    const auto record = mgbench::Json::parse(line, nullptr, false);
    if (!record.is_object() || record.value("type", "") != "point") continue;
    const auto& result = record.at("result");
    if (result.value("status", "") == "skipped") continue;  // run again by --resume
    lines[result.at("index").get<std::size_t>()].push_back(result.value("started_at", ""));
  }
  return lines;
}

// Checks what every rank reported through the gather: n ranks, values 1..n, rank 0's group.
void check_gathered(const mgbench::PointResult& p) {
  const auto& group = p.extra.at("process_group");
  CHECK(group.at("size") == p.gpus);
  CHECK(group.at("sum") == p.gpus * (p.gpus + 1) / 2);
  REQUIRE(group.at("ranks").size() == static_cast<std::size_t>(p.gpus));
  for (const auto& rank : group.at("ranks")) CHECK(rank.at("same_plan") == true);
}

// `mgbench sweep --workloads selftest --launcher mpirun ARGS` (quiet, in a fresh directory):
// its exit code, results.json and stderr.
struct Swept {
  int exit_code = -1;
  mgbench::RunResult run;
  std::string err;
};
Swept sweep_mpirun(const std::string& args, int devices, const std::string& extra_env = "",
                   const std::string& quiet = kQuiet) {
  const std::string env = mpi_env(devices) + extra_env;
  const std::string out = mgbench::test::temp_dir("mpi-sweep");
  const auto r = run_mgbench("sweep" + kMpirun + " " + args + " --out " + out + quiet, env);
  Swept swept{r.exit_code, {}, r.err};
  INFO(r.err);
  REQUIRE(std::filesystem::exists(out + "/results.json"));
  swept.run = mgbench::load_results(out + "/results.json");
  std::filesystem::remove_all(out);
  return swept;
}

}  // namespace

TEST_CASE("mpirun: groups of 1 to 4 ranks start, run rank 0's group and gather to rank 0") {
  const auto [exit_code, run, err] = sweep_mpirun("--gpus 1,2,3,4 --oversubscribe", 4);
  INFO(err);
  CHECK(exit_code == 0);
  REQUIRE(run.points.size() == 4);
  for (const auto& p : run.points) {
    INFO("point " << p.index);
    CHECK(p.status == Status::ok);
    CHECK(p.placement.process_model == mgbench::ProcessModel::processes);
    CHECK(p.placement.launcher == mgbench::Launcher::mpirun);
    CHECK(p.placement.nodes == 1);
    CHECK(p.placement.gpus_per_node == p.gpus);
    check_gathered(p);
  }
}

TEST_CASE("mpirun: --gpus 1,2,4 over two hosts of 2 GPUs: 4 GPUs run on 2 nodes") {
  // Two names of this machine are one node unless the hook makes each rank pair a node.
  const auto [exit_code, run, err] = sweep_mpirun("--gpus 1,2,4 --hosts localhost:2,127.0.0.1:2",
                                                  2, " MGBENCH_TEST_RANKS_PER_NODE=2");
  INFO(err);
  CHECK(exit_code == 0);
  REQUIRE(run.points.size() == 3);
  for (const auto& p : run.points) {
    INFO("point " << p.index << " on " << p.gpus << " GPU(s)");
    CHECK(p.status == Status::ok);
    CHECK(p.placement.nodes == (p.gpus == 4 ? 2 : 1));
    CHECK(p.placement.gpus_per_node == (p.gpus == 4 ? 2 : p.gpus));
    CHECK(p.devices.size() == static_cast<std::size_t>(p.placement.gpus_per_node));
    check_gathered(p);
  }
  CHECK(run.points[2].placement.hosts == std::vector<std::string>{"localhost", "127.0.0.1"});
  CHECK(run.points[0].placement.hosts == std::vector<std::string>{"localhost"});
}

TEST_CASE("mpirun: an MPI without thread support ends the sweep with one line and exit 4") {
  const std::string out = mgbench::test::temp_dir("mpi-thread-level");
  const auto r = run_mgbench("sweep" + kMpirun + " --gpus 1,2 --out " + out + kQuiet,
                             mpi_env(2) + " MGBENCH_TEST_MPI_THREAD_LEVEL=1");  // FUNNELED
  INFO(r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("grants thread level 1 below MPI_THREAD_SERIALIZED") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 1);
  std::filesystem::remove_all(out);
  // The level asked for is enough.
  const auto [exit_code, run, err] = sweep_mpirun("--gpus 2", 2, " MGBENCH_TEST_MPI_THREAD_LEVEL=2");
  INFO(err);
  CHECK(exit_code == 0);
  CHECK(run.points.at(0).status == Status::ok);
}

TEST_CASE("mpirun: a rank that crashes costs its point only, with its rank and host") {
  const auto [exit_code, run, err] =
      sweep_mpirun("--gpus 2 --param behavior=ok,rank-crash,ok", 2);
  INFO(err);
  CHECK(exit_code == 4);
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == Status::ok);
  CHECK(run.points[1].status == Status::failed);
  INFO(run.points[1].message);
  CHECK(run.points[1].message.find("rank 1 on ") != std::string::npos);
  CHECK(run.points[1].message.find("signal 6") != std::string::npos);
  CHECK(run.points[1].placement.process_model == mgbench::ProcessModel::processes);
  CHECK(run.points[2].status == Status::ok);  // a fresh launch ran the rest
}

TEST_CASE("mpirun: a rank that hangs times its point out, and the next group still runs") {
  const auto [exit_code, run, err] =
      sweep_mpirun("--param behavior=rank-hang --gpus 1,2 --group-timeout 2", 2);
  INFO(err);
  CHECK(exit_code == 4);
  REQUIRE(run.points.size() == 2);
  // One rank: the last rank is rank 0 and hangs itself; two: rank 1 hangs, rank 0 waits for
  // it. The first launch's timeout does not stop the second group from being launched.
  for (const auto& p : run.points) {
    CHECK(p.status == Status::timeout);
    CHECK(p.message.find("--group-timeout") != std::string::npos);
  }
}

TEST_CASE("mpirun: a hung rank is named with its host and step and a fresh launch runs the rest") {
  const auto [exit_code, run, err] = sweep_mpirun(
      "--gpus 3 --oversubscribe --param behavior=ok,rank-hang,ok --group-timeout 8", 3);
  INFO(err);
  CHECK(exit_code == 4);
  REQUIRE(run.points.size() == 3);
  CHECK(run.points[0].status == Status::ok);
  const auto& hung = run.points[1];
  INFO(hung.message);
  CHECK(hung.status == Status::timeout);
  // Rank 0 waited for rank 2 at the plan's broadcast, a quarter of the group timeout.
  CHECK(hung.message.find("rank 2 on " + this_host() + " did not reach 'point 1: ") == 0);
  CHECK(hung.message.find("--group-timeout") != std::string::npos);
  CHECK(run.points[2].status == Status::ok);  // a fresh launch: nothing finished is lost
  check_gathered(run.points[2]);
}

TEST_CASE("mpirun: a hung rank 0 is named with its host") {
  const auto [exit_code, run, err] =
      sweep_mpirun("--gpus 2 --param behavior=rank0-hang,ok --group-timeout 6", 2);
  INFO(err);
  CHECK(exit_code == 4);
  REQUIRE(run.points.size() == 2);
  INFO(run.points[0].message);
  CHECK(run.points[0].status == Status::timeout);
  CHECK(run.points[0].message.find("rank 0 on " + this_host() + " made no progress") == 0);
  CHECK(run.points[1].status == Status::ok);
}

TEST_CASE("mpirun: every node leader samples its GPUs and rank 0 merges them with their hosts") {
  const auto [exit_code, run, err] =
      sweep_mpirun("--gpus 1,2,4 --hosts localhost:2,127.0.0.1:2", 2,
                   " MGBENCH_TEST_FAKE_TELEMETRY=1 MGBENCH_TEST_RANKS_PER_NODE=2",
                   " --no-history --no-report --skip-doctor -q");  // telemetry on
  INFO(err);
  CHECK(exit_code == 0);
  REQUIRE(run.points.size() == 3);
  for (const auto& p : run.points) {
    INFO("point " << p.index << " on " << p.gpus << " GPU(s)");
    CHECK(p.status == mgbench::Status::ok);
    REQUIRE(p.telemetry.is_object());
    const auto& gpus = p.telemetry.at("gpus");
    REQUIRE(gpus.size() == static_cast<std::size_t>(p.gpus));
    REQUIRE(p.telemetry.at("series").at("per_gpu").size() == gpus.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      CHECK(gpus[i].at("node") == static_cast<int>(i) / 2);  // nodes of two ranks
      CHECK(gpus[i].at("device") == static_cast<int>(i) % 2);
      CHECK(gpus[i].at("host") == this_host());
      CHECK(gpus[i].at("power_w").at("mean") == 500.0 + 10.0 * static_cast<double>(i % 2));
    }
  }
  // The run's series: one line per node and GPU (node 1's GPU 0 is not node 0's).
  CHECK(run.telemetry_series.at("per_gpu").size() == 4);
}

TEST_CASE("mpirun: Ctrl-C stops the sweep, --resume runs the rest, nothing twice") {
  const std::string env = mpi_env(2);
  const std::string out = mgbench::test::temp_dir("mpi-resume");
  const std::string plan = "sweep" + kMpirun + " --gpus 1,2 --param behavior=brief"
                           " --param batch=1,2,3,4,5,6";
  std::ostringstream script;
  script << "export " << env << "\n\"$MGBENCH\" " << plan << " --out " << out << kQuiet
         << " 2>/dev/null & pid=$!\n"
         << "for i in $(seq 1000); do grep -qs '\"type\":\"point\"' " << out
         << "/journal.jsonl && break; sleep 0.01; done\n"
         << "kill -INT $pid\nwait $pid";
  CHECK(mgbench::test::run_script(script.str()) == 130);
  const auto before = finished_lines(out + "/journal.jsonl");
  CHECK(!before.empty());
  CHECK(before.size() < 12);
  // The launcher is the journal's (mpirun): its words may be given without --launcher again.
  const auto r =
      run_mgbench("sweep --resume " + out + " --launcher-arg=--allow-run-as-root" + kQuiet, env);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 12);
  for (const auto& p : run.points) {
    CHECK(p.status == Status::ok);
    CHECK(p.placement.launcher == mgbench::Launcher::mpirun);
  }
  const auto after = finished_lines(out + "/journal.jsonl");
  CHECK(after.size() == 12);
  for (const auto& [index, starts] : after) CHECK(starts.size() == 1);  // nothing ran twice
  for (const auto& [index, starts] : before) {
    CHECK(run.points[index].started_at == starts.front());  // a finished point was kept
  }
  std::filesystem::remove_all(out);
}
