#pragma once
// One process per host through the engine the cluster already has (mpirun or srun), for
// commands that ask every host something (`mgbench doctor --hosts`): no SSH, no daemon. Each
// process prints one marked JSON line on stdout; the launcher forwards it here. Host lists and
// hostfiles are read by the run layer (launcher.hpp), as for the sweep.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/placement.hpp"
#include "mgbench/platform/host_compare.hpp"

namespace mgbench {

// The launcher command that starts `command` once on each host:
//   mpirun --host h1,h2 -np 2 --map-by ppr:1:node COMMAND...
//   srun --ntasks-per-node=1 [--nodes=2 --nodelist=h1,h2] COMMAND...  (no hosts: every node
//   of the allocation)
// `launcher` is mpirun or srun (UsageError for local).
std::vector<std::string> fanout_command(Launcher launcher,
                                        const std::vector<std::string>& hosts,
                                        const std::vector<std::string>& command);

// The marker that starts each host's answer line.
inline constexpr const char* kFingerprintMarker = "mgbench-fingerprint ";

// The answers in a launcher's stdout: one per marked line, other lines ignored. A marked line
// that does not parse becomes an entry with an error. When `expected` hosts were asked and fewer
// answered, one entry with an error says how many are missing.
std::vector<HostFingerprint> parse_fingerprint_lines(const std::string& output,
                                                     std::size_t expected);

}  // namespace mgbench
