// The named interconnects of `mgbench predict` (see links.hpp). Every number is per GPU and per
// direction. Sources (also in docs/METHODOLOGY.md, "Prediction"):
//   line rates:  NVIDIA A100 Tensor Core GPU datasheet (2021): NVLink 600 GB/s (12 links);
//                NVIDIA H100 Tensor Core GPU datasheet (2023): NVLink 900 GB/s (18 links);
//                NVIDIA DGX B200 datasheet (2024): NVLink 1.8 TB/s per GPU (18 links);
//                PCI Express Base Specification 4.0 (2017) and 5.0 (2019): 16 and 32 GT/s per
//                lane, 128b/130b, x16; NVIDIA ConnectX-6 adapter datasheet (2020): HDR
//                200 Gb/s; NVIDIA ConnectX-7 adapter datasheet (2022): NDR 400 Gb/s and
//                400 GbE; IEEE 802.3ba (2010): 100 Gb/s Ethernet (all counted per direction,
//                the bidirectional figures halved).
//   sustained:   NCCL 2.28 topology model (src/graph/topo.h and topo.cc, 2025): 20.0 / 20.6 /
//                40.1 GB/s per NVLink on sm80 / sm90 / sm100, PCIe x16 at 24 (Gen4) and 48
//                (Gen5) GB/s, 12.0 GB/s for a 100 Gb/s NIC (0.96 of its line rate, applied to
//                every NIC speed).
//   latencies:   NCCL 2.28 tuning model (src/graph/tuning.cc, 2025): per hop of the LL
//                protocol 0.6 us over NVLink, 1.0 us over PCIe, 2.7 us over the network; an
//                NVLS operation 25 us; NVLS efficiency 0.85 (Hopper) and 0.74 (Blackwell).
#include "mgbench/analysis/links.hpp"

#include <fmt/format.h>

#include <cmath>

#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench {

namespace {

constexpr const char* kNcclModel = "NCCL 2.28 topology and tuning models (2025)";
constexpr double kNvlinkHopUs = 0.6;
constexpr double kPcieHopUs = 1.0;
constexpr double kNetHopUs = 2.7;
constexpr double kNvlsLatencyUs = 25.0;
constexpr double kNicEfficiency = 12.0 / 12.5;  // NCCL's 100 Gb/s NIC: 12.0 of 12.5 GB/s
constexpr double kMaxCustomGBps = 1e5;

Link intra(const char* name, double line, double sustained, double hop, double nvls_eff,
           std::string source) {
  return Link{name,
              LinkScope::intra_node,
              line,
              sustained,
              hop,
              nvls_eff,
              nvls_eff > 0 ? kNvlsLatencyUs : 0.0,
              std::move(source)};
}

Link nic(const char* name, double gbit, std::string source) {
  const double line = gbit / 8.0;
  return Link{name, LinkScope::inter_node, line, line * kNicEfficiency, kNetHopUs, 0,
              0,    std::move(source)};
}

std::string names_of(LinkScope scope) {
  std::string out;
  for (const auto& link : link_presets()) {
    if (link.scope != scope) continue;
    out += (out.empty() ? "" : ", ") + link.name;
  }
  return out;
}

}  // namespace

const char* to_string(LinkScope scope) {
  return scope == LinkScope::intra_node ? "intra-node" : "inter-node";
}

const std::vector<Link>& link_presets() {
  static const std::vector<Link> presets = {
      intra("nvlink3", 300, 12 * 20.0, kNvlinkHopUs, 0,
            fmt::format("NVIDIA A100 Tensor Core GPU datasheet (2021); {}", kNcclModel)),
      intra("nvlink4", 450, 18 * 20.6, kNvlinkHopUs, 0.85,
            fmt::format("NVIDIA H100 Tensor Core GPU datasheet (2023); {}", kNcclModel)),
      intra("nvlink5", 900, 18 * 40.1, kNvlinkHopUs, 0.74,
            fmt::format("NVIDIA DGX B200 datasheet (2024); {}", kNcclModel)),
      intra("pcie4", 31.5, 24, kPcieHopUs, 0,
            fmt::format("PCI Express Base Specification 4.0 (2017); {}", kNcclModel)),
      intra("pcie5", 63.0, 48, kPcieHopUs, 0,
            fmt::format("PCI Express Base Specification 5.0 (2019); {}", kNcclModel)),
      nic("ib-hdr", 200, fmt::format("NVIDIA ConnectX-6 adapter datasheet (2020); {}", kNcclModel)),
      nic("ib-ndr", 400, fmt::format("NVIDIA ConnectX-7 adapter datasheet (2022); {}", kNcclModel)),
      nic("roce-400", 400,
          fmt::format("NVIDIA ConnectX-7 adapter datasheet (2022); {}", kNcclModel)),
      nic("eth-100", 100, fmt::format("IEEE 802.3ba (2010); {}", kNcclModel)),
  };
  return presets;
}

const Link& link_preset(const std::string& name) {
  for (const auto& link : link_presets()) {
    if (link.name == name) return link;
  }
  throw UsageError(fmt::format("unknown link '{}'", name));
}

Link parse_link(const std::string& text, LinkScope scope, const std::string& option) {
  for (const auto& link : link_presets()) {
    if (link.name != text) continue;
    if (link.scope != scope) {
      throw UsageError(fmt::format("{} {}: '{}' is an {} link ({} takes {}, or a number)", option,
                                   text, text, to_string(link.scope), option, names_of(scope)));
    }
    return link;
  }
  const bool inter = scope == LinkScope::inter_node;
  const std::string unit = inter ? "Gb/s" : "GB/s";
  double value = 0;
  try {
    value = parse_double(text, option);
  } catch (const UsageError&) {
    value = -1;
  }
  if (!std::isfinite(value) || value <= 0 || value > kMaxCustomGBps) {
    throw UsageError(fmt::format("invalid {} '{}': expected {} or a bandwidth in {} (> 0)", option,
                                 text, names_of(scope), unit));
  }
  Link link;
  link.name = "custom";
  link.scope = scope;
  link.bandwidth_GBps = inter ? value / 8.0 : value;
  link.hop_latency_us = inter ? kNetHopUs : kPcieHopUs;
  link.source =
      fmt::format("{} {} {} as given; hop latency from {}", option, text, unit, kNcclModel);
  return link;
}

}  // namespace mgbench
