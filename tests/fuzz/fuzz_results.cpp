// The results loader (report, compare, history all read results.json through it): any bytes
// give a RunResult or a one-line UsageError. A loaded run is then written back and its
// presentations derived, as `mgbench report` does.
#include <set>

#include "fuzz_support.hpp"
#include "mgbench/model/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = mgbench::fuzz::write_input("results", data, size);
  mgbench::fuzz::expect_only_mgbench_errors("results", [&] {
    const mgbench::RunResult run = mgbench::load_results(path);
    (void)mgbench::Json(run).dump();
    std::set<std::string> workloads;
    for (const auto& point : run.points) workloads.insert(point.workload);
    for (const auto& workload : workloads) (void)mgbench::presentation_for(run, workload);
  });
  return 0;
}
