// Link limits of the impossible-value flags (PCIe for host copies, NVLink or PCIe between GPUs),
// the h2d plan-time refusal of timing=graph with pageable memory, the data-path summaries that
// keep differently measured points apart: all without a GPU.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "datapath/datapath_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/gpu_models.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"

namespace {

using mgbench::HardwareLimits;
using mgbench::Json;
using mgbench::LimitCheck;
using mgbench::LimitKind;
using mgbench::PointResult;
namespace dp = mgbench::bench::datapath;

// An HGX H200: PCIe gen5 x16 to the host, 18 NVLink 4 links up.
HardwareLimits hgx_h200() {
  HardwareLimits hw;
  hw.gpu_name = "NVIDIA H200";
  hw.cc_major = 9;
  hw.cc_minor = 0;
  hw.pcie_gen = 5;
  hw.pcie_width = 16;
  hw.nvlinks_up = 18;
  return hw;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<mgbench::PointFlag> flags_of(double value, const std::string& direction,
                                         LimitKind kind, const HardwareLimits& hw) {
  const std::vector<LimitCheck> checks{LimitCheck("GBps", kind, "", "direction")};
  return mgbench::impossible_values(Json{{"GBps", value}}, Json{{"direction", direction}},
                                    checks, hw);
}

}  // namespace

TEST_CASE("PCIe link rates per lane and per link, after line coding", "[limits]") {
  CHECK(mgbench::pcie_lane_GBps(1) == Approx(0.25));
  CHECK(mgbench::pcie_lane_GBps(2) == Approx(0.5));
  CHECK(mgbench::pcie_lane_GBps(3) == Approx(0.9846).epsilon(1e-3));
  CHECK(mgbench::pcie_link_GBps(4, 16) == Approx(31.51).epsilon(1e-3));
  CHECK(mgbench::pcie_link_GBps(5, 16) == Approx(63.02).epsilon(1e-3));
  CHECK(mgbench::pcie_link_GBps(5, 8) == Approx(31.51).epsilon(1e-3));
  CHECK(mgbench::pcie_link_GBps(6, 16) == Approx(121.0).epsilon(1e-3));
  CHECK(mgbench::pcie_link_GBps(0, 16) == 0.0);
  CHECK(mgbench::pcie_link_GBps(9, 16) == 0.0);
  CHECK(mgbench::pcie_link_GBps(5, 0) == 0.0);
}

TEST_CASE("NVLink generation follows the architecture, the link rate the generation",
          "[limits]") {
  CHECK(mgbench::nvlink_generation_of(6, 0) == 1);
  CHECK(mgbench::nvlink_generation_of(6, 1) == 0);
  CHECK(mgbench::nvlink_generation_of(7, 0) == 2);
  CHECK(mgbench::nvlink_generation_of(8, 0) == 3);
  CHECK(mgbench::nvlink_generation_of(9, 0) == 4);
  CHECK(mgbench::nvlink_generation_of(10, 0) == 5);
  CHECK(mgbench::nvlink_generation_of(12, 0) == 0);
  CHECK(mgbench::nvlink_link_GBps(1) == 20.0);
  CHECK(mgbench::nvlink_link_GBps(4) == 25.0);
  CHECK(mgbench::nvlink_link_GBps(5) == 50.0);
  CHECK(mgbench::nvlink_link_GBps(0) == 0.0);
  // H100/H200 SXM: 18 links x 25 GB/s = 450 GB/s per direction (900 GB/s both ways).
  CHECK(mgbench::peer_link_limit(hgx_h200()).GBps == Approx(450.0));
}

TEST_CASE("the host link is the PCIe link, unknown over NVLink-C2C or without NVML",
          "[limits]") {
  const auto link = mgbench::host_link_limit(hgx_h200());
  CHECK(link.GBps == Approx(63.02).epsilon(1e-3));
  CHECK(contains(link.source, "PCIe gen5 x16"));
  CHECK(contains(link.source, "NVML"));
  HardwareLimits grace = hgx_h200();
  grace.host_over_c2c = true;
  CHECK(mgbench::host_link_limit(grace).GBps == 0.0);
  CHECK(mgbench::host_link_limit(HardwareLimits{}).GBps == 0.0);
}

TEST_CASE("between GPUs: NVLink links x rate, PCIe without NVLink, unknown otherwise",
          "[limits]") {
  HardwareLimits pcie_only = hgx_h200();
  pcie_only.nvlinks_up = 0;
  const auto pcie = mgbench::peer_link_limit(pcie_only);
  CHECK(pcie.GBps == Approx(63.02).epsilon(1e-3));
  CHECK(contains(pcie.source, "no NVLink"));
  HardwareLimits unknown_links = hgx_h200();
  unknown_links.nvlinks_up = -1;
  CHECK(mgbench::peer_link_limit(unknown_links).GBps == 0.0);
  HardwareLimits shared_gpu = hgx_h200();
  shared_gpu.distinct_gpus = false;
  CHECK(mgbench::peer_link_limit(shared_gpu).GBps == 0.0);
  HardwareLimits unknown_arch = hgx_h200();
  unknown_arch.cc_major = 12;
  unknown_arch.gpu_name = "NVIDIA Future GPU";
  CHECK(mgbench::peer_link_limit(unknown_arch).GBps == 0.0);  // links up, rate unknown
  // A known model's NVLink generation comes from its row, whatever the architecture says.
  HardwareLimits known_model = hgx_h200();
  known_model.cc_major = 12;
  CHECK(mgbench::peer_link_limit(known_model).GBps == Approx(450.0));
  CHECK(contains(mgbench::peer_link_limit(known_model).source, "NVLink 4 of the H200 SXM 141GB"));
  HardwareLimits one_link = hgx_h200();
  one_link.cc_major = 7;
  one_link.nvlinks_up = 1;  // 25 GB/s, slower than PCIe gen5 x16: the faster path bounds
  CHECK(mgbench::peer_link_limit(one_link).GBps == Approx(63.02).epsilon(1e-3));
  one_link.pcie_gen = 3;
  CHECK(mgbench::peer_link_limit(one_link).GBps == Approx(25.0));
  const auto nvlink = mgbench::peer_link_limit(hgx_h200());
  CHECK(contains(nvlink.source, "18 NVLink links"));
  CHECK(contains(nvlink.source, "NVLink 4"));
}

TEST_CASE("h2d above the PCIe link is flagged like HBM values, both directions count twice",
          "[limits]") {
  const auto above = flags_of(70.0, "h2d", LimitKind::host_link, hgx_h200());
  REQUIRE(above.size() == 1);
  CHECK(above[0].kind == "impossible");
  CHECK(above[0].metric == "GBps");
  CHECK(contains(above[0].reason, "host link"));
  CHECK(contains(above[0].reason, "63.0 GB/s"));
  CHECK(contains(above[0].reason, "PCIe gen5 x16"));
  CHECK(flags_of(55.0, "h2d", LimitKind::host_link, hgx_h200()).empty());
  CHECK(flags_of(110.0, "bidir", LimitKind::host_link, hgx_h200()).empty());
  const auto bidir = flags_of(130.0, "bidir", LimitKind::host_link, hgx_h200());
  REQUIRE(bidir.size() == 1);
  CHECK(contains(bidir[0].reason, "126.0 GB/s for both directions"));
  // Without link facts (no NVML) or over C2C: no check, whatever the value.
  CHECK(flags_of(1e6, "h2d", LimitKind::host_link, HardwareLimits{}).empty());
  HardwareLimits grace = hgx_h200();
  grace.host_over_c2c = true;
  CHECK(flags_of(400.0, "h2d", LimitKind::host_link, grace).empty());
}

TEST_CASE("p2p above the NVLink aggregate is flagged, ranks sharing a GPU are not checked",
          "[limits]") {
  const auto above = flags_of(480.0, "uni", LimitKind::peer_link, hgx_h200());
  REQUIRE(above.size() == 1);
  CHECK(contains(above[0].reason, "GPU-to-GPU link"));
  CHECK(contains(above[0].reason, "450.0 GB/s"));
  CHECK(flags_of(390.0, "uni", LimitKind::peer_link, hgx_h200()).empty());
  CHECK(flags_of(780.0, "bidir", LimitKind::peer_link, hgx_h200()).empty());
  CHECK(flags_of(905.0, "bidir", LimitKind::peer_link, hgx_h200()).size() == 1);
  HardwareLimits pcie_only = hgx_h200();
  pcie_only.nvlinks_up = 0;
  CHECK(flags_of(70.0, "uni", LimitKind::peer_link, pcie_only).size() == 1);
  HardwareLimits shared_gpu = hgx_h200();
  shared_gpu.distinct_gpus = false;
  CHECK(flags_of(2000.0, "uni", LimitKind::peer_link, shared_gpu).empty());
  // A check without a direction parameter never doubles.
  const std::vector<LimitCheck> plain{LimitCheck("GBps", LimitKind::peer_link)};
  CHECK(mgbench::impossible_values(Json{{"GBps", 500.0}}, Json{{"direction", "bidir"}}, plain,
                                   hgx_h200())
            .size() == 1);
}

TEST_CASE("h2d leaves out timing=graph with pageable memory, and refuses only that", "[limits][plan]") {
  mgbench::AxisValues values{
      {"direction", {"h2d"}}, {"memory", {"pageable"}}, {"timing", {"graph"}}, {"cache", {"cold"}}};
  try {
    (void)dp::h2d_expand(values);
    FAIL("expected a UsageError");
  } catch (const mgbench::UsageError& e) {
    CHECK(contains(e.what(), "timing=graph cannot time memory=pageable"));
    CHECK(contains(e.what(), "memory=pinned"));
  }
  // Other memory or timing values beside them: only the impossible pair is left out.
  values["memory"] = {"pinned", "pageable"};
  values["timing"] = {"device", "graph"};
  const auto points = dp::h2d_expand(values);
  REQUIRE(points.size() == 3);
  for (const auto& p : points) {
    CHECK_FALSE((p.text("memory") == "pageable" && p.text("timing") == "graph"));
    CHECK(p.contains("cache"));
  }
  values["timing"] = {"device", "host"};
  CHECK(dp::h2d_expand(values).size() == 4);
}

namespace {

PointResult h2d_point(int gpus, double per_gpu, const std::string& timing,
                      const std::string& cache) {
  PointResult p;
  p.workload = "h2d";
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.params = mgbench::Params{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", "local"},
                             {"bytes", 1 << 20},   {"timing", timing},   {"cache", cache}};
  p.measured = {mgbench::timing_from_string(timing), mgbench::cache_from_string(cache)};
  p.metrics = Json{{"GBps_per_gpu", per_gpu}, {"link_GBps", 63.0}};
  return p;
}

}  // namespace

TEST_CASE("the h2d summary relates a point only to points measured the same way",
          "[limits][datapath]") {
  // Alone: 50 GB/s cold, 20 GB/s hot (made up so that a mix-up shows).
  const Json rows = dp::h2d_summary({h2d_point(1, 50.0, "device", "cold"),
                                     h2d_point(1, 20.0, "device", "hot"),
                                     h2d_point(2, 40.0, "device", "cold")});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["measured"] == "device, cold");
  CHECK(rows[1]["measured"] == "device, hot");
  CHECK(rows[2]["alone_GBps"].get<double>() == Approx(50.0));
  CHECK(rows[2]["shared_ratio"].get<double>() == Approx(0.8));
}

TEST_CASE("the p2p pair matrix is kept per timing and cache", "[limits][datapath]") {
  auto point = [](const std::string& cache, double gbps) {
    PointResult p;
    p.gpus = 2;
    p.devices = {0, 1};
    p.params =
        mgbench::Params{{"engine", "ce"}, {"direction", "uni"}, {"bytes", 64}, {"cache", cache}};
    p.measured = {mgbench::TimingMethod::device, mgbench::cache_from_string(cache)};
    const Json bw = Json::array({Json::array({nullptr, gbps}), Json::array({gbps, nullptr})});
    p.extra["ranks"] = Json::array({Json{{"details", Json{{"bw_matrix_GBps", bw}}}}});
    return p;
  };
  const Json rows = dp::p2p_summary({point("cold", 300.0), point("hot", 400.0)});
  REQUIRE(rows.size() == 4);
  CHECK(rows[0]["measured"] == "device, cold");
  CHECK(rows[0]["GBps"].get<double>() == Approx(300.0));
  CHECK(rows[2]["measured"] == "device, hot");
  CHECK(rows[2]["GBps"].get<double>() == Approx(400.0));
}
