// The collectives through the real binary, without a GPU: `mgbench list` documents each with its
// formulas and axes, and a dry run plans them per GPU count (roots of the group, sizes below one
// element per rank left out, NCCL variables only where NCCL has them).
#include <regex>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::vector<std::string> kCollectives{"allgather", "reducescatter", "alltoall",
                                            "broadcast", "reduce",        "sendrecv"};

// The block `mgbench list` prints for `name` (up to the next blank line).
std::string list_block(const std::string& list, const std::string& name) {
  const std::string out = "\n" + list;
  const auto at = out.find("\n" + name + ":");
  return at == std::string::npos ? std::string() : out.substr(at, out.find("\n\n", at + 1) - at);
}

// Points per group of a dry run's plan: "group N  <workload> GPUs 0,1  K point(s)" -> {GPUs, K}.
std::vector<std::pair<std::string, int>> groups_of(const std::string& plan,
                                                   const std::string& workload) {
  std::vector<std::pair<std::string, int>> out;
  const std::regex line("group +[0-9]+  " + workload + " +GPUs ([0-9,]+) +([0-9]+) point");
  for (auto it = std::sregex_iterator(plan.begin(), plan.end(), line);
       it != std::sregex_iterator(); ++it) {
    out.emplace_back((*it)[1].str(), std::stoi((*it)[2].str()));
  }
  return out;
}

}  // namespace

TEST_CASE("list documents every collective with its formulas, one GPU and its axes",
          "[collective]") {
  const auto r = run_mgbench("list");
  REQUIRE(r.exit_code == 0);
  for (const auto& name : kCollectives) {
    const std::string block = list_block(r.out, name);
    INFO(name << ":\n" << block);
    REQUIRE_FALSE(block.empty());
    CHECK(block.find("algbw = size / t") != std::string::npos);
    CHECK(block.find("busbw = algbw") != std::string::npos);
    CHECK(block.find("One GPU:") != std::string::npos);
    CHECK(block.find("--param bytes") != std::string::npos);
    // Standard: four sizes x64 apart, from the launch-bound 1 KiB to the 256 MiB plateau.
    CHECK(block.find("default 1024,65536,4194304,268435456;") != std::string::npos);
    const bool rooted = name == "broadcast" || name == "reduce";
    const bool p2p = name == "alltoall" || name == "sendrecv";
    CHECK((block.find("--param root") != std::string::npos) == rooted);
    CHECK((block.find("--param algo") != std::string::npos) == !p2p);
    CHECK((block.find("--param proto") != std::string::npos) == !p2p);
    CHECK((block.find("--param inplace") != std::string::npos) == !p2p);
  }
  CHECK(list_block(r.out, "allgather").find("(n-1)/n") != std::string::npos);
  CHECK(list_block(r.out, "alltoall").find("(n-1)/n") != std::string::npos);
  CHECK(list_block(r.out, "sendrecv").find("busbw = algbw:") != std::string::npos);
}

TEST_CASE("a dry run plans every collective on 1, 2, 4 and 8 GPUs", "[collective]") {
  const auto r = run_mgbench(
      "sweep --dry-run --gpus 1,2,4,8 "
      "--workloads allgather,reducescatter,alltoall,broadcast,reduce,sendrecv");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Plan: 24 group(s)") == 0);
  for (const auto& name : kCollectives) {
    const auto groups = groups_of(r.out, name);
    INFO(name << "\n" << r.out.substr(0, 2000));
    REQUIRE(groups.size() == 4);
    CHECK(groups.front().first == "0");
    CHECK(groups.back().first == "0,1,2,3,4,5,6,7");
    // Standard profile: bf16, 1 KiB, 64 KiB, 4 MiB and 256 MiB, out of place, root 0.
    for (const auto& g : groups) CHECK(g.second == 4);
  }
}

TEST_CASE("root=all plans one point per rank of each group, a root beyond it none",
          "[collective]") {
  const auto r = run_mgbench(
      "sweep --dry-run --gpus 1,2,4 --workloads broadcast,reduce --dtypes fp32 "
      "--param bytes=1048576 --param root=all");
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"broadcast", "reduce"}) {
    const auto groups = groups_of(r.out, name);
    REQUIRE(groups.size() == 3);
    CHECK(groups[0].second == 1);
    CHECK(groups[1].second == 2);
    CHECK(groups[2].second == 4);
  }
  CHECK(r.out.find("root=3") != std::string::npos);
  const auto beyond = run_mgbench(
      "sweep --dry-run --gpus 1,4 --workloads broadcast --dtypes fp32 --param bytes=1048576 "
      "--param root=2");
  REQUIRE(beyond.exit_code == 0);
  const auto groups = groups_of(beyond.out, "broadcast");
  REQUIRE(groups.size() == 1);  // no root 2 on one GPU
  CHECK(groups[0].first == "0,1,2,3");
}

TEST_CASE("a size below one element per rank is left out of that GPU count only",
          "[collective]") {
  // 16 bytes of fp32: 4 elements, so 1 per rank on 4 GPUs and none on 8.
  const auto r = run_mgbench(
      "sweep --dry-run --gpus 1,4,8 --workloads allgather --dtypes fp32 --param bytes=16,4096");
  REQUIRE(r.exit_code == 0);
  const auto groups = groups_of(r.out, "allgather");
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].second == 2);
  CHECK(groups[1].second == 2);
  CHECK(groups[2].second == 1);
}

TEST_CASE("algo and proto points are planned outermost, so each NCCL environment is one stretch",
          "[collective]") {
  const auto r = run_mgbench(
      "sweep --dry-run --gpus 2 --workloads reducescatter --dtypes fp32,bf16 "
      "--param bytes=1048576,4194304 --param algo=default,ring --param proto=simple");
  REQUIRE(r.exit_code == 0);
  const auto ring = r.out.find("algo=ring");
  REQUIRE(ring != std::string::npos);
  CHECK(r.out.find("algo=default", ring) == std::string::npos);
}
