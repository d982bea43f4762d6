// `mgbench doctor --hosts/--hostfile/--launcher`: one fingerprint per host through mpirun (here:
// localhost with fake GPUs), the comparison, and the one-line errors of bad input.
#include <cstdlib>

#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/params.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::string kMpiRoot = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
const std::string kFake = "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2 ";

bool on_path(const char* program) {
  return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

TEST_CASE("cli doctor --fingerprint: one marked JSON line, even without a GPU") {
  const auto r = run_mgbench("doctor --fingerprint");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.rfind("mgbench-fingerprint {", 0) == 0);
  const auto answer = mgbench::Json::parse(r.out.substr(r.out.find('{')));
  REQUIRE(answer["host"].is_string());
  REQUIRE(answer["nics"]["interfaces"].is_array());
}

TEST_CASE("cli doctor --hosts localhost through mpirun compares the fingerprint it gathered") {
  if (!on_path("mpirun")) mgbench::test::skip_test("mpirun not installed");
  const auto r = run_mgbench("doctor --hosts localhost --launcher mpirun --json", kMpiRoot + kFake);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const auto result = mgbench::Json::parse(r.out);
  REQUIRE(result["hosts"].size() == 1);
  REQUIRE(result["hosts"][0]["environment"]["gpu_count"] == 2);
  REQUIRE(result["hosts"][0]["environment"]["nics"]["interfaces"].is_array());
  REQUIRE(result["checks"]["ok"] == true);
  REQUIRE(result["checks"]["checks"][5]["name"] == "hosts_gpu_count");
  REQUIRE(result["checks"]["checks"][5]["finding"] == "GPU count 2 on every host");
}

TEST_CASE("cli doctor --hosts: a host without a GPU fails the comparison (exit 4)") {
  if (!on_path("mpirun")) mgbench::test::skip_test("mpirun not installed");
  const auto r = run_mgbench("doctor --hosts localhost --launcher mpirun",
                             kMpiRoot + "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=0 ");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 4);
  REQUIRE(r.out.find("hosts_reached") != std::string::npos);
  REQUIRE(r.out.find("no CUDA device visible") != std::string::npos);
  REQUIRE(r.out.find("network adapters") != std::string::npos);
}

TEST_CASE("cli doctor --hosts: a bad host list or hostfile is a usage error (exit 2)") {
  for (const char* args : {"doctor --hosts 'a,,b'", "doctor --hosts a:0", "doctor --hosts a,a",
                           "doctor --hostfile /nonexistent/hosts", "doctor --launcher ssh",
                           "doctor --launcher local",
                           "doctor --hosts a --hostfile /dev/null",
                           "doctor --hosts a --host-timeout 0"}) {
    const auto r = run_mgbench(args);
    INFO(args << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 2);
    REQUIRE(r.out.empty());
    REQUIRE(r.err.find('\n') == r.err.size() - 1);  // one line
  }
}

TEST_CASE("cli doctor --hosts: a missing launcher is one line saying what to install (exit 4)") {
  const auto r = run_mgbench("doctor --hosts a,b --launcher mpirun", "PATH=/nonexistent ");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 4);
  REQUIRE(r.err.find("mpirun not found on PATH: install OpenMPI") != std::string::npos);
  const auto s = run_mgbench("doctor --launcher srun", "PATH=/nonexistent ");
  REQUIRE(s.exit_code == 4);
  REQUIRE(s.err.find("srun not found") != std::string::npos);
}
