#pragma once
// What a worker does, callable in-process too (--isolation none).
#include "mgbench/model/group.hpp"

namespace mgbench {

// Runs a group's points on its devices (telemetry observer included when enabled); with
// `processes`, this process's rank of the group only (one process per GPU).
// Throws for errors that make the process unusable; what finished was already reported.
void execute_group(const GroupSpec& spec, PointSink& sink, ProcessGroup* processes = nullptr);

// Device inventory + environment fingerprint (+ cheap doctor checks when `doctor`).
// Throws EnvironmentError when there is no usable GPU.
Json execute_probe(bool doctor);

}  // namespace mgbench
