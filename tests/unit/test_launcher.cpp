// Launchers: host lists and hostfiles, the GPUs per node, the plan across nodes, the launch
// command lines and the default launcher.
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/plan.hpp"

namespace {

const bool registered = mgbench::register_workload(
    mgbench::Workload("zz_test_launch")
        .summary("test-only workload")
        .axis(mgbench::Axis::integer("batch", {"8"}))
        .throughput("x", "units"));

mgbench::SweepOptions launch_options(mgbench::Launcher launcher, std::vector<int> gpus) {
  mgbench::SweepOptions o;
  o.workloads = {"zz_test_launch"};
  o.gpu_counts = std::move(gpus);
  o.launch.launcher = launcher;
  return o;
}

bool contains(const std::vector<std::string>& words, const std::string& word) {
  for (const auto& w : words) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("launcher: host lists and hostfiles parse, malformed ones are usage errors") {
  const auto hosts = mgbench::parse_host_list("node-a:8,10.0.0.2:8,node_c");
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].host == "node-a");
  CHECK(hosts[0].slots == 8);
  CHECK(hosts[1].host == "10.0.0.2");
  CHECK(hosts[2].slots == 0);
  for (const char* bad : {"", "a:0", "a:x", "a:8,a:8", "bad host:2", "-x:1", "a:99999", "a;b"}) {
    INFO(bad);
    CHECK_THROWS_AS(mgbench::parse_host_list(bad), mgbench::UsageError);
  }
  const auto file = mgbench::parse_hostfile_text(
      "# two nodes\n\nnode1 slots=4 max_slots=8\n  node2   slots=4  # the second\n", "hf");
  REQUIRE(file.size() == 2);
  CHECK(file[1].host == "node2");
  CHECK(file[1].slots == 4);
  for (const char* bad : {"# nothing\n", "node1 slots=four\n", "node1 cpus=4\n",
                          "node1 slots=2\nnode1 slots=2\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(mgbench::parse_hostfile_text(bad, "hf"), mgbench::UsageError);
  }
  CHECK_THROWS_AS(mgbench::parse_hostfile("/nonexistent/hostfile"), mgbench::UsageError);
}

TEST_CASE("launcher: GPUs per node come from the option, else the slots, else this host") {
  mgbench::LaunchOptions l;
  l.launcher = mgbench::Launcher::mpirun;
  CHECK(mgbench::planned_gpus_per_node(l, 3) == 3);
  l.hosts = mgbench::parse_host_list("a:8,b:8");
  CHECK(mgbench::planned_gpus_per_node(l, 3) == 8);
  l.gpus_per_node = 4;
  CHECK(mgbench::planned_gpus_per_node(l, 3) == 4);
  l.gpus_per_node = 0;
  l.hosts = mgbench::parse_host_list("a:8,b:4");
  CHECK_THROWS_AS(mgbench::planned_gpus_per_node(l, 3), mgbench::UsageError);
}

TEST_CASE("launcher: the planner fills nodes and leaves out counts that do not fit") {
  REQUIRE(registered);
  auto o = launch_options(mgbench::Launcher::mpirun, {1, 2, 4, 6, 8, 16});
  o.launch.hosts = mgbench::parse_host_list("n1:4,n2:4");
  const auto plan = mgbench::make_plan(o, 4);
  CHECK(plan.gpu_counts == std::vector<int>{1, 2, 4, 8});
  REQUIRE(plan.groups.size() == 4);
  const auto& one = plan.groups[0].placement;
  CHECK(one.process_model == mgbench::ProcessModel::processes);
  CHECK(one.nodes == 1);
  CHECK(one.hosts == std::vector<std::string>{"n1"});
  const auto& eight = plan.groups[3];
  CHECK(eight.placement.nodes == 2);
  CHECK(eight.placement.gpus_per_node == 4);
  CHECK(eight.placement.hosts == std::vector<std::string>{"n1", "n2"});
  CHECK(eight.gpus() == 8);
  CHECK(eight.devices == std::vector<int>{0, 1, 2, 3});
  REQUIRE(plan.notes.size() == 2);
  CHECK(plan.notes[0].find("--gpus 6 left out") != std::string::npos);
  CHECK(plan.notes[1].find("--gpus 16 left out: 16 GPUs need 4 nodes") != std::string::npos);
  const auto json = mgbench::plan_to_json(plan);
  CHECK(json["groups"][3]["nodes"] == 2);
}

TEST_CASE("launcher: a local plan records one node of threads, and stops at this host") {
  auto o = launch_options(mgbench::Launcher::local, {1, 2});
  const auto plan = mgbench::make_plan(o, 2);
  REQUIRE(plan.groups.size() == 2);
  CHECK(plan.groups[1].placement.process_model == mgbench::ProcessModel::threads);
  CHECK(plan.groups[1].placement.gpus_per_node == 2);
  CHECK(plan.groups[1].placement.hosts.size() == 1);
  o.gpu_counts = {4};
  CHECK_THROWS_AS(mgbench::make_plan(o, 2), mgbench::UsageError);
}

TEST_CASE("launcher: mpirun and srun command lines") {
  mgbench::Placement two{mgbench::ProcessModel::processes, mgbench::Launcher::mpirun, 2,
                         {"n1", "n2"}, 4};
  mgbench::LaunchOptions l;
  l.launcher = mgbench::Launcher::mpirun;
  l.oversubscribe = true;
  const auto mpirun = mgbench::launch_prefix(l, two);
  REQUIRE(mpirun.size() >= 5);
  CHECK(mpirun[0] == "mpirun");
  CHECK(mpirun[2] == "8");
  CHECK(contains(mpirun, "n1:4,n2:4"));
  CHECK(contains(mpirun, "--oversubscribe"));
  CHECK(mgbench::worker_arguments(l.launcher) == std::vector<std::string>{"worker", "--mpi"});
  const std::string line = mgbench::launch_command_line(l, two);
  CHECK(line.find("mpirun -np 8 --host n1:4,n2:4 --oversubscribe") == 0);
  CHECK(line.find("mgbench worker --mpi") != std::string::npos);
  l.launcher = mgbench::Launcher::srun;
  const auto srun = mgbench::launch_prefix(l, two);
  CHECK(srun[0] == "srun");
  CHECK(contains(srun, "--nodes=2"));
  CHECK(contains(srun, "--ntasks=8"));
  CHECK(contains(srun, "--ntasks-per-node=4"));
  CHECK(contains(srun, "--nodelist=n1,n2"));
  l.launcher = mgbench::Launcher::local;
  CHECK(mgbench::launch_prefix(l, two).empty());
}

TEST_CASE("launcher: srun is the default inside a Slurm allocation") {
  ::unsetenv("SLURM_JOB_ID");
  CHECK(mgbench::default_launcher() == mgbench::Launcher::local);
  ::setenv("SLURM_JOB_ID", "42", 1);
  CHECK(mgbench::default_launcher() == mgbench::Launcher::srun);
  ::unsetenv("SLURM_JOB_ID");
}

TEST_CASE("launcher: a missing mpirun or srun is an environment error naming the package") {
  const char* old = std::getenv("PATH");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("PATH", "/nonexistent", 1);
  for (auto launcher : {mgbench::Launcher::mpirun, mgbench::Launcher::srun}) {
    try {
      mgbench::check_launcher_available(launcher, true);
      FAIL("accepted a launcher that is not on PATH");
    } catch (const mgbench::EnvironmentError& e) {
      const std::string what = e.what();
      CHECK(what.find(mgbench::built_with_mpi() ? "not on PATH" : "without MPI") !=
            std::string::npos);
    }
  }
  CHECK_NOTHROW(mgbench::check_launcher_available(mgbench::Launcher::local, true));
  ::setenv("PATH", saved.c_str(), 1);
}
