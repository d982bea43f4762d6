// One process per GPU on a real GPU: `mgbench sweep --launcher mpirun --gpus 1` runs every GPU
// workload as a one-rank launch (MPI bootstrap, the NCCL unique id over MPI, the gate behind
// an MPI barrier, the gather to rank 0) and every point is ok, verified and marked as run by a
// process. Skipped (with the reason) without MPI support or mpirun.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"

TEST_CASE("every GPU workload runs as one process per GPU through mpirun") {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this mgbench was built without MPI");
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("mpirun is not on PATH (install openmpi-bin)");
  }
  const std::string env =
      ::geteuid() == 0 ? "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" : "";
  const std::string out = mgbench::test::temp_dir("gpu-process");
  const auto r = mgbench::test::run_mgbench(
      "sweep --launcher mpirun --gpus 1 --workloads gemm,allreduce,train_step,membw,h2d"
      " --profile quick --param size=1024 --no-history --no-report"
      " --skip-doctor --out " + out,
      env);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(!run.points.empty());
  for (const auto& p : run.points) {
    INFO(p.workload << " [" << p.params.dump() << "]: " << p.message);
    CHECK(p.status == mgbench::Status::ok);
    CHECK(p.verification.value("ok", false));
    CHECK(p.placement.process_model == mgbench::ProcessModel::processes);
    CHECK(p.placement.launcher == mgbench::Launcher::mpirun);
    CHECK(p.placement.nodes == 1);
    CHECK(p.ranks.size() == 1);
  }
  std::filesystem::remove_all(out);
}
