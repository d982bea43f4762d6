// Environment fingerprint: the comparability hash and the /proc, /sys parsers.
#include <cstdlib>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/platform/fingerprint.hpp"

using namespace mgbench;

namespace {

Json sample_environment() {
  return Json::parse(R"({
    "versions": {"driver": "570.86.15", "cuda_driver": "12.8", "cuda_runtime": "13.0",
                 "nccl_loaded": "2.28.9", "nccl_built": "2.28.9", "cublas": "13.0.0"},
    "gpu_count": 2,
    "gpus": [{"index": 0, "name": "NVIDIA H200", "pci_bus_id": "0000:19:00.0"},
             {"index": 1, "name": "NVIDIA H200", "pci_bus_id": "0000:3b:00.0"}],
    "host": {"hostname": "node-a", "memory_bytes": 2199023255552},
    "env": {"NCCL_DEBUG": "INFO"}
  })");
}

}  // namespace

TEST_CASE("FNV-1a 64 matches the reference vectors") {
  REQUIRE(fnv1a64("") == 0xcbf29ce484222325ULL);
  REQUIRE(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  REQUIRE(fnv1a64("foobar") == 0x85944171f73967e8ULL);
}

TEST_CASE("fingerprint hash is stable across releases") {
  // Changing this value breaks matching against every stored run: only on purpose.
  REQUIRE(fingerprint_hash(sample_environment()) == "ec03f10cf4f503fe");
}

TEST_CASE("fingerprint hash is 16 hex digits") {
  const std::string h = fingerprint_hash(sample_environment());
  REQUIRE(h.size() == 16);
  REQUIRE(h.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("fingerprint hash ignores host name, env vars and GPU order") {
  Json a = sample_environment();
  Json b = sample_environment();
  b["host"]["hostname"] = "node-b";
  b["env"] = Json::object();
  std::swap(b["gpus"][0], b["gpus"][1]);
  REQUIRE(fingerprint_hash(a) == fingerprint_hash(b));
}

TEST_CASE("fingerprint hash changes with the driver") {
  Json b = sample_environment();
  b["versions"]["driver"] = "580.65.06";
  REQUIRE(fingerprint_hash(sample_environment()) != fingerprint_hash(b));
}

TEST_CASE("fingerprint hash changes with the GPU count, model, CUDA and NCCL") {
  const std::string base = fingerprint_hash(sample_environment());
  Json count = sample_environment();
  count["gpu_count"] = 1;
  count["gpus"].erase(1);
  Json model = sample_environment();
  model["gpus"][1]["name"] = "NVIDIA H100 80GB HBM3";
  Json cuda = sample_environment();
  cuda["versions"]["cuda_runtime"] = "12.9";
  Json nccl = sample_environment();
  nccl["versions"]["nccl_loaded"] = "2.27.3";
  REQUIRE(fingerprint_hash(count) != base);
  REQUIRE(fingerprint_hash(model) != base);
  REQUIRE(fingerprint_hash(cuda) != base);
  REQUIRE(fingerprint_hash(nccl) != base);
}

TEST_CASE("cpuinfo: model, logical CPUs, cores, sockets and the hypervisor flag") {
  const std::string text =
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 0\n"
      "core id\t\t: 0\nflags\t\t: fpu vme sse2 hypervisor avx512f\n\n"
      "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 0\n"
      "core id\t\t: 0\nflags\t\t: fpu vme sse2 hypervisor avx512f\n\n"
      "processor\t: 2\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 1\n"
      "core id\t\t: 0\nflags\t\t: fpu vme sse2 hypervisor avx512f\n";
  const CpuInfo info = parse_cpuinfo(text);
  REQUIRE(info.model == "Intel(R) Xeon(R) Platinum 8480+");
  REQUIRE(info.logical == 3);
  REQUIRE(info.physical_cores == 2);
  REQUIRE(info.sockets == 2);
  REQUIRE(info.hypervisor);
}

TEST_CASE("cpuinfo without the hypervisor flag is bare metal") {
  const CpuInfo info = parse_cpuinfo("processor : 0\nflags : fpu hypervisorx sse2\n");
  REQUIRE_FALSE(info.hypervisor);
}

TEST_CASE("os-release: PRETTY_NAME, else NAME and VERSION") {
  REQUIRE(parse_os_release("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n") ==
          "Ubuntu 24.04.1 LTS");
  REQUIRE(parse_os_release("NAME=Debian\nVERSION=\"12 (bookworm)\"\n") == "Debian 12 (bookworm)");
}

TEST_CASE("meminfo: MemTotal in bytes") {
  REQUIRE(parse_meminfo_total("MemTotal:       16384 kB\nMemFree: 1 kB\n") == 16384ull * 1024);
  REQUIRE(parse_meminfo_total("Node 1 MemTotal:  2048 kB\n") == 2048ull * 1024);
  REQUIRE(parse_meminfo_total("nothing here") == 0);
}

TEST_CASE("cpulists count CPUs and reject malformed lists") {
  REQUIRE(count_cpulist("0-3,8,10-11") == 7);
  REQUIRE(count_cpulist("5") == 1);
  REQUIRE(count_cpulist("") == 0);
  REQUIRE(count_cpulist("3-1") == -1);
  REQUIRE(count_cpulist("a-b") == -1);
}

TEST_CASE("virtualization hint: bare metal, known clouds, unknown hypervisors") {
  REQUIRE(virtualization_hint(false, "Supermicro", "SYS-821GE-TNHR").empty());
  // EC2 bare-metal instances carry the Amazon vendor but no hypervisor flag.
  REQUIRE(virtualization_hint(false, "Amazon EC2", "p5.48xlarge").empty());
  REQUIRE(virtualization_hint(true, "Amazon EC2", "p5.48xlarge") == "Amazon EC2");
  REQUIRE(virtualization_hint(false, "QEMU", "Standard PC (Q35 + ICH9, 2009)") == "QEMU/KVM");
  REQUIRE(virtualization_hint(true, "", "") == "unknown hypervisor");
}

TEST_CASE("cuBLAS version codes format as major.minor.patch") {
  REQUIRE(format_cublas_version(130001) == "13.0.1");
  REQUIRE(format_cublas_version(120804) == "12.8.4");
  REQUIRE(format_cublas_version(0) == "unknown");
}

TEST_CASE("selected environment keeps CUDA_, NCCL_, OMPI_ and SLURM_ variables only") {
  ::setenv("NCCL_MGBENCH_TEST", "1", 1);
  ::setenv("MGBENCH_UNRELATED_TEST", "1", 1);
  const auto vars = selected_environment();
  ::unsetenv("NCCL_MGBENCH_TEST");
  ::unsetenv("MGBENCH_UNRELATED_TEST");
  REQUIRE(vars.count("NCCL_MGBENCH_TEST") == 1);
  REQUIRE(vars.count("MGBENCH_UNRELATED_TEST") == 0);
  REQUIRE(vars.count("PATH") == 0);
}

TEST_CASE("host facts read this machine's hostname, CPUs and memory") {
  const HostFacts host = collect_host_facts();
  REQUIRE_FALSE(host.hostname.empty());
  REQUIRE(host.logical_cpus > 0);
  REQUIRE(host.memory_bytes > 0);
  REQUIRE_FALSE(host.kernel.empty());
}
