#pragma once
// What bounds a metric, and what its "% of peak" is a share of (point_quality.hpp,
// presentation.hpp's PeakSpec): bytes of HBM traffic per second (read + write), bytes copied per
// second (a copy reads and writes each byte: half the traffic peak), dense TFLOP/s of a dtype,
// the host link (PCIe) of the GPU, or the link between two GPUs (NVLink, else PCIe).
#include <string>

namespace mgbench {

enum class LimitKind { hbm_traffic, copy, tflops, host_link, peer_link };
const char* to_string(LimitKind kind);
LimitKind limit_kind_from_string(const std::string& text);  // throws std::invalid_argument

}  // namespace mgbench
