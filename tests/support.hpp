#pragma once
// Small helpers shared by the tests.
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MGBENCH_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MGBENCH_TEST_ASAN 1
#endif
#endif

namespace mgbench::test {

// Whether this test binary (and the mgbench it runs) is the asan preset's build: -O0 under ASan
// and UBSan, where JSON-heavy work runs 20 to 80 times slower (seen: a 1 s compare took 81 s).
#if defined(MGBENCH_TEST_ASAN)
inline constexpr bool kAsanBuild = true;
#else
inline constexpr bool kAsanBuild = false;
#endif
// The factors for the tests' CPU-time and memory budgets (ASan keeps freed memory in quarantine
// and pads every allocation). Those budgets guard against quadratic scans and unbounded reads,
// which stay far above even the scaled figures.
inline constexpr double kCpuBudgetScale = kAsanBuild ? 30.0 : 1.0;
inline constexpr double kMemoryBudgetScale = kAsanBuild ? 5.0 : 1.0;

struct CommandOutput {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the real mgbench binary with `args` (shell-quoted by the caller), capturing both streams.
CommandOutput run_mgbench(const std::string& args, const std::string& env = "");
// Largest resident set of the children waited for so far, in MB (Linux: ru_maxrss in KiB).
double children_max_rss_mb();
// CPU seconds (user + system) of the children waited for so far: on a shared machine the
// wall time of one command says little, its CPU time is what a hostile file costs.
double children_cpu_s();
// A fresh empty directory under the system temp dir.
std::string temp_dir(const std::string& tag);
std::string read_text(const std::string& path);
// The C++ and CUDA source files (.cpp, .hpp, .cu, .cuh, .h) under `roots` (folders of the source
// tree), each as its path relative to the source tree.
std::vector<std::string> source_files(const std::vector<std::string>& roots);

// The factor by which the GPU tests stretch their time-outs (the group and start-gate time-outs,
// hence the NCCL watchdog's deadline, and device-side spin deadlines): the environment variable
// MGBENCH_GPU_TEST_TIME_SCALE, 1 when unset. scripts/gpu_sanitize.sh sets it, since
// compute-sanitizer slows GPU work by one to three orders of magnitude. A value that is not a
// number in [1, 1000] throws std::invalid_argument naming the variable.
double gpu_time_scale();

// Ends the test binary with exit 77 after printing "SKIP: <reason>": CTest (SKIP_RETURN_CODE 77,
// one test case per process) reports the test as skipped, never as passed. Catch2 v2 has no
// skip of its own. Use REQUIRE, not CHECK, for anything checked before: a failed CHECK would
// be hidden by the exit.
[[noreturn]] void skip_test(const std::string& reason);

}  // namespace mgbench::test
