#pragma once
// The network adapters of this host as sysfs shows them, and how close each GPU sits to each
// RDMA adapter on the PCI tree: what decides whether NCCL can use GPUDirect RDMA between nodes.
// Every reader takes the sysfs root as an argument, so tests run on a fake tree.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

// One port of an RDMA device (/sys/class/infiniband/<device>/ports/<port>/).
struct IbPort {
  std::string device;      // "mlx5_0"
  int port = 1;
  std::string state;       // "ACTIVE" (the text after "4: ")
  std::string rate;        // "400 Gb/sec (4X NDR)"
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
  std::vector<std::string> netdevs;  // Ethernet interfaces of the device, e.g. "ens1f0np0"
  std::string pci_path;    // below <sysfs>/devices: "pci0000:00/0000:00:01.0/0000:01:00.0"
  int numa_node = -1;
};

// A network interface backed by a device (/sys/class/net/<name> with a `device` link).
struct NetInterface {
  std::string name;
  std::optional<int> speed_mbps;  // none when the link is down or the driver does not say
  std::string operstate;          // "up", "down", ...
};

struct NicInventory {
  std::vector<IbPort> ib_ports;  // sorted by device, then port
  std::vector<NetInterface> interfaces;  // sorted by name
};

NicInventory read_nics(const std::string& sysfs_root = "/sys");

// The PCI path of a device from its bus id ("0000:17:00.0", any case): "" when sysfs lacks it.
std::string pci_device_path(const std::string& sysfs_root, const std::string& pci_bus_id);

// How two devices connect, in `nvidia-smi topo` words: "PIX" (they share a PCIe bridge below
// the root port), "PHB" (same PCI root complex), "NODE" (different roots, same NUMA node),
// "SYS" (different NUMA nodes), "?" (a path unknown). Pure.
std::string pci_affinity(const std::string& path_a, int numa_a, const std::string& path_b,
                         int numa_b);

struct GpuNicAffinity {
  int gpu = 0;             // CUDA ordinal
  std::string nic;         // RDMA device
  std::string relation;    // pci_affinity()
};

// Every (GPU, RDMA device) pair; `gpus` holds (CUDA ordinal, PCI bus id).
std::vector<GpuNicAffinity> gpu_nic_affinity(const std::vector<std::pair<int, std::string>>& gpus,
                                             const NicInventory& nics,
                                             const std::string& sysfs_root = "/sys");

// {"infiniband": [{device, port, state, rate, link_layer, netdevs, numa_node}],
//  "interfaces": [{name, speed_mbps|null, operstate}],
//  "gpu_nic_affinity": [{gpu, nic, relation}]}
Json nics_to_json(const NicInventory& nics, const std::vector<GpuNicAffinity>& affinity);

}  // namespace mgbench
