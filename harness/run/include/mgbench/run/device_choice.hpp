#pragma once
// Which GPUs a group of n uses when the user names none (`--devices` absent): the n devices
// whose slowest pairwise link is the best one, by the `nvidia-smi topo -m` labels the
// fingerprint reads through NVML (NV<k> over PIX over PXB over PHB over NODE over SYS). On a
// machine where every pair looks alike (one GPU, an NVSwitch box, no NVML) that is simply the
// first n, as before.
#include <string>
#include <vector>

#include "mgbench/run/plan.hpp"

namespace mgbench {

using TopologyLabels = std::vector<std::vector<std::string>>;  // [i][j] by device ordinal

// Smaller is closer: NV<k> 1, PIX 2, PXB 3, PHB 4, NODE 5, SYS 6; unknown labels 3.
int link_cost(const std::string& label);
// The best n of `candidates`: smallest worst pair cost, then smallest total, then the
// earliest ordinals. Searches every subset when there are few, else grows greedily.
std::vector<int> choose_devices(const std::vector<int>& candidates, int n,
                                const TopologyLabels& labels);
// Rewrites the local, one-node scaling groups of a plan made without --devices to the chosen
// devices, with one note per GPU count whose choice is not the first n.
void apply_topology(Plan& plan, const TopologyLabels& labels);

}  // namespace mgbench
