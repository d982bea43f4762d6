#pragma once
// One process per host through the engine the cluster already has (mpirun or srun), for
// commands that ask every host something (`mgbench doctor --hosts`): no SSH, no daemon. Each
// process prints one marked JSON line on stdout; the launcher forwards it here.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/platform/host_compare.hpp"

namespace mgbench {

enum class FanoutLauncher { mpirun, srun };

// "h1,h2" or "h1:8,h2:8" (the slot counts are accepted and ignored here): the host names, in
// order. Empty names, a bad slot count, a repeated host or a character outside
// [A-Za-z0-9._-] throws UsageError naming the culprit.
std::vector<std::string> parse_host_list(const std::string& text);

// An OpenMPI-style hostfile: one host per line ("h1", "h1 slots=8" or "h1:8"), '#' comments and
// blank lines ignored. A file that cannot be read, holds no host, or a bad line: UsageError.
std::vector<std::string> read_hostfile(const std::string& path);

// The launcher command that starts `command` once on each host:
//   mpirun --host h1,h2 -np 2 --map-by ppr:1:node COMMAND...
//   srun --ntasks-per-node=1 [--nodes=2 --nodelist=h1,h2] COMMAND...  (no hosts: every node
//   of the allocation)
std::vector<std::string> fanout_command(FanoutLauncher launcher,
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
