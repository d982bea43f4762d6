// Doctor rules on synthetic facts: each rule's passing case and its warn/fail case.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/platform/doctor.hpp"

using namespace mgbench;

namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;

GpuFacts healthy_gpu(int index) {
  GpuFacts g;
  g.index = index;
  g.name = "NVIDIA H200";
  g.pci_bus_id = index == 0 ? "0000:19:00.0" : "0000:3b:00.0";
  g.memory_bytes = 141 * kGiB;
  g.nvml = true;
  g.vbios = "96.00.A5.00.01";
  g.persistence_mode = true;
  g.power_limit_w = 700;
  g.default_power_limit_w = 700;
  g.pcie_gen_idle = 1;
  g.pcie_width_idle = 16;
  g.pcie_gen_load = 5;
  g.pcie_width_load = 16;
  g.pcie_gen_max = 5;
  g.pcie_gen_gpu_max = 5;
  g.pcie_width_max = 16;
  g.reasons_idle = clock_event::kGpuIdle;
  g.reasons_load = clock_event::kSwPowerCap;
  g.max_temp_load_c = 62;
  g.ecc_enabled = true;
  g.ecc_uncorrected_volatile = 0;
  g.ecc_uncorrected_aggregate = 0;
  g.remapped_rows = NvmlRemappedRows{};
  g.retired_pages.pending = false;
  g.retired_pages.double_bit = 0;
  g.mig_enabled = false;
  g.other_processes = std::vector<GpuProcessFact>{};
  g.nvlink_total = 18;
  g.nvlink_up = 18;
  g.numa_node = index;
  g.cpu_affinity = index == 0 ? "0-47" : "48-95";
  return g;
}

DoctorFacts healthy() {
  DoctorFacts f;
  f.nvml_available = true;
  f.nvml_device_count = 2;
  f.driver_version = "570.86.15";
  f.cuda_driver = 13000;
  f.cuda_runtime = 13000;
  f.nccl_built = 22809;
  f.nccl_loaded = 22809;
  f.gpus = {healthy_gpu(0), healthy_gpu(1)};
  f.pairs = {GpuPairFacts{0, 1, true, "NV18"}};
  f.load_ran = true;
  f.load_seconds = 5;
  f.cuda_device_order = "PCI_BUS_ID";
  f.host_memory_bytes = 2048 * kGiB;
  f.host_numa_nodes = 2;
  return f;
}

DoctorCheck check(const DoctorFacts& facts, const std::string& name) {
  for (const auto& c : evaluate_doctor(facts)) {
    if (c.name == name) return c;
  }
  FAIL("no check named " << name);
  return {};
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("doctor: a healthy machine passes every check") {
  const auto checks = evaluate_doctor(healthy());
  REQUIRE(checks.size() == 20);
  for (const auto& c : checks) {
    INFO(c.name << ": " << c.finding);
    REQUIRE(c.status == CheckStatus::pass);
    REQUIRE_FALSE(c.finding.empty());
    REQUIRE(c.finding.find('\n') == std::string::npos);
  }
  REQUIRE_FALSE(doctor_failed(checks));
}

TEST_CASE("doctor json: checks, counts and ok") {
  DoctorFacts f = healthy();
  f.gpus[1].ecc_uncorrected_volatile = 3;
  const Json j = doctor_to_json(evaluate_doctor(f));
  REQUIRE(j["checks"].size() == 20);
  REQUIRE(j["checks"][0].contains("next_step"));
  REQUIRE(j["summary"]["fail"] == 1);
  REQUIRE(j["summary"]["pass"] == 19);
  REQUIRE(j["ok"] == false);
}

TEST_CASE("doctor nvml: missing NVML warns with the reason") {
  DoctorFacts f = healthy();
  f.nvml_available = false;
  f.nvml_error = "cannot load /x/libnvidia-ml.so.1";
  const auto c = check(f, "nvml");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "/x/libnvidia-ml.so.1"));
}

TEST_CASE("doctor gpu_models: mixed models fail") {
  DoctorFacts f = healthy();
  f.gpus[1].name = "NVIDIA H100 80GB HBM3";
  const auto c = check(f, "gpu_models");
  REQUIRE(c.status == CheckStatus::fail);
  REQUIRE(has(c.finding, "H100"));
}

TEST_CASE("doctor gpu_models: different memory sizes warn") {
  DoctorFacts f = healthy();
  f.gpus[1].memory_bytes = 80 * kGiB;
  REQUIRE(check(f, "gpu_models").status == CheckStatus::warn);
}

TEST_CASE("doctor gpu_models: different VBIOS versions warn") {
  DoctorFacts f = healthy();
  f.gpus[1].vbios = "96.00.99.00.01";
  const auto c = check(f, "gpu_models");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "96.00.99.00.01"));
}

TEST_CASE("doctor driver_cuda: an older driver major fails") {
  DoctorFacts f = healthy();
  f.cuda_driver = 12040;
  const auto c = check(f, "driver_cuda");
  REQUIRE(c.status == CheckStatus::fail);
  REQUIRE(has(c.finding, "12.4"));
}

TEST_CASE("doctor driver_cuda: an older driver minor warns (minor-version compatibility)") {
  DoctorFacts f = healthy();
  f.cuda_runtime = 13010;
  REQUIRE(check(f, "driver_cuda").status == CheckStatus::warn);
}

TEST_CASE("doctor nccl_version: loaded different from built warns") {
  DoctorFacts f = healthy();
  f.nccl_loaded = 22105;
  const auto c = check(f, "nccl_version");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "2.21.5"));
}

TEST_CASE("doctor pcie_link: a narrower link under load warns") {
  DoctorFacts f = healthy();
  f.gpus[1].pcie_width_load = 8;
  const auto c = check(f, "pcie_link");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "GPU 1 at Gen5 x8"));
}

TEST_CASE("doctor pcie_link: a lower generation under load warns") {
  DoctorFacts f = healthy();
  f.gpus[0].pcie_gen_load = 4;
  REQUIRE(check(f, "pcie_link").status == CheckStatus::warn);
}

TEST_CASE("doctor pcie_link: a platform slower than the GPU warns") {
  DoctorFacts f = healthy();
  for (auto& g : f.gpus) {
    g.pcie_gen_max = 4;
    g.pcie_gen_load = 4;
  }
  const auto c = check(f, "pcie_link");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "platform max Gen4"));
}

TEST_CASE("doctor pcie_link: skipped without a load when idle links are down-shifted") {
  DoctorFacts f = healthy();
  f.load_ran = false;
  REQUIRE(check(f, "pcie_link").status == CheckStatus::skip);
}

TEST_CASE("doctor peer_access: a pair without peer access warns") {
  DoctorFacts f = healthy();
  f.pairs[0].peer_access = false;
  f.pairs[0].topology = "SYS";
  const auto c = check(f, "peer_access");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "0-1 (SYS)"));
}

TEST_CASE("doctor peer_access: skipped with one GPU") {
  DoctorFacts f = healthy();
  f.gpus.resize(1);
  f.pairs.clear();
  REQUIRE(check(f, "peer_access").status == CheckStatus::skip);
}

TEST_CASE("doctor nvlink: links down warn") {
  DoctorFacts f = healthy();
  f.gpus[0].nvlink_up = 14;
  const auto c = check(f, "nvlink");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "14 of 18"));
}

TEST_CASE("doctor nvlink: links up but no pair over NVLink warns (fabric manager)") {
  DoctorFacts f = healthy();
  f.pairs[0].topology = "SYS";
  REQUIRE(check(f, "nvlink").status == CheckStatus::warn);
}

TEST_CASE("doctor nvlink: a PCIe-only machine passes") {
  DoctorFacts f = healthy();
  for (auto& g : f.gpus) g.nvlink_total = g.nvlink_up = 0;
  f.pairs[0].topology = "PIX";
  const auto c = check(f, "nvlink");
  REQUIRE(c.status == CheckStatus::pass);
  REQUIRE(has(c.finding, "PCIe"));
}

TEST_CASE("doctor p2p_path: P2P through the CPU warns with the ACS/IOMMU explanation") {
  DoctorFacts f = healthy();
  f.pairs[0].topology = "PHB";
  const auto c = check(f, "p2p_path");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.next_step, "ACS"));
  REQUIRE(has(c.next_step, "iommu"));
}

TEST_CASE("doctor p2p_path: a PCIe switch path passes") {
  DoctorFacts f = healthy();
  f.pairs[0].topology = "PXB";
  REQUIRE(check(f, "p2p_path").status == CheckStatus::pass);
}

TEST_CASE("doctor persistence_mode: off warns") {
  DoctorFacts f = healthy();
  f.gpus[1].persistence_mode = false;
  const auto c = check(f, "persistence_mode");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.next_step, "nvidia-smi -pm 1"));
}

TEST_CASE("doctor power_limit: a cap below the default warns with the numbers") {
  DoctorFacts f = healthy();
  f.gpus[0].power_limit_w = 450;
  const auto c = check(f, "power_limit");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "cap 450 W of 700 W default: expect lower GEMM throughput"));
  REQUIRE(has(c.next_step, "-pl 700"));
  // nvidia-smi -i takes the PCI bus id: its own GPU numbers differ from CUDA ordinals.
  CHECK(has(c.next_step, "nvidia-smi -i 0000:19:00.0 -pl 700"));
}

TEST_CASE("doctor clock_events_idle: thermal slowdown at idle fails") {
  DoctorFacts f = healthy();
  f.gpus[1].reasons_idle = clock_event::kGpuIdle | clock_event::kHwThermal;
  const auto c = check(f, "clock_events_idle");
  REQUIRE(c.status == CheckStatus::fail);
  REQUIRE(has(c.finding, "hw_thermal"));
}

TEST_CASE("doctor clock_events_load: power brake under load fails") {
  DoctorFacts f = healthy();
  f.gpus[0].reasons_load = clock_event::kSwPowerCap | clock_event::kHwPowerBrake;
  const auto c = check(f, "clock_events_load");
  REQUIRE(c.status == CheckStatus::fail);
  REQUIRE(has(c.finding, "hw_power_brake"));
  REQUIRE_FALSE(has(c.finding, "sw_power_cap"));
}

TEST_CASE("doctor clock_events_load: the power cap alone passes and is mentioned") {
  const auto c = check(healthy(), "clock_events_load");
  REQUIRE(c.status == CheckStatus::pass);
  REQUIRE(has(c.finding, "power cap"));
}

TEST_CASE("doctor clock_events_load: skipped with --no-load, warns when the load failed") {
  DoctorFacts f = healthy();
  f.load_ran = false;
  REQUIRE(check(f, "clock_events_load").status == CheckStatus::skip);
  f.load_error = "CUDA error: out of memory";
  const auto c = check(f, "clock_events_load");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "out of memory"));
}

TEST_CASE("doctor ecc_errors: uncorrected errors since driver load fail") {
  DoctorFacts f = healthy();
  f.gpus[1].ecc_uncorrected_volatile = 2;
  REQUIRE(check(f, "ecc_errors").status == CheckStatus::fail);
}

TEST_CASE("doctor ecc_errors: ECC off warns") {
  DoctorFacts f = healthy();
  f.gpus[0].ecc_enabled = false;
  REQUIRE(check(f, "ecc_errors").status == CheckStatus::warn);
}

TEST_CASE("doctor row_remapping: a pending remap fails") {
  DoctorFacts f = healthy();
  f.gpus[0].remapped_rows->pending = true;
  const auto c = check(f, "row_remapping");
  REQUIRE(c.status == CheckStatus::fail);
  REQUIRE(has(c.next_step, "reset"));
}

TEST_CASE("doctor row_remapping: a remap failure fails and asks for replacement") {
  DoctorFacts f = healthy();
  f.gpus[1].remapped_rows->failure = true;
  const auto c = check(f, "row_remapping");
  REQUIRE(c.status == CheckStatus::fail);
  REQUIRE(has(c.next_step, "RMA"));
}

TEST_CASE("doctor row_remapping: a pending page retirement fails") {
  DoctorFacts f = healthy();
  f.gpus[1].remapped_rows.reset();
  f.gpus[1].retired_pages.pending = true;
  REQUIRE(check(f, "row_remapping").status == CheckStatus::fail);
}

TEST_CASE("doctor row_remapping: rows already remapped warn") {
  DoctorFacts f = healthy();
  f.gpus[0].remapped_rows->uncorrected = 3;
  REQUIRE(check(f, "row_remapping").status == CheckStatus::warn);
}

TEST_CASE("doctor mig: MIG enabled warns") {
  DoctorFacts f = healthy();
  f.gpus[0].mig_enabled = true;
  REQUIRE(check(f, "mig").status == CheckStatus::warn);
}

TEST_CASE("doctor other_processes: another process on a GPU warns") {
  DoctorFacts f = healthy();
  f.gpus[1].other_processes = std::vector<GpuProcessFact>{{4242, "python3", 20 * kGiB}};
  const auto c = check(f, "other_processes");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "pid 4242 (python3, 20 GiB)"));
}

TEST_CASE("doctor visible_devices: CUDA_VISIBLE_DEVICES set warns") {
  DoctorFacts f = healthy();
  f.cuda_visible_devices = "2,3";
  f.nvml_device_count = 8;
  const auto c = check(f, "visible_devices");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "CUDA sees 2 of 8 GPUs"));
}

TEST_CASE("doctor visible_devices: an unset CUDA_DEVICE_ORDER is explained") {
  DoctorFacts f = healthy();
  f.cuda_device_order.reset();
  const auto c = check(f, "visible_devices");
  REQUIRE(c.status == CheckStatus::pass);
  REQUIRE(has(c.finding, "PCI bus id"));
}

TEST_CASE("doctor numa_affinity: lists each GPU's node and CPUs") {
  const auto c = check(healthy(), "numa_affinity");
  REQUIRE(c.status == CheckStatus::pass);
  REQUIRE(has(c.finding, "GPU 1 on node 1 (CPUs 48-95)"));
}

TEST_CASE("doctor numa_affinity: an unknown node on a multi-node host warns") {
  DoctorFacts f = healthy();
  f.gpus[0].numa_node = -1;
  REQUIRE(check(f, "numa_affinity").status == CheckStatus::warn);
}

TEST_CASE("doctor host_memory: less host memory than GPU memory warns") {
  DoctorFacts f = healthy();
  f.host_memory_bytes = 128 * kGiB;
  const auto c = check(f, "host_memory");
  REQUIRE(c.status == CheckStatus::warn);
  REQUIRE(has(c.finding, "pinned"));
}

TEST_CASE("doctor virtualization: a VM is reported with what it implies") {
  DoctorFacts f = healthy();
  f.virtualization = "Amazon EC2";
  const auto c = check(f, "virtualization");
  REQUIRE(c.status == CheckStatus::pass);
  REQUIRE(has(c.finding, "virtual machine (Amazon EC2)"));
  REQUIRE(has(c.finding, "NOT_SUPPORTED"));
}

TEST_CASE("doctor without NVML skips the NVML checks instead of failing") {
  DoctorFacts f = healthy();
  f.nvml_available = false;
  for (auto& g : f.gpus) g = GpuFacts{g.index, g.name, g.pci_bus_id, g.memory_bytes};
  for (auto& p : f.pairs) p.topology = "?";
  f.load_ran = false;
  const auto checks = evaluate_doctor(f);
  REQUIRE_FALSE(doctor_failed(checks));
  for (const char* name : {"pcie_link", "nvlink", "p2p_path", "persistence_mode", "power_limit",
                           "clock_events_idle", "ecc_errors", "row_remapping", "mig",
                           "other_processes"}) {
    INFO(name);
    REQUIRE(check(f, name).status == CheckStatus::skip);
  }
}
