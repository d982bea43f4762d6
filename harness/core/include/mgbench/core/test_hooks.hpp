#pragma once
// Every test-only environment hook, by name, in one place (docs/TESTING-HOOKS.md lists them).
// A hook is read only when MGBENCH_ENABLE_TEST_WORKLOADS=1: a normal run never sees one.
#include <optional>
#include <string>

namespace mgbench::test_hooks {

// The switch: "1" registers the CPU `selftest` workload and turns the hooks below on.
inline constexpr const char* kEnable = "MGBENCH_ENABLE_TEST_WORKLOADS";
// N: the device probe reports N fake GPUs (no CUDA involved).
inline constexpr const char* kFakeDevices = "MGBENCH_TEST_FAKE_DEVICES";
// F: a busy-wait of F times the measured op time in every timed sample (a synthetic regression).
inline constexpr const char* kSlowdown = "MGBENCH_TEST_SLOWDOWN";
// N > 0: the sweep journal takes N points, then every append fails with ENOSPC.
inline constexpr const char* kJournalFailAfter = "MGBENCH_TEST_JOURNAL_FAIL_AFTER";

// "ok", "xid@W" or "hot@W": `mgbench soak` takes its health and per-window telemetry from a fake
// NVML (temperatures, power, clocks, a throttled span; an XID or a temperature past the slowdown
// threshold during window W).
inline constexpr const char* kSoakFake = "MGBENCH_TEST_SOAK_FAKE";

// True when the switch is set to "1".
bool enabled();
// The value of hook `name` when the switch is on and the variable is set; nullopt otherwise.
std::optional<std::string> read(const char* name);

}  // namespace mgbench::test_hooks
