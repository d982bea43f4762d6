// Launchers from the command line, without running one: a launcher missing from PATH (exit 4,
// one line saying what to install) and the dry run's launch command lines across nodes.
#include <string>

#include "catch_compat.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::line_count;
using mgbench::test::run_mgbench;

TEST_CASE("a launcher that is not on PATH: exit 4 and one line saying what to install") {
  const std::string env = mgbench::test::kSelftestEnv + " PATH=/nonexistent";
  for (const std::string launcher : {"mpirun", "srun"}) {
    INFO(launcher);
    const auto r = run_mgbench("sweep --workloads selftest --gpus 1 --launcher " + launcher +
                                   mgbench::test::kQuiet,
                               env);
    CHECK(r.exit_code == 4);
    CHECK(line_count(r.err) == 1);
    const std::string expected =
        !mgbench::built_with_mpi() ? "built without MPI"
                                   : (launcher == "mpirun" ? "install OpenMPI" : "slurm-client");
    CHECK(r.err.find(expected) != std::string::npos);
  }
}

TEST_CASE("a dry run shows each group's nodes and launch command line") {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this build has no MPI");
  const auto r = run_mgbench(
      "sweep --dry-run --workloads selftest --gpus 1,2,4,8,6 --launcher mpirun"
      " --hosts n1:4,n2:4 --oversubscribe",
      mgbench::test::kSelftestEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("1 node(s) x 1 GPU(s) on n1: mpirun -np 1 --host n1:1 --oversubscribe") !=
        std::string::npos);
  CHECK(r.out.find("2 node(s) x 4 GPU(s) on n1,n2: mpirun -np 8 --host n1:4,n2:4") !=
        std::string::npos);
  CHECK(r.out.find("mgbench worker --mpi") != std::string::npos);
  CHECK(r.out.find("--gpus 6 left out: 6 GPUs do not fill whole nodes of 4") != std::string::npos);
  const auto srun = run_mgbench(
      "sweep --dry-run --workloads selftest --gpus 16 --launcher srun --gpus-per-node 8",
      mgbench::test::kSelftestEnv + " SLURM_JOB_NUM_NODES=2");
  INFO(srun.out << srun.err);
  REQUIRE(srun.exit_code == 0);
  CHECK(srun.out.find("srun --nodes=2 --ntasks=16 --ntasks-per-node=8") != std::string::npos);
}
