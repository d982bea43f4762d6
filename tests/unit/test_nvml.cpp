// NVML loader helpers: reason-bit decoding, PCI bus id matching, the missing-library path.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/platform/telemetry.hpp"

using namespace mgbench;

TEST_CASE("clock-event reasons decode every set bit in bit order") {
  const auto names = decode_clock_event_reasons(clock_event::kGpuIdle | clock_event::kSwPowerCap |
                                                clock_event::kHwThermal);
  REQUIRE(names == std::vector<std::string>{"gpu_idle", "sw_power_cap", "hw_thermal"});
}

TEST_CASE("clock-event reasons name unknown bits by value") {
  const auto names = decode_clock_event_reasons(0x200 | clock_event::kHwPowerBrake);
  REQUIRE(names == std::vector<std::string>{"hw_power_brake", "bit_0x200"});
}

TEST_CASE("clock-event reasons: no bit gives no name") {
  REQUIRE(decode_clock_event_reasons(0).empty());
}

TEST_CASE("clock-event bits match nvml.h values") {
  REQUIRE(clock_event::kGpuIdle == 0x1);
  REQUIRE(clock_event::kApplicationsClocks == 0x2);
  REQUIRE(clock_event::kSwPowerCap == 0x4);
  REQUIRE(clock_event::kHwSlowdown == 0x8);
  REQUIRE(clock_event::kSyncBoost == 0x10);
  REQUIRE(clock_event::kSwThermal == 0x20);
  REQUIRE(clock_event::kHwThermal == 0x40);
  REQUIRE(clock_event::kHwPowerBrake == 0x80);
  REQUIRE(clock_event::kDisplayClock == 0x100);
}

TEST_CASE("throttled is tested with a mask, not equality") {
  // Power cap together with other bits is still throttled.
  REQUIRE(clock_event_throttled(clock_event::kSwPowerCap | clock_event::kGpuIdle |
                                clock_event::kSyncBoost));
  REQUIRE_FALSE(clock_event_throttled(clock_event::kGpuIdle | clock_event::kApplicationsClocks |
                                      clock_event::kSyncBoost | clock_event::kDisplayClock));
}

TEST_CASE("severe reasons are thermal, HW slowdown and power brake, not the power cap") {
  REQUIRE(clock_event_severe(clock_event::kSwThermal | clock_event::kSwPowerCap));
  REQUIRE(clock_event_severe(clock_event::kHwPowerBrake));
  REQUIRE(clock_event_severe(clock_event::kHwSlowdown | clock_event::kGpuIdle));
  REQUIRE_FALSE(clock_event_severe(clock_event::kSwPowerCap | clock_event::kGpuIdle));
}

TEST_CASE("PCI bus ids normalize across NVML and CUDA spellings") {
  REQUIRE(normalize_pci_bus_id("00000000:19:00.0") == "0000:19:00.0");
  REQUIRE(normalize_pci_bus_id("0000:1A:00.0") == "0000:1a:00.0");
  REQUIRE(normalize_pci_bus_id("1a:00.0") == "0000:1a:00.0");
  REQUIRE(normalize_pci_bus_id("0001:c3:1f") == "0001:c3:1f.0");
}

TEST_CASE("PCI bus id normalization rejects text that is not an address") {
  REQUIRE(normalize_pci_bus_id("").empty());
  REQUIRE(normalize_pci_bus_id("GPU-1234").empty());
  REQUIRE(normalize_pci_bus_id("0000:zz:00.0").empty());
  REQUIRE(normalize_pci_bus_id("0000:100:00.0").empty());
}

TEST_CASE("CUDA devices map to NVML devices by bus id, whatever the order") {
  const std::vector<std::string> cuda{"0000:C1:00.0", "0000:19:00.0", "0000:99:00.0"};
  const std::vector<std::string> nvml{"00000000:19:00.0", "00000000:4A:00.0",
                                      "00000000:C1:00.0"};
  REQUIRE(match_devices_by_bus_id(cuda, nvml) == std::vector<int>{2, 0, -1});
}

TEST_CASE("topology levels get nvidia-smi's labels") {
  REQUIRE(topology_label(10) == "PIX");
  REQUIRE(topology_label(20) == "PXB");
  REQUIRE(topology_label(30) == "PHB");
  REQUIRE(topology_label(40) == "NODE");
  REQUIRE(topology_label(50) == "SYS");
  REQUIRE(topology_label(7) == "?");
}

TEST_CASE("loading NVML from a missing library fails with a one-line reason") {
  std::string error;
  const auto nvml = Nvml::load({"/nonexistent/mgbench/libnvidia-ml.so.1"}, &error);
  REQUIRE(nvml == nullptr);
  REQUIRE(error.find("/nonexistent/mgbench/libnvidia-ml.so.1") != std::string::npos);
  REQUIRE(error.find('\n') == std::string::npos);
}

TEST_CASE("loading NVML from a library without NVML symbols fails cleanly") {
  std::string error;
  const auto nvml = Nvml::load({"libm.so.6"}, &error);
  REQUIRE(nvml == nullptr);
  REQUIRE(error.find("nvmlInit_v2") != std::string::npos);
}

TEST_CASE("MGBENCH_NVML_LIBRARY replaces the default library search") {
  ::setenv("MGBENCH_NVML_LIBRARY", "/tmp/mgbench-no-such-nvml.so", 1);
  const auto candidates = Nvml::default_candidates();
  ::unsetenv("MGBENCH_NVML_LIBRARY");
  REQUIRE(candidates == std::vector<std::string>{"/tmp/mgbench-no-such-nvml.so"});
  REQUIRE(Nvml::default_candidates().front() == "libnvidia-ml.so.1");
}

TEST_CASE("no telemetry observer without NVML") {
  RunSettings settings;
  settings.telemetry = true;
  REQUIRE(make_point_observer(settings, {0, 1}, nullptr) == nullptr);
}

TEST_CASE("no telemetry observer when telemetry is off") {
  RunSettings settings;
  settings.telemetry = false;
  REQUIRE(make_point_observer(settings, {0}) == nullptr);
}

TEST_CASE("a relative MGBENCH_NVML_LIBRARY is refused: the default search stays") {
  for (const char* relative : {"libevil.so", "./libnvidia-ml.so.1", "lib/x.so"}) {
    ::setenv("MGBENCH_NVML_LIBRARY", relative, 1);
    const auto candidates = Nvml::default_candidates();
    ::unsetenv("MGBENCH_NVML_LIBRARY");
    REQUIRE(candidates.size() > 1);
    CHECK(candidates.front() == "libnvidia-ml.so.1");
    CHECK(std::find(candidates.begin(), candidates.end(), relative) == candidates.end());
  }
}
