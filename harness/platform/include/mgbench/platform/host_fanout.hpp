#pragma once
// The answers of `mgbench doctor --fingerprint` run once per host through mpirun or srun (the run
// layer's launch of one rank per node, launcher.hpp): each process prints one marked JSON line on
// stdout; the launcher forwards it here.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/placement.hpp"
#include "mgbench/platform/host_compare.hpp"

namespace mgbench {

// The marker that starts each host's answer line.
inline constexpr const char* kFingerprintMarker = "mgbench-fingerprint ";

// The answers in a launcher's stdout: one per marked line, other lines ignored. A marked line
// that does not parse becomes an entry with an error. When `expected` hosts were asked and fewer
// answered, one entry with an error says how many are missing.
std::vector<HostFingerprint> parse_fingerprint_lines(const std::string& output,
                                                     std::size_t expected);

}  // namespace mgbench
