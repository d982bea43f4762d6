// The launcher options from the command line (the sweep's bad uses are rows of
// test_bad_input.cpp): doctor's, the dry run of a host list too long for one argument, and sweep
// and doctor with a hostfile of 700 long names, which reaches mpirun through a file (mpirun's own
// complaint comes back in one line, never "exit code 127").
#include <cstdlib>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/run/launcher.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::kSelftestEnv;
using mgbench::test::line_count;
using mgbench::test::run_mgbench;

namespace {

// 700 hosts of 245 characters: 172 KB in one --host argument, past the kernel's 128 KiB.
std::string long_hostfile(const std::string& dir) {
  const std::string path = dir + "/hosts";
  std::ofstream out(path);
  for (int i = 0; i < 700; ++i) out << std::string(240, 'h') << i << " slots=1\n";
  return path;
}

}  // namespace

TEST_CASE("doctor refuses --forward-env with srun (exit 2, one line)") {
  const auto doctor = run_mgbench("doctor --hosts a --launcher srun --forward-env FOO");
  CHECK(doctor.exit_code == 2);
  CHECK(line_count(doctor.err) == 1);
  CHECK(doctor.err.find("--forward-env is an mpirun option") != std::string::npos);
}

TEST_CASE("a dry run shows a long host list going through a temporary hostfile") {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this build has no MPI");
  const std::string dir = mgbench::test::temp_dir("long-hosts");
  const auto r = run_mgbench("sweep --dry-run --workloads selftest --launcher mpirun --gpus 1,700"
                             " --gpus-per-node 1 --hostfile " + long_hostfile(dir) +
                                 " --launcher-arg=--allow-run-as-root --forward-env MY_VAR",
                             kSelftestEnv + " MY_VAR=1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("mpirun -np 700 --hostfile TEMPORARY-HOSTFILE --bind-to none") !=
        std::string::npos);
  CHECK(r.out.find(" -x MY_VAR ") != std::string::npos);
  CHECK(r.out.find(" --allow-run-as-root mgbench worker --mpi --devices 0\n") != std::string::npos);
  CHECK(r.out.find("mpirun -np 1 --host " + std::string(240, 'h') + "0:1") != std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("sweep and doctor hand a 700-host hostfile to mpirun in a file, and say what it said") {
  if (!mgbench::built_with_mpi()) mgbench::test::skip_test("this build has no MPI");
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    mgbench::test::skip_test("mpirun is not on PATH (install openmpi-bin)");
  }
  const std::string dir = mgbench::test::temp_dir("long-hosts");
  const std::string hosts = long_hostfile(dir);
  // A word mpirun refuses at once: it ran (no exec failure), and its complaint is the line.
  const std::string refused = " --launcher-arg=--no-such-mpirun-option";
  const auto sweep = run_mgbench("sweep --workloads selftest --launcher mpirun --gpus 1 "
                                 "--hostfile " + hosts + refused + " --out " + dir + "/out" +
                                     mgbench::test::kQuiet,
                                 kSelftestEnv);
  INFO(sweep.err);
  CHECK(sweep.exit_code == 4);
  CHECK(line_count(sweep.err) == 1);
  CHECK(sweep.err.find("mpirun failed before any rank started (exit code 1)") != std::string::npos);
  CHECK(sweep.err.find("--no-such-mpirun-option") != std::string::npos);
  CHECK(sweep.err.find("127") == std::string::npos);
  const auto doctor = run_mgbench("doctor --hostfile " + hosts + refused, kSelftestEnv);
  INFO(doctor.err);
  CHECK(doctor.exit_code == 4);
  CHECK(doctor.err.find("mgbench doctor: mpirun failed before any rank started (exit code 1): ") !=
        std::string::npos);
  CHECK(doctor.err.find("--no-such-mpirun-option") != std::string::npos);
  CHECK(doctor.err.find("messages are above") == std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}
