// `mgbench info` and `mgbench doctor` end to end. Without a GPU (or driver) both exit 4 with
// exactly one line on stderr; with a GPU they print the environment / the checks.
#include <cuda_runtime_api.h>

#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/params.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

bool has_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

int nonempty_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (!line.empty()) ++n;
  }
  return n;
}

// Without a GPU, info and doctor fail the same way: exit 4, one stderr line, no stdout.
void require_no_gpu_failure(const mgbench::test::CommandOutput& r) {
  REQUIRE(r.exit_code == 4);
  REQUIRE(nonempty_lines(r.err) == 1);
  REQUIRE(r.out.empty());
}

}  // namespace

TEST_CASE("cli info: no GPU -> exit 4 and one stderr line, GPU -> the environment") {
  const auto r = run_mgbench("info");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (!has_gpu()) {
    require_no_gpu_failure(r);
  } else {
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.out.find("Fingerprint") != std::string::npos);
    REQUIRE(r.out.find("CUDA runtime") != std::string::npos);
  }
}

TEST_CASE("cli info --json: no GPU -> exit 4 and one stderr line, GPU -> environment JSON") {
  const auto r = run_mgbench("info --json");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (!has_gpu()) {
    REQUIRE(r.exit_code == 4);
    REQUIRE(nonempty_lines(r.err) == 1);
  } else {
    REQUIRE(r.exit_code == 0);
    const auto env = mgbench::Json::parse(r.out);
    REQUIRE(env["fingerprint_hash"].get<std::string>().size() == 16);
    REQUIRE(env["gpu_count"].get<int>() >= 1);
    REQUIRE(env["gpus"][0].contains("pci_bus_id"));
    REQUIRE(env["host"].contains("kernel"));
  }
}

TEST_CASE("cli info --json runs on without NVML (MGBENCH_NVML_LIBRARY at a missing file)") {
  const auto r = run_mgbench("info --json", "MGBENCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (!has_gpu()) {
    REQUIRE(r.exit_code == 4);
    REQUIRE(nonempty_lines(r.err) == 1);
  } else {
    REQUIRE(r.exit_code == 0);
    const auto env = mgbench::Json::parse(r.out);
    REQUIRE(env["nvml"]["available"] == false);
    REQUIRE(env["nvml"]["error"].get<std::string>().find("/nonexistent") != std::string::npos);
    REQUIRE(env["gpu_count"].get<int>() >= 1);
  }
}

TEST_CASE("cli doctor: no GPU -> exit 4 and one stderr line, GPU -> checks as JSON") {
  const auto r = run_mgbench("doctor --json --no-load");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (!has_gpu()) {
    require_no_gpu_failure(r);
  } else {
    const auto doctor = mgbench::Json::parse(r.out);
    REQUIRE(doctor["checks"].size() == 20);
    // Exit 4 exactly when a check failed.
    REQUIRE(r.exit_code == (doctor["ok"].get<bool>() ? 0 : 4));
  }
}

TEST_CASE("cli doctor (table): no GPU -> exit 4 and one stderr line, GPU -> the table") {
  const auto r = run_mgbench("doctor --no-load");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (!has_gpu()) {
    REQUIRE(r.exit_code == 4);
    REQUIRE(nonempty_lines(r.err) == 1);
  } else {
    REQUIRE((r.exit_code == 0 || r.exit_code == 4));
    REQUIRE(r.out.find("power_limit") != std::string::npos);
    REQUIRE(r.out.find("doctor: ") != std::string::npos);
  }
}

TEST_CASE("cli doctor: an unknown option is a usage error (exit 2)") {
  const auto r = run_mgbench("doctor --no-such-option");
  REQUIRE(r.exit_code == 2);
}

TEST_CASE("cli info --help lists --json and exits 0") {
  const auto r = run_mgbench("info --help");
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.find("--json") != std::string::npos);
}
