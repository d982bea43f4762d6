#include "workload_runner.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "catch_compat.hpp"
#include "collectives/allreduce_math.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::test {

RunSettings fast_settings() {
  RunSettings settings;
  settings.stopping.min_samples = 3;
  settings.stopping.min_time_s = 0.01;
  settings.stopping.max_time_s = 0.5;
  settings.stopping.max_noise = 0.5;
  settings.warmup_s = 0.01;
  settings.telemetry = false;
  settings.profile = "quick";
  settings.group_timeout_s = 120;
  return settings;
}

RunSettings allreduce_settings() {
  RunSettings settings;
  settings.stopping.min_samples = 3;
  settings.stopping.min_time_s = 0.0;
  settings.stopping.max_time_s = 0.05;
  settings.warmup_s = 0.002;
  settings.telemetry = false;
  settings.group_timeout_s = 60;
  return settings;
}

std::vector<PointResult> run_workload(const std::string& workload, const std::vector<int>& devices,
                                      const std::vector<Params>& points,
                                      const RunSettings& settings) {
  const Workload* registered = find_workload(workload);
  REQUIRE(registered != nullptr);
  GroupSpec spec;
  spec.workload = workload;
  spec.devices = devices;
  for (std::size_t i = 0; i < points.size(); ++i) spec.points.push_back({i, points[i]});
  spec.settings = settings;
  spec.settings.group_timeout_s *= gpu_time_scale();
  spec.settings.gate_timeout_s *= gpu_time_scale();
  CapturingSink sink;
  GroupContext ctx{spec, sink, nullptr};
  registered->run()(ctx);
  return sink.results;
}

std::vector<PointResult> run_allreduce(const std::vector<int>& devices,
                                       const std::vector<Params>& points) {
  return run_workload("allreduce", devices, points, allreduce_settings());
}

std::vector<Params> allreduce_points(const std::vector<std::string>& dtypes,
                                     const std::vector<std::uint64_t>& counts,
                                     const std::string& impl,
                                     const std::vector<std::string>& algos) {
  std::vector<Params> points;
  for (const auto& dtype : dtypes) {
    AxisValues values;
    for (std::uint64_t c : counts) {
      values["bytes"].push_back(c * bench::allreduce::dtype_size(dtype));
    }
    values["dtype"] = {dtype};
    values["impl"] = {impl};
    values["inplace"] = {false, true};
    for (const auto& a : algos) values["algo"].push_back(a);
    for (auto& p : bench::allreduce::expand_points(values)) points.push_back(std::move(p));
  }
  return points;
}

std::vector<Params> collective_points(const std::string& workload, int gpus,
                                      const std::vector<std::uint64_t>& bytes,
                                      const AxisValues& extra) {
  const Workload* w = find_workload(workload);
  REQUIRE(w != nullptr);
  AxisValues values;
  for (std::uint64_t b : bytes) values["bytes"].push_back(b);
  values["dtype"] = {"fp32", "bf16", "fp16", "int32"};
  if (w->find_axis("inplace") != nullptr) values["inplace"] = {false, true};
  if (w->find_axis("root") != nullptr) values["root"] = {"0"};
  if (w->find_axis("algo") != nullptr) values["algo"] = {"default"};
  if (w->find_axis("proto") != nullptr) values["proto"] = {"default"};
  values["timing"] = {"host"};
  values["cache"] = {"hot"};
  for (const auto& [name, list] : extra) values[name] = list;
  return w->expand_points(values, gpus);
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

std::vector<int> first_devices(int n) {
  std::vector<int> d;
  for (int i = 0; i < n; ++i) d.push_back(i);
  return d;
}

bool all_pairs_have_peer_access(const std::vector<int>& devices) {
  for (int a : devices) {
    for (int b : devices) {
      int can = 0;
      if (a != b && (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || can == 0)) return false;
    }
  }
  return true;
}

bool primary_context_active(int device) {
  using InitFn = int (*)(unsigned);
  using DeviceGetFn = int (*)(int*, int);
  using StateFn = int (*)(int, unsigned*, int*);
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) driver = ::dlopen("libcuda.so.1", RTLD_NOW);
  REQUIRE(driver != nullptr);
  const auto init = reinterpret_cast<InitFn>(::dlsym(driver, "cuInit"));
  const auto device_get = reinterpret_cast<DeviceGetFn>(::dlsym(driver, "cuDeviceGet"));
  const auto state = reinterpret_cast<StateFn>(::dlsym(driver, "cuDevicePrimaryCtxGetState"));
  REQUIRE(init != nullptr);
  REQUIRE(device_get != nullptr);
  REQUIRE(state != nullptr);
  REQUIRE(init(0) == 0);
  int handle = 0;
  REQUIRE(device_get(&handle, device) == 0);
  unsigned flags = 0;
  int active = 0;
  REQUIRE(state(handle, &flags, &active) == 0);
  return active != 0;
}

}  // namespace mgbench::test
