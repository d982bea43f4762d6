// Each rank thread runs on CPUs local to its GPU (sysfs local_cpulist, within the process's
// cpuset): the executor reports every rank's CPUs with the point, read back from the kernel.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/cpu_affinity.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "workload_runner.hpp"

TEST_CASE("rank threads are pinned within their GPU's local CPU list and block on waits",
          "[affinity][gpu]") {
  char bus[32] = {};
  REQUIRE(cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess);
  const std::vector<int> local =
      mgbench::bench::parse_cpu_list(mgbench::gpu_local_cpulist(bus));
  if (local.empty()) mgbench::test::skip_test("no local_cpulist in sysfs for GPU 0");
  const mgbench::Params point{{"shape", "square"}, {"m", 256}, {"n", 256},
                              {"k", 256},          {"dtype", "fp32"}, {"impl", "cublas"}};
  const auto results = mgbench::test::run_workload("gemm", {0, 0}, {point});
  REQUIRE(results.size() == 1);
  const auto& ranks = results[0].extra["ranks"];
  REQUIRE(ranks.size() == 2);
  const std::vector<int> allowed = mgbench::bench::current_thread_cpus();
  for (const auto& rank : ranks) {
    const auto cpus = mgbench::bench::parse_cpu_list(rank["cpus"].get<std::string>());
    REQUIRE_FALSE(cpus.empty());
    std::vector<int> usable;  // what the process may use of the local list
    std::set_intersection(local.begin(), local.end(), allowed.begin(), allowed.end(),
                          std::back_inserter(usable));
    CHECK(rank.value("host_wait", "") == "blocking");  // rank threads never spin on waits
    if (usable.empty()) continue;  // cpuset without any local CPU: left alone by design
    CHECK(std::includes(usable.begin(), usable.end(), cpus.begin(), cpus.end()));
  }
}
