#pragma once
// What `--redact` removes from a run before it is shared (docs/SHARING.md): the host name, the
// values of CUDA_*, NCCL_*, OMPI_* and SLURM_* environment variables, GPU serial numbers and
// UUIDs, and the ids and names of other processes found on the GPUs. Values are replaced by a
// short hash, so two redacted runs of one machine still compare equal where they were equal.
#include <string>

#include "mgbench/model/results.hpp"

namespace mgbench {

// "redacted-<16 hex digits>": a stable (FNV-1a 64) hash of `value`. Not a secret: a value that
// can be guessed can be confirmed against it.
std::string redacted_label(const std::string& value);

// A copy of `run` with the identifying fields replaced (see above). Every string in the
// document that contains the host name has it replaced too (error messages carry it).
RunResult redact_run(const RunResult& run);

// True when `name` is an environment variable whose value --redact hides.
bool is_redacted_variable(const std::string& name);

}  // namespace mgbench
