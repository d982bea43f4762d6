// Timing methods and cache rotation of the executor (see timing_methods.hpp).
#include "timing_methods.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "mgbench/bench/executor.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/platform/nvml.hpp"

namespace mgbench::bench {

CapturedOps::CapturedOps(cudaStream_t stream, const std::function<void()>& enqueue, int reps) {
  MGBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < reps; ++i) enqueue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream, &partial);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    throw;
  }
  MGBENCH_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  MGBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

CapturedOps::~CapturedOps() {
  if (exec_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
  if (graph_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph_));
}

void CapturedOps::launch(cudaStream_t stream) const {
  MGBENCH_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

TimingMethod other_method(TimingMethod method) {
  return method == TimingMethod::device ? TimingMethod::host : TimingMethod::device;
}

double time_with_method(GroupShared& shared, int rank, const std::function<void()>& enqueue,
                        int reps, TimingMethod method, int samples) {
  RankResources& res = shared.resources(rank);
  std::unique_ptr<CapturedOps> graph;
  if (method == TimingMethod::graph) graph = std::make_unique<CapturedOps>(res.stream, enqueue, reps);
  const std::function<void()> launch_graph = [&] { graph->launch(res.stream); };
  const int launches = graph ? 1 : reps;
  std::vector<double> per_op;
  for (int i = 0; i < samples; ++i) {
    const double slowest = shared.timed_sample(rank, graph ? launch_graph : enqueue, launches, 0,
                                               method == TimingMethod::device).first;
    per_op.push_back(slowest / static_cast<double>(std::max(reps, 1)));
  }
  return median_of(per_op);
}

namespace {

// The links of `device` from NVML (left unknown where NVML cannot say), and whether its host
// link is NVLink-C2C: there the host has native atomics on the GPU's memory, over PCIe not.
void add_link_facts(int device, HardwareLimits& hw) {
  int c2c = 0;
  if (cudaDeviceGetAttribute(&c2c, cudaDevAttrHostNativeAtomicSupported, device) != cudaSuccess) {
    c2c = 0;
  }
  hw.host_over_c2c = c2c != 0;
  char bus[32] = {};
  const bool have_bus = cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess;
  (void)cudaGetLastError();
  const std::shared_ptr<Nvml> nvml = nvml_instance();
  if (!have_bus || !nvml) return;
  const NvmlDevice handle = nvml->device_by_pci_bus_id(bus);
  if (!handle) return;
  const NvmlPcieLink pcie = nvml->pcie_link(handle);
  hw.pcie_gen = pcie.gen_max.value_or(0);
  hw.pcie_width = pcie.width_max.value_or(0);
  hw.nvlinks_up = nvml->nvlinks(handle).links_up;
}

}  // namespace

HardwareLimits device_limits(int device) {
  HardwareLimits hw;
  int bus = 0, clock_khz = 0;
  if (cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess) {
    (void)cudaGetLastError();
    bus = clock_khz = 0;
  }
  hw.hbm_GBps = hbm_peak_GBps(bus, clock_khz);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    hw.gpu_name = prop.name;
    hw.memory_bytes = prop.totalGlobalMem;
    hw.cc_major = prop.major;
    hw.cc_minor = prop.minor;
  }
  (void)cudaGetLastError();
  add_link_facts(device, hw);
  return hw;
}

HardwareLimits group_limits(const std::vector<int>& devices) {
  if (devices.empty()) return {};
  HardwareLimits hw = device_limits(devices.front());
  const std::set<int> distinct(devices.begin(), devices.end());
  hw.distinct_gpus = distinct.size() == devices.size();
  return hw;
}

HardwareLimits RankEnv::hardware_limits() const { return device_limits(device); }

Rotation RankEnv::rotation(std::size_t set_bytes, std::size_t max_sets) const {
  int l2 = 0;
  if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) l2 = 0;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) free_bytes = 0;
  (void)cudaGetLastError();
  return plan_rotation(cache, set_bytes, static_cast<std::size_t>(std::max(l2, 0)),
                       free_bytes / 2, max_sets);
}

Rotation RankEnv::agreed_rotation(std::size_t set_bytes) const {
  (void)cudaSetDevice(device);  // the free memory the rotation may take is this GPU's
  Rotation mine = rotation(set_bytes);
  std::size_t agreed = mine.sets;
  // The counts travel as the pointer values of all_gather_ptr.
  for (void* sets : all_gather_ptr(reinterpret_cast<void*>(std::uintptr_t{mine.sets}))) {
    agreed = std::min(agreed, static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(sets)));
  }
  if (agreed == mine.sets) return mine;
  Rotation lowered = rotation(set_bytes, agreed);
  lowered.limited_by = "a peer's memory";
  return lowered;
}

}  // namespace mgbench::bench
