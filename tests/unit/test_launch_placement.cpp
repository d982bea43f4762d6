// Launching ranks elsewhere: the variables mpirun forwards, words passed through to the
// launcher, long host lists through a file, one-line reasons for launches that never started,
// exec failures named as such, the probe's placement, and where each rank really runs (its GPU
// taken by identity, selected before MPI starts; notes on its CPUs; aliases of one machine).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/platform/command_capture.hpp"
#include "mgbench/platform/subprocess.hpp"
#include "mgbench/run/launch_probe.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/rank_placement.hpp"
#include "mgbench/run/worker.hpp"
#include "mgbench/run/worker_protocol.hpp"
#include "support.hpp"

using namespace mgbench;
using Strings = std::vector<std::string>;

namespace {

bool has(const Strings& words, const std::string& word) {
  for (const auto& w : words) {
    if (w == word) return true;
  }
  return false;
}

// "-x NAME" in a command line.
bool forwards(const Strings& words, const std::string& name) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-x" && words[i + 1] == name) return true;
  }
  return false;
}

// Sets variables for one test case and restores them.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      if (value) {
        ::setenv(name, value, 1);
      } else {
        ::unsetenv(name);
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

const Placement kTwoNodes{ProcessModel::processes, Launcher::mpirun, 2, {"n1", "n2"}, 4};

RankFacts facts(int rank, int local, const std::string& node, Strings gpus) {
  RankFacts f;
  f.rank = rank;
  f.local_rank = local;
  f.host = "h-" + node;
  f.node = node;
  f.gpus = std::move(gpus);
  f.gpu_cpus.assign(f.gpus.size(), "");
  f.cpus = "0-7";
  return f;
}

// OpenMPI 4.1's refusal, as it prints it.
const char* kRootRefusal =
    "--------------------------------------------------------------------------\n"
    "mpirun has detected an attempt to run as root.\n\n"
    "Running as root is *strongly* discouraged as any mistake (e.g., in\n"
    "defining TMPDIR) or bug can result in catastrophic damage to the OS\n"
    "You can override this protection by adding the --allow-run-as-root option\n"
    "--------------------------------------------------------------------------\n";

}  // namespace

TEST_CASE("mpirun forwards a documented set of variables, the user's names, never a rank's own") {
  const ScopedEnv env{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                      {"LD_LIBRARY_PATH", "/opt/nccl/lib"}, {"UCX_TLS", "rc"},
                      {"OMPI_MCA_btl", "^openib"}, {"PMIX_MCA_gds", "hash"},
                      {"NCCL_DEBUG", "INFO"}, {"OMPI_COMM_WORLD_RANK", "3"},
                      {"PMIX_RANK", "3"}, {"MY_SETTING", "1"}, {"MYPFX_A", "1"},
                      {"MYPFX_B", "2"}, {"UNRELATED", "1"}};
  LaunchOptions l;
  l.launcher = Launcher::mpirun;
  Strings words = launch_prefix(l, kTwoNodes);
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH",
                           "UCX_TLS", "OMPI_MCA_btl", "PMIX_MCA_gds", "NCCL_DEBUG"}) {
    INFO(name);
    CHECK(forwards(words, name));
  }
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MY_SETTING", "MYPFX_A",
                           "UNRELATED"}) {
    INFO(name);
    CHECK_FALSE(forwards(words, name));
  }
  l.forward_env = {"MY_SETTING", "MYPFX_*"};
  words = launch_prefix(l, kTwoNodes);
  CHECK(forwards(words, "MY_SETTING"));
  CHECK(forwards(words, "MYPFX_A"));
  CHECK(forwards(words, "MYPFX_B"));
  CHECK_FALSE(forwards(words, "UNRELATED"));
  CHECK(forwarded_variables({"CUDA_*"}).size() == forwarded_variables({}).size());  // once each
  for (const char* bad : {"", "*", "1ABC", "A-B", "A B", "A*B"}) {
    INFO(bad);
    CHECK_THROWS_AS(check_forward_name(bad), UsageError);
  }
  CHECK_NOTHROW(check_forward_name("MY_VAR_1"));
  CHECK_NOTHROW(check_forward_name("PFX_*"));
}

TEST_CASE("the words of --launcher-arg follow mgbench's own, and srun binds no CPU of its own") {
  LaunchOptions l;
  l.launcher = Launcher::mpirun;
  l.launcher_args = {"--allow-run-as-root", "--mca", "btl", "tcp,self"};
  const Strings mpirun = launch_prefix(l, kTwoNodes);
  REQUIRE(mpirun.size() > 4);
  CHECK(Strings(mpirun.end() - 4, mpirun.end()) == l.launcher_args);
  CHECK(has(mpirun, "none"));  // --bind-to none, before the user's words
  l.launcher = Launcher::srun;
  l.launcher_args = {"--cpus-per-task=8"};
  const Strings srun = launch_prefix(l, kTwoNodes);
  CHECK(has(srun, "--cpu-bind=none"));
  CHECK(srun.back() == "--cpus-per-task=8");
  CHECK(worker_arguments(Launcher::srun, {2, 3}) == Strings{"worker", "--mpi", "--devices", "2,3"});
  CHECK(worker_arguments(Launcher::mpirun) == Strings{"worker", "--mpi"});
}

TEST_CASE("a long host list goes to the launcher through a file, never as one huge argument") {
  Placement many{ProcessModel::processes, Launcher::mpirun, 700, {}, 1};
  for (int i = 0; i < 700; ++i) many.hosts.push_back(std::string(240, 'h') + std::to_string(i));
  REQUIRE(hosts_need_file(many));
  CHECK_FALSE(hosts_need_file(kTwoNodes));
  LaunchOptions l;
  l.launcher = Launcher::mpirun;
  const Strings words = launch_prefix(l, many, "/tmp/hostfile");
  CHECK(has(words, "--hostfile"));
  CHECK(has(words, "/tmp/hostfile"));
  CHECK_FALSE(has(words, "--host"));
  for (const auto& w : words) CHECK(w.size() < 4096);
  const std::string text = hostfile_text(Launcher::mpirun, many);
  CHECK(text.rfind(many.hosts[0] + " slots=1\n", 0) == 0);
  CHECK(text.size() > 700 * 240);
  const std::string last = many.hosts.back() + " slots=1\n";
  CHECK(text.compare(text.size() - last.size(), last.size(), last) == 0);
  l.launcher = Launcher::srun;
  CHECK(has(launch_prefix(l, many, "/tmp/hostfile"), "--nodelist=/tmp/hostfile"));
  CHECK(hostfile_text(Launcher::srun, many).rfind(many.hosts[0] + "\n", 0) == 0);
  // The prepared launch writes the file, names it, and removes it with itself.
  std::string path;
  {
    const PreparedLaunch launch(l, many);
    const auto& prefix = launch.prefix();
    for (const auto& w : prefix) {
      if (w.rfind("--nodelist=", 0) == 0) path = w.substr(11);
    }
    REQUIRE(!path.empty());
    CHECK(test::read_text(path) == hostfile_text(Launcher::srun, many));
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a program that cannot be executed is named with the exec's own reason") {
  const std::string huge(200000, 'a');  // one argument over the kernel's 128 KiB limit
  try {
    WorkerProcess worker({"worker", huge}, "", {"true"});
    FAIL("started a launcher with an argument of 200000 characters");
  } catch (const EnvironmentError& e) {
    CHECK(std::string(e.what()).find("cannot start true: Argument list too long") == 0);
  }
  try {
    (void)run_and_capture({"true", huge}, 10, 1024);
    FAIL("ran a program with an argument of 200000 characters");
  } catch (const EnvironmentError& e) {
    CHECK(std::string(e.what()).find("Argument list too long") != std::string::npos);
  }
  const CapturedOutput ok = run_and_capture({"sh", "-c", "echo out; echo err >&2"}, 10, 1024);
  CHECK(ok.out == "out\n");
  CHECK(ok.err == "err\n");
}

TEST_CASE("a launcher that ends before reading its input does not end the orchestrator") {
  // `true` exits at once: a megabyte of input meets a pipe nobody reads (SIGPIPE, EPIPE).
  for (int i = 0; i < 3; ++i) {
    WorkerProcess worker({"worker"}, std::string(1 << 20, 'x'), {"true"});
    const ExitInfo exit = worker.wait();
    CHECK(exit.exited);
    CHECK(exit.code == 0);
  }
}

TEST_CASE("a launch that never started is one line: the cause and the fix") {
  const std::string root = launch_failure_line(Launcher::mpirun, "exit code 1", kRootRefusal);
  CHECK(root.find("mpirun failed before any rank started (exit code 1)") == 0);
  CHECK(root.find("--launcher-arg=--allow-run-as-root") != std::string::npos);
  CHECK(root.find("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1") != std::string::npos);
  CHECK(root.find('\n') == std::string::npos);
  CHECK(launch_failure_line(Launcher::mpirun, "exit code 1",
                            "There are not enough slots available in the system")
            .find("--oversubscribe") != std::string::npos);
  const std::string other =
      launch_failure_line(Launcher::srun, "exit code 1",
                          "-----\n\n  srun: error: Invalid node name\nmore\n");
  CHECK(other == "srun failed before any rank started (exit code 1): srun: error: Invalid node "
                 "name (-v shows all it printed)");
  CHECK(launch_failure_line(Launcher::srun, "exit code 1", "") ==
        "srun failed before any rank started (exit code 1) and printed nothing");
}

TEST_CASE("the device probe of a launched sweep is one rank on each known node") {
  LaunchOptions l;
  l.launcher = Launcher::mpirun;
  Placement p = probe_placement(l);
  CHECK(p.nodes == 1);
  CHECK(p.hosts.empty());
  CHECK(p.gpus_per_node == 1);
  l.hosts = parse_host_list("a:8,b:8,c:8");
  p = probe_placement(l);
  CHECK(p.nodes == 3);
  CHECK(p.hosts == Strings{"a", "b", "c"});
  CHECK(launch_prefix(l, p)[2] == "3");
  CHECK(has(launch_prefix(l, p), "a:1,b:1,c:1"));
  const ScopedEnv env{{"SLURM_JOB_NUM_NODES", "4"}};
  LaunchOptions s;
  s.launcher = Launcher::srun;
  CHECK(probe_placement(s).nodes == 4);
}

TEST_CASE("ranks that see the same GPUs take the plan's, ranks that see their own take theirs") {
  const auto same = map_node_devices(
      {facts(0, 0, "n", {"A", "B"}), facts(1, 1, "n", {"A", "B"})}, {0, 1});
  CHECK(same.ordinals == std::vector<int>{0, 1});
  CHECK(same.bus_ids == Strings{"A", "B"});
  CHECK_FALSE(same.per_task);
  CHECK(map_node_devices({facts(0, 0, "n", {"A", "B"})}, {1}).bus_ids == Strings{"B"});
  // A plan that lists GPU 0 twice (several ranks on one GPU, as the MPI GPU tests run) is kept.
  const auto twice = map_node_devices({facts(0, 0, "n", {"A"}), facts(1, 1, "n", {"A"})}, {0, 0});
  CHECK(twice.ordinals == std::vector<int>{0, 0});
  CHECK(twice.bus_ids == Strings{"A", "A"});
  // srun --gpus-per-task=1: every task sees one GPU, its ordinal 0.
  const auto own = map_node_devices(
      {facts(0, 0, "n", {"A"}), facts(1, 1, "n", {"B"}), facts(2, 2, "n", {"C"})}, {0, 1, 2});
  CHECK(own.per_task);
  CHECK(own.ordinals == std::vector<int>{0, 0, 0});
  CHECK(own.bus_ids == Strings{"A", "B", "C"});
  // Two GPUs per task: the ranks that see one pair take its GPUs in turn.
  const auto pairs = map_node_devices({facts(0, 0, "n", {"A", "B"}), facts(1, 1, "n", {"A", "B"}),
                                       facts(2, 2, "n", {"C", "D"}), facts(3, 3, "n", {"C", "D"})},
                                      {0, 1, 2, 3});
  CHECK(pairs.ordinals == std::vector<int>{0, 1, 0, 1});
  CHECK(pairs.bus_ids == Strings{"A", "B", "C", "D"});
  auto refused = [](const std::vector<RankFacts>& node, std::vector<int> planned,
                    const std::string& words) {
    try {
      (void)map_node_devices(node, planned);
      return false;
    } catch (const EnvironmentError& e) {
      return std::string(e.what()).find(words) != std::string::npos;
    }
  };
  CHECK(refused({facts(0, 0, "n", {"A", "B"}), facts(1, 1, "n", {"A"})}, {0, 1}, "would share"));
  CHECK(refused({facts(0, 0, "n", {"A"}), facts(1, 1, "n", {"A"})}, {0, 1}, "GPU 1 of its place"));
  CHECK(refused({facts(0, 0, "n", {"A"}), facts(1, 1, "n", {})}, {0, 1},
                "rank 1 on h-n sees no GPU"));
  CHECK(refused({facts(0, 0, "n", {"A", "B"})}, {2}, "GPU 2 of its place is not among them"));
  CHECK(refused({facts(0, 0, "n", {"A", "B"}), facts(1, 1, "n", {"A", "B"})}, {0},
                "local rank 1, but its node has 1 GPU(s)"));
  const std::vector<RankFacts> all{facts(2, 0, "m", {"A"}), facts(0, 1, "n", {"B"}),
                                   facts(1, 0, "n", {"C"})};
  const auto on_n = ranks_on_node(all, "n");
  REQUIRE(on_n.size() == 2);
  CHECK(on_n[0].rank == 1);  // local-rank order
  const RankFacts back = Json(all[0]).get<RankFacts>();
  CHECK(back.node == "m");
  CHECK(back.gpus == Strings{"A"});
}

TEST_CASE("a rank selects its GPU before MPI starts, from its launcher's local rank") {
  CHECK(device_before_mpi(std::nullopt, {0, 1}, 1) == 0);  // it sees one: that one
  CHECK(device_before_mpi(1, {0, 1}, 2) == 1);
  CHECK(device_before_mpi(1, {4, 5}, 8) == 5);
  CHECK(device_before_mpi(2, {0, 1}, 8) == -1);   // no place for it
  CHECK(device_before_mpi(std::nullopt, {0, 1}, 8) == -1);
  CHECK(device_before_mpi(0, {3}, 2) == -1);      // not visible
  CHECK(device_before_mpi(0, {0}, 0) == -1);
  {
    const ScopedEnv env{{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"SLURM_LOCALID", "1"},
                        {"MGBENCH_ENABLE_TEST_WORKLOADS", nullptr}};
    CHECK(launcher_local_rank() == 3);
  }
  {
    const ScopedEnv env{{"OMPI_COMM_WORLD_LOCAL_RANK", nullptr}, {"SLURM_LOCALID", "2"}};
    CHECK(launcher_local_rank() == 2);
  }
  {
    const ScopedEnv env{{"OMPI_COMM_WORLD_LOCAL_RANK", nullptr}, {"SLURM_LOCALID", nullptr},
                        {"MPI_LOCALRANKID", nullptr}, {"PMI_LOCAL_RANK", nullptr}};
    CHECK_FALSE(launcher_local_rank().has_value());
  }
  {
    const ScopedEnv env{{"MGBENCH_ENABLE_TEST_WORKLOADS", "1"},
                        {"MGBENCH_TEST_RANKS_PER_NODE", "2"}, {"OMPI_COMM_WORLD_RANK", "5"},
                        {"OMPI_COMM_WORLD_LOCAL_RANK", "5"}};
    CHECK(launcher_local_rank() == 1);  // the hook's nodes of two ranks
  }
}

TEST_CASE("a node leader finds its node's GPUs by the bus ids their ranks reported") {
  const BusIdResolver by_place = bus_ids_by_place({4, 5}, {"0000:19:00.0", "0000:3B:00.0"});
  CHECK(by_place(4) == "0000:19:00.0");
  CHECK(by_place(5) == "0000:3B:00.0");
  CHECK(by_place(0).empty());  // not a device of the plan: no GPU rather than the wrong one
  CHECK(bus_ids_by_place({0, 1}, {"A"})(1).empty());
}

TEST_CASE("rank 0's notes: a rank on one CPU, CPUs far from the GPU, one machine twice") {
  auto f0 = facts(0, 0, "n", {"A"});
  auto f1 = facts(1, 1, "n", {"B"});
  f0.gpu_cpus = {"0-15"};
  f1.gpu_cpus = {"16-31"};
  f1.cpus = "16-23";
  CHECK(launch_notes({f0, f1}, {"A", "B"}, 1, false).empty());  // each near its GPU
  f1.cpus = "0-7";
  f0.cpus = "3";
  const auto notes = launch_notes({f0, f1}, {"A", "B"}, 2, true);
  REQUIRE(notes.size() == 4);
  CHECK(notes[0].kind == "one_cpu");
  CHECK(notes[0].text.find("rank 0 on h-n may run on one CPU only (3)") == 0);
  CHECK(notes[1].kind == "remote_cpus");
  CHECK(notes[1].text.find("rank 1 on h-n runs on CPUs 0-7, none of them local to its GPU B "
                           "(CPUs 16-31)") == 0);
  CHECK(notes[2].kind == "machines");
  CHECK(notes[2].text.find("1 machine(s), not on the 2 node(s)") != std::string::npos);
  CHECK(notes[3].kind == "devices_ignored");
}

TEST_CASE("two names of one machine in the host list count as one node") {
  const auto hosts = parse_host_list("localhost:2,LOCALHOST:2,other:2");
  std::vector<NodeReport> nodes(3);
  nodes[0].node = nodes[1].node = "vm/boot";
  nodes[0].host = nodes[1].host = "vm";
  nodes[2].node = "other/boot";
  Strings warnings;
  const auto kept = distinct_hosts(hosts, nodes, &warnings);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].host == "localhost");
  CHECK(kept[1].host == "other");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("'LOCALHOST' is the machine 'localhost' already reaches (vm)") !=
        std::string::npos);
  nodes[1].node = "vm/boot#node1";  // the test hook's second node on this machine
  CHECK(distinct_hosts(hosts, nodes, nullptr).size() == 3);
}

TEST_CASE("the nodes of a launched sweep are compared on what their ranks loaded") {
  std::vector<NodeReport> nodes(2);
  nodes[0].host = "a";
  nodes[1].host = "b";
  nodes[0].environment = Json{{"versions", {{"nccl_loaded", "2.28.3"}}}, {"gpu_count", 8}};
  nodes[1].environment = Json{{"versions", {{"nccl_loaded", "2.21.5"}}}, {"gpu_count", 8}};
  CHECK(node_checks({nodes[0]}).empty());
  const auto checks = node_checks(nodes);
  bool nccl_failed = false;
  for (const auto& c : checks) {
    if (c.name == "hosts_nccl") nccl_failed = c.status == CheckStatus::fail;
  }
  CHECK(nccl_failed);
  Json doctor = doctor_to_json({{"driver", CheckStatus::pass, "fine", ""}});
  add_checks(doctor, checks);
  CHECK(doctor["checks"][0]["name"] == "driver");
  CHECK(doctor["checks"].size() == checks.size() + 1);
  CHECK(doctor["ok"] == false);
  CHECK(doctor["summary"]["fail"].get<int>() >= 1);
  Json none;
  add_checks(none, checks);
  CHECK(none["checks"].size() == checks.size());
}

TEST_CASE("mpirun without --hosts refuses more GPUs per node than this host has") {
  LaunchOptions l;
  l.launcher = Launcher::mpirun;
  l.gpus_per_node = 64;
  std::vector<NodeReport> nodes(1);
  nodes[0].gpus_seen = 1;
  nodes[0].node_gpus = 2;
  CHECK_THROWS_AS(check_local_node_size(l, nodes), UsageError);
  l.gpus_per_node = 2;  // the node's two, though its task sees one
  CHECK_NOTHROW(check_local_node_size(l, nodes));
  l.gpus_per_node = 64;
  l.hosts = parse_host_list("big");
  CHECK_NOTHROW(check_local_node_size(l, nodes));  // another node: its size is not known here
}

TEST_CASE("the protocol carries rank 0's notes and a fatal that ends the whole launch") {
  const auto notes = parse_worker_line(
      R"({"type":"notes","notes":[{"kind":"one_cpu","text":"rank 0 on a may run on one CPU"}]})");
  REQUIRE(notes);
  CHECK(notes->kind == WorkerMessageKind::notes);
  REQUIRE(notes->notes.size() == 1);
  CHECK(notes->notes[0].kind == "one_cpu");
  const auto fatal = parse_worker_line(R"({"type":"fatal","message":"x","launch":true})");
  REQUIRE(fatal);
  CHECK(fatal->launch);
  CHECK_FALSE(parse_worker_line(R"({"type":"fatal","message":"x"})")->launch);
  std::string many = R"({"type":"notes","notes":[)";
  for (int i = 0; i < 17; ++i) many += std::string(i ? "," : "") + R"({"kind":"k","text":"t"})";
  CHECK_FALSE(parse_worker_line(many + "]}"));
  CHECK_FALSE(parse_worker_line(R"({"type":"notes","notes":[{"kind":1,"text":"t"}]})"));
}
