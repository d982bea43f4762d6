#pragma once
// Every test-only environment hook, by name, in one place (docs/TESTING-HOOKS.md lists them).
// A hook is read only when MGBENCH_ENABLE_TEST_WORKLOADS=1: a normal run never sees one. A
// sweep with an active hook logs a warning at start, records the hooks in its environment
// ("test_hooks", which also changes the fingerprint) and in its journal (a resume with other
// hooks is refused), and `compare` never calls a regression across runs whose hooks differ.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mgbench::test_hooks {

// The switch: "1" registers the CPU `selftest` workload and turns the hooks below on.
inline constexpr const char* kEnable = "MGBENCH_ENABLE_TEST_WORKLOADS";
// N (1..64): the device probe reports N fake GPUs (no CUDA involved).
inline constexpr const char* kFakeDevices = "MGBENCH_TEST_FAKE_DEVICES";
// F (0..kMaxSlowdown): a busy-wait of F times the measured op time in every timed sample (a
// synthetic regression).
inline constexpr const char* kSlowdown = "MGBENCH_TEST_SLOWDOWN";
// N > 0: the sweep journal takes N points, then every append fails with ENOSPC.
inline constexpr const char* kJournalFailAfter = "MGBENCH_TEST_JOURNAL_FAIL_AFTER";

// "ok", "xid@W" or "hot@W": `mgbench soak` takes its health and per-window telemetry from a fake
// NVML (temperatures, power, clocks, a throttled span; an XID or a temperature past the slowdown
// threshold during window W).
inline constexpr const char* kSoakFake = "MGBENCH_TEST_SOAK_FAKE";
// "1": the training step's verification model all-reduces its first gradient bucket twice (a
// sum that is wrong the same way on every rank, which the FP64 reference must catch).
inline constexpr const char* kTrainDoubleReduce = "MGBENCH_TEST_TRAIN_DOUBLE_REDUCE";
// N >= 1: with a process per GPU, the ranks form nodes of N consecutive ranks (local rank =
// rank mod N) instead of one node per machine: several "nodes" on one machine.
inline constexpr const char* kRanksPerNode = "MGBENCH_TEST_RANKS_PER_NODE";
// "1": the telemetry observer of a group is a fake one (no NVML): two samples per GPU of fixed
// gauges (power 500 W + 10 W x device, 60 °C, SM clock 1980 MHz) through the real summary.
inline constexpr const char* kFakeTelemetry = "MGBENCH_TEST_FAKE_TELEMETRY";
// "1": enabling peer access fails for every group of two or more ranks, as on a VM whose IOMMU
// or ACS setting blocks peer-to-peer although cudaDeviceCanAccessPeer says yes.
inline constexpr const char* kPeerAccessFail = "MGBENCH_TEST_PEER_ACCESS_FAIL";
// "1": a rank started by mpirun or srun sees one of the fake GPUs only, the one of its local
// rank (as srun --gpus-per-task=1 shows each task one GPU): per-task GPU binding without Slurm.
inline constexpr const char* kFakeGpuPerTask = "MGBENCH_TEST_FAKE_GPU_PER_TASK";
// Faults of `mgbench screen`'s fake fleet (the selftest's `screen` behaviour), comma-separated:
// "gpu:D@F" (GPU D of every node), "gpu:HOST:D@F", "host:HOST@F" (every GPU of HOST and every
// launch HOST joins), "pair:HOST+HOST@F" (a launch of both hosts only), "link:I-J@F" or
// "link:HOST:I-J@F" (the p2p pair I, J), each F times slower (time x (1 + F)); "hang:HOST" (a
// launch that joins HOST sleeps for ever).
inline constexpr const char* kScreenFault = "MGBENCH_TEST_SCREEN_FAULT";
// `mgbench accept` in tests: "ok", or STAGE=BEHAVIOR items (communication, scaling, soak)
// separated by commas: every measuring stage runs the selftest workload, with that behaviour
// (ok where none is named), in place of the stage's workloads.
inline constexpr const char* kAcceptLoad = "MGBENCH_TEST_ACCEPT_LOAD";
// FILE: `mgbench accept` takes the doctor's checks from FILE (doctor --json's shape) instead of
// running `mgbench doctor --json`.
inline constexpr const char* kAcceptDoctor = "MGBENCH_TEST_ACCEPT_DOCTOR";
// L in 0..3: the thread level a rank's MPI_Init_thread is taken to grant (MPI_THREAD_SINGLE,
// FUNNELED, SERIALIZED, MULTIPLE), as an MPI library built without thread support would.
inline constexpr const char* kMpiThreadLevel = "MGBENCH_TEST_MPI_THREAD_LEVEL";
inline constexpr double kMaxSlowdown = 100.0;
inline constexpr int kMaxFakeDevices = 64;

// True when the switch is set to "1".
bool enabled();
// The value of hook `name` when the switch is on and the variable is set; nullopt otherwise.
std::optional<std::string> read(const char* name);
// read() as a number in [lo, hi]; UsageError naming the hook otherwise.
std::optional<double> read_number(const char* name, double lo, double hi);
// One entry of kScreenFault.
struct ScreenFault {
  std::string kind;         // "gpu", "host", "pair", "link" or "hang"
  std::string host, other;  // "" for any host (gpu, link); `other`: the pair's second host
  int gpu = -1, peer = -1;  // gpu: D; link: I and J
  double factor = 0;        // F
};
// The entries of kScreenFault (none when unset); UsageError naming the hook when malformed.
std::vector<ScreenFault> screen_faults();
// Time factor (1 + the F of every matching entry) of GPU `gpu` on `host` in a launch over
// `hosts`; with `peer` >= 0, of the p2p pair gpu, peer.
double screen_slowdown(const std::vector<ScreenFault>& faults, const std::vector<std::string>& hosts,
                       const std::string& host, int gpu, int peer = -1);
// Whether a launch over `hosts` hangs.
bool screen_hangs(const std::vector<ScreenFault>& faults, const std::vector<std::string>& hosts);

// The hooks in effect that change measurements (name -> value): empty unless the switch is on
// and such a hook is set. The journal fault is not among them.
std::map<std::string, std::string> active();

}  // namespace mgbench::test_hooks
