// No device outside the group with one process per GPU: `sweep --launcher mpirun --devices 1`
// runs its rank on GPU 1, which it selects before MPI starts (a CUDA-aware MPI initialises CUDA
// on the current device inside MPI_Init), so that no mgbench process ever holds a context on
// GPU 0. NVML's list of compute processes is polled on both GPUs while the sweep runs: GPU 1
// must show a process that was not there before (the poll sees what it should), GPU 0 none.
// Skipped below 2 GPUs, without NVML, MPI support or mpirun.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include <cuda_runtime_api.h>

#include "catch_compat.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"
#include "workload_runner.hpp"

namespace {

std::string bus_id_of(int device) {
  char bus[32] = {};
  REQUIRE(cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess);
  return bus;
}

// The compute processes NVML lists on `device` now, by pid (NVML's pids, which a container's
// PID namespace may not share: only their change is compared).
// Never throws (it runs while the sweep's thread does); `listed` turns false when NVML cannot say.
std::set<unsigned> processes_on(const mgbench::Nvml& nvml, mgbench::NvmlDevice device,
                                bool& listed) {
  std::set<unsigned> pids;
  const auto list = nvml.compute_processes(device);
  listed = listed && list.has_value();
  for (const auto& p : list.value_or(std::vector<mgbench::NvmlProcess>{})) pids.insert(p.pid);
  return pids;
}

}  // namespace

TEST_CASE("a process per GPU on GPU 1 never creates a context on GPU 0", "[isolation][multi_gpu]") {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this mgbench was built without MPI");
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("mpirun is not on PATH (install openmpi-bin)");
  }
  const auto nvml = mgbench::nvml_instance();
  if (!nvml) mgbench::test::skip_test("NVML is not available");
  const auto gpu0 = nvml->device_by_pci_bus_id(bus_id_of(0));
  const auto gpu1 = nvml->device_by_pci_bus_id(bus_id_of(1));
  REQUIRE(gpu0);
  REQUIRE(gpu1);
  const std::string env =
      ::geteuid() == 0 ? "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" : "";
  const std::string out = mgbench::test::temp_dir("process-isolation");
  bool listed = true;
  const std::set<unsigned> before0 = processes_on(*nvml, gpu0, listed);
  const std::set<unsigned> before1 = processes_on(*nvml, gpu1, listed);
  if (!listed) mgbench::test::skip_test("NVML cannot list the GPUs' processes here");
  std::atomic<bool> done{false};
  mgbench::test::CommandOutput r;
  std::thread sweep([&] {
    r = mgbench::test::run_mgbench(
        "sweep --launcher mpirun --devices 1 --gpus 1 --workloads allreduce,gemm --profile quick"
        " --param size=1024 --no-history --no-report --skip-doctor --out " + out,
        env);
    done = true;
  });
  std::set<unsigned> on_zero, on_one;
  while (!done) {
    for (unsigned pid : processes_on(*nvml, gpu0, listed)) {
      if (!before0.count(pid)) on_zero.insert(pid);
    }
    for (unsigned pid : processes_on(*nvml, gpu1, listed)) {
      if (!before1.count(pid)) on_one.insert(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sweep.join();
  INFO(r.err);
  CHECK(listed);
  CHECK(r.exit_code == 0);
  CHECK(!on_one.empty());  // the poll sees the rank where it runs
  CHECK(on_zero.empty());
  std::filesystem::remove_all(out);
}
