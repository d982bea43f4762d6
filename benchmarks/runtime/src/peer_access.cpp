// Peer access for the workloads that use peers' memory (see peer_access.hpp).
#include "mgbench/bench/peer_access.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "mgbench/core/check.hpp"
#include "mgbench/core/test_hooks.hpp"

namespace mgbench::bench {

std::string missing_peer_access(const std::vector<int>& devices, const std::string& needed_by) {
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      int can = 0;
      MGBENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (can == 0) {
        return fmt::format("no peer access from GPU {} to GPU {} (cudaDeviceCanAccessPeer): {} "
                           "needs NVLink or PCIe peer-to-peer between every pair of the group",
                           a, b, needed_by);
      }
    }
  }
  return {};
}

std::string enable_peer_access(int device, const std::vector<int>& devices) {
  if (devices.size() > 1 && test_hooks::read(test_hooks::kPeerAccessFail)) {
    return fmt::format("enabling peer access from GPU {} failed ({}=1)", device,
                       test_hooks::kPeerAccessFail);
  }
  MGBENCH_CUDA_CHECK(cudaSetDevice(device));
  for (int other : devices) {
    if (other == device) continue;
    const cudaError_t err = cudaDeviceEnablePeerAccess(other, 0);
    (void)cudaGetLastError();  // a refused pair leaves no error behind for the next call
    if (err == cudaSuccess || err == cudaErrorPeerAccessAlreadyEnabled) continue;
    return fmt::format("enabling peer access from GPU {} to GPU {} failed: {} (the GPUs report "
                       "peer access, but an IOMMU, ACS or VM setting may block peer-to-peer)",
                       device, other, cudaGetErrorString(err));
  }
  return {};
}

}  // namespace mgbench::bench
