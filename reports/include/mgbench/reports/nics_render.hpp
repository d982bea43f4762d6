#pragma once
// The network adapters `mgbench doctor` lists (nics_to_json's shape) and the per-host view of
// `mgbench doctor --hosts`: one block per host (GPUs, versions, adapters), then the checks that
// compare the hosts.
#include <ostream>

#include "mgbench/core/params.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports {

// Rows: RDMA ports (device, port, state, rate, link layer, Ethernet names) then network
// interfaces (name, speed, state). Notes: per GPU, each RDMA device with its PCI relation.
Table nics_table(const Json& nics);
void render_nics_text(const Json& nics, std::ostream& out, bool colour = false);

// `hosts`: {"hosts": [{"host", "error", "environment"}], "checks": doctor_to_json(...)}.
void render_hosts_text(const Json& hosts, std::ostream& out, bool colour = false);

}  // namespace mgbench::reports
