#pragma once
// Before a multi-host run: every host's environment fingerprint side by side. The hosts of one
// run must agree on what makes numbers comparable (GPU model, driver, CUDA runtime, NCCL, GPU
// count: fail) and should agree on what shifts them (power limits, clocks: warn). Pure, so the
// rules are unit-tested on synthetic fingerprints.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/platform/doctor.hpp"

namespace mgbench {

struct HostFingerprint {
  std::string host;
  Json environment;   // as collect_environment() writes it
  std::string error;  // why this host has no usable fingerprint ("" when it has one)
};

// Checks in a fixed order: hosts_reached, hosts_gpu_model, hosts_driver, hosts_cuda_runtime,
// hosts_nccl, hosts_gpu_count (fail on a difference), hosts_power_limit, hosts_clocks (warn).
// A finding names each distinct value with its hosts: "580.65 on a,b; 570.86 on c".
std::vector<DoctorCheck> compare_host_fingerprints(const std::vector<HostFingerprint>& hosts);

}  // namespace mgbench
