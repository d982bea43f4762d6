// mgbench-micro, host cases: the costs the harness adds around the GPU work. Statistics over
// 1e5 samples, writing a results.json of 10k points, one NVML telemetry sample of one GPU, and
// one crash-safe journal append. Output is Google Benchmark's own (--benchmark_format=json).
// The GPU cases live in micro_gpu.cpp; this file holds main().
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/run/journal.hpp"

namespace {

// A scratch directory removed when the case ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mgbench-micro-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<double> random_samples(std::size_t n) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> dist(1e-3, 1e-5);
  std::vector<double> samples(n);
  for (auto& s : samples) s = dist(rng);
  return samples;
}

mgbench::PointResult sample_point(std::size_t index) {
  mgbench::PointResult p;
  p.index = index;
  p.workload = "membw";
  p.params = mgbench::Json{{"impl", "copy"}, {"bytes", 268435456 + index}};
  p.devices = {0};
  p.samples = random_samples(16);
  p.stats = mgbench::compute_statistics(p.samples, 0);
  p.metrics = mgbench::Json{{"GBps_per_gpu", 4000.0}, {"GBps_aggregate", 4000.0}};
  p.verification = mgbench::Json{{"ok", true}, {"wrong", 0}};
  return p;
}

void host_statistics(benchmark::State& state) {
  const auto samples = random_samples(100000);
  for (auto _ : state) {
    benchmark::DoNotOptimize(mgbench::compute_statistics(samples));
  }
}
BENCHMARK(host_statistics)->Name("host/statistics_1e5")->Unit(benchmark::kMillisecond);

void host_results_json(benchmark::State& state) {
  ScratchDir dir;
  if (dir.path().empty()) {
    state.SkipWithError("no scratch directory");
    return;
  }
  mgbench::RunResult run;
  for (std::size_t i = 0; i < 10000; ++i) run.points.push_back(sample_point(i));
  const std::string path = dir.path() + "/results.json";
  for (auto _ : state) mgbench::save_results(run, path);
}
BENCHMARK(host_results_json)->Name("host/results_json_10k")->Unit(benchmark::kMillisecond);

void host_telemetry_sample(benchmark::State& state) {
  std::string error;
  const auto nvml = mgbench::Nvml::load(mgbench::Nvml::default_candidates(), &error);
  if (!nvml || nvml->device_count() == 0) {
    state.SkipWithError(nvml ? "NVML sees no GPU" : "NVML unavailable");
    return;
  }
  const mgbench::NvmlDevice gpu = nvml->device_by_index(0);
  for (auto _ : state) {  // the gauges the telemetry sampler reads per GPU and tick
    benchmark::DoNotOptimize(nvml->power_w(gpu));
    benchmark::DoNotOptimize(nvml->temperature_c(gpu));
    benchmark::DoNotOptimize(nvml->memory_temperature_c(gpu));
    benchmark::DoNotOptimize(nvml->clock_mhz(gpu, mgbench::NvmlClock::sm));
    benchmark::DoNotOptimize(nvml->clock_mhz(gpu, mgbench::NvmlClock::memory));
    benchmark::DoNotOptimize(nvml->utilization_pct(gpu));
    benchmark::DoNotOptimize(nvml->memory_info(gpu));
    benchmark::DoNotOptimize(nvml->clock_event_reasons(gpu));
  }
}
BENCHMARK(host_telemetry_sample)->Name("host/telemetry_sample")->Unit(benchmark::kMicrosecond);

void host_journal_append(benchmark::State& state) {
  ScratchDir dir;
  if (dir.path().empty()) {
    state.SkipWithError("no scratch directory");
    return;
  }
  mgbench::Journal journal(dir.path() + "/journal.jsonl", mgbench::Json{{"micro", true}},
                           mgbench::JournalMode::create);
  const mgbench::PointResult point = sample_point(0);
  for (auto _ : state) {
    if (!journal.append(point)) {
      state.SkipWithError("journal append failed");
      break;
    }
  }
}
BENCHMARK(host_journal_append)->Name("host/journal_append")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
