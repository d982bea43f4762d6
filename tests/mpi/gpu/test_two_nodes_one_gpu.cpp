// Two "nodes" of two ranks on one GPU: `mpirun -np 4 mgbench worker --mpi` with
// MGBENCH_TEST_RANKS_PER_NODE=2 (local rank = rank mod 2) runs real GPU groups whose group
// ranks (0..3) outnumber the GPUs of a node (2). Each rank says it is on its own host to NCCL
// (NCCL_HOSTID), which then runs the four ranks of one GPU over its socket transport.
// - The own all-reduce (impl=mgbench) of the all-reduce and of the training step: every point
//   is waived on every rank with the reason (it needs every rank in one process); its per-rank
//   state once was sized by a node's GPUs and indexed by the group rank, so that ranks 2 and 3
//   wrote past it (issue 30, finding 3). No NCCL is needed for these groups.
// - NCCL's all-reduce and training step: every rank's output is verified and reported.
// - NCCL's other collectives (all-gather, reduce-scatter, all-to-all, broadcast and reduce from
//   several roots, send/recv around the ring): exact on every rank, in and out of place, and
//   with a forced NCCL_ALGO / NCCL_PROTO stretch in the middle (every process creates its
//   communicators again from a fresh unique id).
// MGBENCH_GPU_TEST_RANK_WRAPPER (e.g. "compute-sanitizer --tool memcheck --error-exitcode 99";
// no single quotes) runs every rank under that command; MGBENCH_GPU_TEST_TIME_SCALE stretches
// the time-outs.
// Skipped (77) without a GPU (the binary), without MPI support or without mpirun.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"

using mgbench::Json;
using mgbench::Params;
using mgbench::PointResult;
using mgbench::Status;

namespace {

constexpr int kRanks = 4;
constexpr const char* kOneProcess =
    "the own all-reduce reads its peers' memory: it needs every rank in one process";

struct Launch {
  int exit_code = -1;
  std::vector<PointResult> points;
  std::string err;
};

// One group of `workload` over 2 nodes x 2 ranks, all on GPU 0, through mpirun: the points it
// reported, mpirun's exit code and every rank's stderr.
Launch launch(const std::string& workload, const std::vector<Params>& params) {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this mgbench was built without MPI");
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("mpirun is not on PATH (install openmpi-bin)");
  }
  const double scale = mgbench::test::gpu_time_scale();
  mgbench::GroupSpec spec;
  spec.workload = workload;
  spec.devices = {0, 0};  // the GPUs of one node: two ranks share GPU 0
  for (std::size_t i = 0; i < params.size(); ++i) spec.points.push_back({i, params[i]});
  spec.settings.stopping.min_samples = 3;
  spec.settings.stopping.min_time_s = 0;
  spec.settings.stopping.max_time_s = 0.05 * scale;
  spec.settings.warmup_s = 0.002;
  spec.settings.telemetry = false;
  spec.settings.gate_timeout_s = 20 * scale;
  spec.settings.group_timeout_s = 240 * scale;
  spec.placement.process_model = mgbench::ProcessModel::processes;
  spec.placement.launcher = mgbench::Launcher::mpirun;
  spec.placement.nodes = 2;
  spec.placement.gpus_per_node = 2;

  const std::string dir = mgbench::test::temp_dir("two-nodes");
  std::ofstream(dir + "/request.json") << Json{{"group", spec}}.dump() << "\n";
  const char* wrapper = std::getenv("MGBENCH_GPU_TEST_RANK_WRAPPER");
  std::ostringstream cmd;
  cmd << "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_RANKS_PER_NODE=2 NCCL_SOCKET_IFNAME=lo "
         "NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0 ";
  if (::geteuid() == 0) cmd << "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  cmd << "timeout " << static_cast<int>(300 * scale) << " mpirun -np " << kRanks
      << " --oversubscribe --bind-to none sh -c 'NCCL_HOSTID=mgbench-rank-$OMPI_COMM_WORLD_RANK "
      << "exec " << (wrapper != nullptr ? wrapper : "") << " \"$0\" worker --mpi' \""
      << MGBENCH_BINARY << "\" <" << dir << "/request.json >" << dir << "/out 2>" << dir
      << "/err";
  const int status = std::system(cmd.str().c_str());
  Launch out;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.err = mgbench::test::read_text(dir + "/err");
  std::istringstream lines(mgbench::test::read_text(dir + "/out"));
  for (std::string line; std::getline(lines, line);) {
    const Json message = Json::parse(line, nullptr, false);  // a wrapper's lines are not JSON
    if (message.is_object() && message.value("type", "") == "point") {
      out.points.push_back(message.at("result").get<PointResult>());
    }
  }
  std::filesystem::remove_all(dir);
  return out;
}

// Every rank of the group took part and is named with its place: 4 ranks, devices 0, the
// placement of 2 nodes x 2.
void check_every_rank(const PointResult& p) {
  CHECK(p.gpus == kRanks);
  CHECK(p.placement.process_model == mgbench::ProcessModel::processes);
  CHECK(p.placement.nodes == 2);
  CHECK(p.placement.gpus_per_node == 2);
  REQUIRE(p.extra.contains("ranks"));
  REQUIRE(p.extra.at("ranks").size() == static_cast<std::size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const Json& rank = p.extra.at("ranks").at(static_cast<std::size_t>(r));
    CHECK(rank.at("rank") == r);
    CHECK(rank.at("device") == 0);
    CHECK_FALSE(rank.at("host").get<std::string>().empty());
  }
}

Params allreduce(const std::string& impl, std::int64_t count) {
  return Params{{"bytes", count * 4}, {"count", count},   {"dtype", "fp32"},
                {"impl", impl},       {"inplace", false}, {"algo", "auto"},
                {"timing", "host"},   {"cache", "hot"}};
}

Params train(const std::string& impl) {
  return Params{{"layers", 2}, {"hidden", 64},    {"batch", 32},   {"dtype", "fp32"},
                {"accum", 1},  {"overlap", true}, {"h2d", false},  {"impl", impl},
                {"bucket_mb", 0}};
}

// A collective's point of `bytes` fp32 (from 1 MiB up: no second, gated timing).
Params collective(std::uint64_t bytes, const Params& extra = {}) {
  Params p{{"bytes", bytes}, {"dtype", "fp32"}, {"timing", "host"}, {"cache", "hot"}};
  for (const auto& [name, value] : extra) p.set(name, value);
  return p;
}

void require_launch_ok(const Launch& l, std::size_t points) {
  INFO(l.err);
  CHECK(l.exit_code == 0);
  REQUIRE(l.points.size() == points);
}

}  // namespace

TEST_CASE("two nodes on one GPU: the own all-reduce is waived on every rank, nothing overruns",
          "[mpi][gpu][allreduce]") {
  const Launch l = launch("allreduce", {allreduce("mgbench", 1 << 10),
                                        allreduce("mgbench", (1 << 18) + 3)});
  require_launch_ok(l, 2);
  for (const auto& p : l.points) {
    INFO("point " << p.index << ": " << p.message);
    CHECK(p.status == Status::waived);
    CHECK(p.message.find(kOneProcess) == 0);
    check_every_rank(p);
  }
}

TEST_CASE("two nodes on one GPU: NCCL's all-reduce is exact on every rank",
          "[mpi][gpu][allreduce][nccl]") {
  // From 1 MiB up: no second, gated timing of the point (time_both) on four time-sliced ranks.
  const Launch l =
      launch("allreduce", {allreduce("nccl", 1 << 18), allreduce("nccl", (1 << 18) + 12345)});
  require_launch_ok(l, 2);
  for (const auto& p : l.points) {
    INFO("point " << p.index << ": " << p.message);
    CHECK(p.status == Status::ok);
    check_every_rank(p);
    CHECK(p.verification.at("wrong") == 0);
    const auto count = static_cast<std::uint64_t>(p.params.integer("count"));
    CHECK(p.verification.at("checked").get<std::uint64_t>() == count * kRanks * 2);
    REQUIRE(p.verification.at("per_rank").size() == static_cast<std::size_t>(kRanks));
    for (const auto& rank : p.verification.at("per_rank")) {
      CHECK(rank.at("verification").at("wrong_on_rank") == 0);
    }
  }
}

TEST_CASE("two nodes on one GPU: the training step's own reducer is waived, NCCL's verifies",
          "[mpi][gpu][train]") {
  const Launch own = launch("train_step", {train("mgbench")});
  require_launch_ok(own, 1);
  CHECK(own.points[0].status == Status::waived);
  CHECK(own.points[0].message.find(kOneProcess) == 0);
  check_every_rank(own.points[0]);

  const Launch nccl = launch("train_step", {train("nccl"), train("nccl")});
  require_launch_ok(nccl, 2);
  for (const auto& p : nccl.points) {
    INFO("point " << p.index << ": " << p.message);
    CHECK(p.status == Status::ok);
    check_every_rank(p);
    const Json& ranks = p.extra.at("ranks");
    const std::string hash = ranks[0]["verification"]["weights_hash"].get<std::string>();
    for (const auto& rank : ranks) {
      const Json& v = rank.at("verification");
      CHECK(v.at("replicas_agree") == true);
      CHECK(v.at("weights_hash") == hash);
      CHECK(v.at("grad_rel_l2").get<double>() <= v.at("grad_tolerance").get<double>());
      CHECK(rank.at("details").at("breakdown_timing") == "host");
    }
  }
}

TEST_CASE("two nodes on one GPU: every NCCL collective is exact on every rank",
          "[mpi][gpu][collective][nccl]") {
  const std::uint64_t odd = (1 << 20) + 12;  // fp32 elements that 4 ranks do not divide
  const Params out{{"inplace", false}}, in{{"inplace", true}};
  const std::vector<std::pair<std::string, std::vector<Params>>> cases{
      {"allgather", {collective(odd, out), collective(odd, in)}},
      {"reducescatter", {collective(odd, out), collective(odd, in)}},
      {"alltoall", {collective(odd)}},
      {"broadcast", {collective(odd, {{"inplace", false}, {"root", 0}}),
                     collective(odd, {{"inplace", true}, {"root", 3}})}},
      {"reduce", {collective(odd, {{"inplace", false}, {"root", 2}}),
                  collective(odd, {{"inplace", true}, {"root", 1}})}},
      {"sendrecv", {collective(odd)}}};
  for (const auto& [workload, params] : cases) {
    const Launch l = launch(workload, params);
    INFO(workload);
    require_launch_ok(l, params.size());
    for (const auto& p : l.points) {
      INFO("point " << p.index << " " << p.params.dump() << ": " << p.message);
      CHECK(p.status == Status::ok);
      check_every_rank(p);
      CHECK(p.verification.at("wrong") == 0);
      CHECK(p.verification.at("checked").get<std::uint64_t>() > 0);
      CHECK(p.metrics.at("busbw_GBps").get<double>() > 0);
      for (const auto& rank : p.verification.at("per_rank")) {
        CHECK(rank.at("verification").at("wrong_on_rank") == 0);
      }
    }
  }
}

TEST_CASE("two nodes on one GPU: a forced NCCL algorithm gets communicators of its own",
          "[mpi][gpu][collective][nccl]") {
  const std::uint64_t size = 1 << 20;
  const Params plain{{"inplace", false}, {"algo", "default"}, {"proto", "default"}};
  Params ring = plain;
  ring.set("algo", "ring");
  ring.set("proto", "simple");
  const Launch l = launch("allgather", {collective(size, plain), collective(size, ring),
                                        collective(size, plain)});
  require_launch_ok(l, 3);
  for (const auto& p : l.points) {
    INFO("point " << p.index << ": " << p.message);
    CHECK(p.status == Status::ok);
    CHECK(p.verification.at("wrong") == 0);
  }
  CHECK_FALSE(l.points[0].extra.contains("nccl_env"));
  CHECK(l.points[1].extra.at("nccl_env") == Json{{"NCCL_ALGO", "ring"}, {"NCCL_PROTO", "simple"}});
  CHECK_FALSE(l.points[2].extra.contains("nccl_env"));
}
