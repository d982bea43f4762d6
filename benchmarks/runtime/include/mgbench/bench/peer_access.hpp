#pragma once
// Peer access for the workloads that read or write their peers' memory (the own all-reduce, the
// p2p matrix): whether the group has it, and enabling it. A group without it waives those
// points with the reason; it never fails the group, so the other points (NCCL's among them) run.
#include <string>
#include <vector>

namespace mgbench::bench {

// Why the group of `devices` cannot use peer access ("" when every ordered pair of distinct
// devices can, by cudaDeviceCanAccessPeer). `needed_by` names what needs it, e.g. "the own
// all-reduce". Identical on every rank.
std::string missing_peer_access(const std::vector<int>& devices, const std::string& needed_by);

// Enables peer access from `device` (made current) to every other device of `devices`; a pair
// enabled before is fine. Returns why it failed ("" on success): a VM whose IOMMU or ACS setting
// blocks peer-to-peer can say yes to cudaDeviceCanAccessPeer and then refuse. Leaves no CUDA error
// pending. With the test hook MGBENCH_TEST_PEER_ACCESS_FAIL=1 it fails for two or more ranks.
std::string enable_peer_access(int device, const std::vector<int>& devices);

}  // namespace mgbench::bench
