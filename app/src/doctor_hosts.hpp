#pragma once
// The halves of `mgbench doctor` that look at the network and at other hosts.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/host_fanout.hpp"
#include "mgbench/run/launcher.hpp"

namespace mgbench {

// This host's network adapters and each GPU's PCI relation to each RDMA adapter.
Json local_nics(const DeviceInventory& inventory);

// `doctor --fingerprint`: prints this host's answer line (marker + JSON) on stdout; exit 0 even
// without a GPU (the answer then carries the reason).
int print_host_fingerprint();

// `doctor --hosts/--hostfile/--launcher`: one `doctor --fingerprint` per host, launched as the
// sweep's device probe is (one rank per node, the same variables forwarded, --launcher-arg
// passed on, a long host list through a file), then the comparison. Exit 0, or 4 when a check
// fails or the launcher is missing or fails (one line saying why).
int doctor_across_hosts(const LaunchOptions& launch, double timeout_s, bool json);

}  // namespace mgbench
