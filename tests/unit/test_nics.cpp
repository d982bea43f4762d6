// Network adapters and GPU-NIC affinity read from a fake sysfs tree (tests/data/sysfs_nics):
// GPU 0 and mlx5_0 share a PCIe switch, GPU 1 shares only the root complex with mlx5_0, GPU 2
// sits on another root of NUMA node 0, and mlx5_1 (RoCE, port down) is on NUMA node 1.
#include <string>

#include "catch_compat.hpp"
#include "mgbench/platform/nics.hpp"

using namespace mgbench;

namespace {

const std::string kSysfs = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/sysfs_nics";

std::string relation(const std::vector<GpuNicAffinity>& links, int gpu, const std::string& nic) {
  for (const auto& l : links) {
    if (l.gpu == gpu && l.nic == nic) return l.relation;
  }
  return "absent";
}

}  // namespace

TEST_CASE("read_nics lists every RDMA port with its state, rate and link layer") {
  const NicInventory nics = read_nics(kSysfs);
  REQUIRE(nics.ib_ports.size() == 2);
  CHECK(nics.ib_ports[0].device == "mlx5_0");
  CHECK(nics.ib_ports[0].port == 1);
  CHECK(nics.ib_ports[0].state == "ACTIVE");
  CHECK(nics.ib_ports[0].rate == "400 Gb/sec (4X NDR)");
  CHECK(nics.ib_ports[0].link_layer == "InfiniBand");
  CHECK(nics.ib_ports[0].numa_node == 0);
  CHECK(nics.ib_ports[1].device == "mlx5_1");
  CHECK(nics.ib_ports[1].state == "DOWN");
  CHECK(nics.ib_ports[1].link_layer == "Ethernet");
  CHECK(nics.ib_ports[1].numa_node == 1);
  REQUIRE(nics.ib_ports[1].netdevs.size() == 1);
  CHECK(nics.ib_ports[1].netdevs[0] == "ens1f0np0");
}

TEST_CASE("read_nics lists interfaces backed by a device with their speed, not lo") {
  const NicInventory nics = read_nics(kSysfs);
  REQUIRE(nics.interfaces.size() == 1);
  CHECK(nics.interfaces[0].name == "ens1f0np0");
  REQUIRE(nics.interfaces[0].speed_mbps.has_value());
  CHECK(*nics.interfaces[0].speed_mbps == 100000);
  CHECK(nics.interfaces[0].operstate == "up");
}

TEST_CASE("read_nics of a tree without adapters is empty, not an error") {
  const NicInventory nics = read_nics(kSysfs + "/does-not-exist");
  CHECK(nics.ib_ports.empty());
  CHECK(nics.interfaces.empty());
}

TEST_CASE("gpu_nic_affinity tells switch, root complex, NUMA node and cross-socket apart") {
  const NicInventory nics = read_nics(kSysfs);
  const auto links = gpu_nic_affinity(
      {{0, "0000:03:00.0"}, {1, "0000:05:00.0"}, {2, "0000:41:00.0"}, {3, "0000:99:00.0"}}, nics,
      kSysfs);
  CHECK(links.size() == 8);  // one per GPU and RDMA device, not per port
  CHECK(relation(links, 0, "mlx5_0") == "PIX");
  CHECK(relation(links, 1, "mlx5_0") == "PHB");
  CHECK(relation(links, 2, "mlx5_0") == "NODE");
  CHECK(relation(links, 0, "mlx5_1") == "SYS");
  CHECK(relation(links, 3, "mlx5_0") == "?");  // a bus id sysfs does not know
}

TEST_CASE("gpu_nic_affinity accepts upper-case and short bus ids as CUDA and NVML print them") {
  const NicInventory nics = read_nics(kSysfs);
  const auto links = gpu_nic_affinity({{0, "00000000:03:00.0"}, {1, "05:00.0"}}, nics, kSysfs);
  CHECK(relation(links, 0, "mlx5_0") == "PIX");
  CHECK(relation(links, 1, "mlx5_0") == "PHB");
}

TEST_CASE("pci_affinity on paths: a shared bridge, a shared root, NUMA decides the rest") {
  CHECK(pci_affinity("pci0000:00/0000:00:01.0/0000:01:00.0", 0,
                     "pci0000:00/0000:00:01.0/0000:01:00.1", 0) == "PIX");
  CHECK(pci_affinity("pci0000:00/0000:00:01.0", 0, "pci0000:00/0000:00:02.0", 0) == "PHB");
  CHECK(pci_affinity("pci0000:00/0000:00:01.0", 0, "pci0000:40/0000:40:01.0", 0) == "NODE");
  CHECK(pci_affinity("pci0000:00/0000:00:01.0", 0, "pci0000:80/0000:80:01.0", 1) == "SYS");
  CHECK(pci_affinity("pci0000:00/0000:00:01.0", -1, "pci0000:80/0000:80:01.0", 1) == "?");
  CHECK(pci_affinity("", 0, "pci0000:80/0000:80:01.0", 0) == "?");
}

TEST_CASE("nics_to_json carries ports, interfaces and the affinity") {
  const NicInventory nics = read_nics(kSysfs);
  const Json j = nics_to_json(nics, gpu_nic_affinity({{0, "0000:03:00.0"}}, nics, kSysfs));
  REQUIRE(j["infiniband"].size() == 2);
  CHECK(j["infiniband"][0]["rate"] == "400 Gb/sec (4X NDR)");
  CHECK(j["interfaces"][0]["speed_mbps"] == 100000);
  REQUIRE(j["gpu_nic_affinity"].size() == 2);
  CHECK(j["gpu_nic_affinity"][0]["relation"] == "PIX");
}
