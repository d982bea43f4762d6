// h2d: host <-> device copy bandwidth per GPU over PCIe, alone and with every GPU of the group
// copying at once, from host memory on the GPU's own NUMA node and on a remote one.
//
// Measured, per op on every rank at once: cudaMemcpyAsync of `bytes` between a host buffer and
// the rank's device buffer.
//   direction=h2d    host -> device;  d2h  device -> host;
//   direction=bidir  both at once on two streams (two host and two device buffers).
//   memory=pinned    the host buffer is page-locked (cudaHostRegister);
//   memory=pageable  ordinary memory (the driver stages it through its own pinned buffers). The
//                    driver's pageable copy blocks the calling thread, so a mover thread per
//                    direction issues it while a gate kernel holds the timed stream until the
//                    copy is done (see PageableMover): the time includes a few microseconds
//                    of hand-over.
//   numa=local       host pages bound (mbind, MPOL_BIND) to the GPU's NUMA node (from sysfs);
//   numa=remote      bound to another node with memory; waived on a host with one node, or when
//                    the GPU's node is unknown or the kernel refuses the binding.
// One GPU alone is the 1-GPU group of the sweep; all GPUs at once is the largest group: the
// ratio of their per-GPU figures exposes shared PCIe switches and root ports.
// Formulas (t = the slowest rank's median seconds per op):
//   bytes moved per GPU = bytes (h2d, d2h) or 2 x bytes (bidir);
//   GB/s per GPU = bytes moved / t / 1e9;  aggregate = GPUs x per GPU.
//   link_GBps = PCIe generation x width from NVML (max link of the slot), per direction x 2
//   for bidir (see datapath_math.hpp for the lane rates).
// Summary: one row per point with the ratios to alone, to the link and to local memory, and a
// verdict naming the bottleneck (link, contention, NUMA; thresholds in datapath_math.hpp).
// Verification on every point: sources hold a hashed word pattern, destinations are poisoned
// in setup, and after sampling every destination word is compared with the pattern (device
// destinations by a kernel, host destinations on the host); any mismatch makes it `wrong`.
// Profiles: quick = h2d and d2h, pinned, local, 256 MiB; standard = every direction, both
// memories, both placements, 1 GiB; full adds 64 MiB.
#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "mgbench/bench/datapath_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/kernels/gate.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/platform/nvml.hpp"

namespace mgbench::bench {

namespace {

constexpr int kMpolBind = 2;           // MPOL_BIND (linux/mempolicy.h)
constexpr unsigned kMpolMfStrict = 1;  // MPOL_MF_STRICT
constexpr unsigned kMpolMfMove = 2;    // MPOL_MF_MOVE
constexpr int kMaxNodes = 1024;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Host NUMA nodes with memory (sysfs); empty when the kernel does not say.
std::vector<int> memory_nodes() {
  std::string text = read_text("/sys/devices/system/node/has_memory");
  if (text.empty()) text = read_text("/sys/devices/system/node/online");
  try {
    return datapath::parse_node_list(text);
  } catch (const UsageError&) {
    return {};
  }
}

std::string bus_id_of(int device) {
  char bus[32] = {};
  MGBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return bus;
}

// The node the host buffers go to; throws WaivedError when the placement cannot be made.
int target_node(const std::string& numa, int gpu_node) {
  if (numa == "local") return gpu_node;  // -1: unknown, no binding
  if (numa != "remote") throw UsageError("unknown h2d numa '" + numa + "': expected local or remote");
  const std::vector<int> nodes = memory_nodes();
  if (nodes.size() <= 1) {
    throw WaivedError("one NUMA node with memory on this host: no remote placement to measure");
  }
  if (gpu_node < 0) throw WaivedError("the GPU's NUMA node is unknown (sysfs numa_node is -1)");
  for (int n : nodes) {
    if (n != gpu_node) return n;
  }
  throw WaivedError("no NUMA node with memory other than the GPU's");
}

// Anonymous host memory bound to one NUMA node (node < 0: not bound), optionally page-locked.
class HostBuffer {
 public:
  HostBuffer(std::size_t bytes, int node, bool pinned, bool must_bind) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      throw OutOfMemoryError("libc", errno, "mmap", "mmap", "", -1,
                             fmt::format("mmap of {} host bytes failed", bytes));
    }
    ptr_ = p;
    if (node >= 0) bind(node, must_bind);
    std::memset(ptr_, 0xff, bytes_);  // touch: pages land on the bound node
    if (pinned) {
      MGBENCH_CUDA_CHECK(cudaHostRegister(ptr_, bytes_, cudaHostRegisterDefault));
      registered_ = true;
    }
  }
  ~HostBuffer() {
    if (registered_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaHostUnregister(ptr_));
    if (ptr_ != nullptr) munmap(ptr_, bytes_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* get() const { return ptr_; }
  const std::string& binding() const { return binding_; }

 private:
  void bind(int node, bool must_bind) {
    std::vector<unsigned long> mask(kMaxNodes / (8 * sizeof(unsigned long)), 0);
    if (node >= kMaxNodes) throw WaivedError(fmt::format("NUMA node {} out of range", node));
    mask[static_cast<std::size_t>(node) / (8 * sizeof(unsigned long))] |=
        1UL << (static_cast<unsigned>(node) % (8 * sizeof(unsigned long)));
    const long rc = syscall(SYS_mbind, ptr_, bytes_, kMpolBind, mask.data(),
                            static_cast<unsigned long>(kMaxNodes), kMpolMfStrict | kMpolMfMove);
    if (rc == 0) {
      binding_ = fmt::format("node {}", node);
      return;
    }
    const std::string why = fmt::format("mbind to NUMA node {} failed: {}", node, std::strerror(errno));
    if (must_bind) {
      munmap(ptr_, bytes_);
      ptr_ = nullptr;
      throw WaivedError(why);
    }
    binding_ = why;
  }

  std::size_t bytes_;
  void* ptr_ = nullptr;
  bool registered_ = false;
  std::string binding_ = "not bound (node unknown)";
};

// The PCIe link of the GPU from NVML (empty when NVML or the device is unavailable).
NvmlPcieLink pcie_link(const std::string& bus_id) {
  static std::once_flag once;
  static std::shared_ptr<Nvml> nvml;
  std::call_once(once, [] {
    std::string error;
    nvml = Nvml::load(Nvml::default_candidates(), &error);
  });
  if (!nvml) return {};
  const NvmlDevice handle = nvml->device_by_pci_bus_id(bus_id);
  if (!handle) return {};
  return nvml->pcie_link(handle);
}

// The driver's pageable copies block the calling thread (they are staged through its own pinned
// buffers), so they cannot be queued behind the executor's start gate. A mover thread issues
// them instead: each enqueue() adds a host function that marks ticket k as reached and a gate
// kernel that waits until ticket k is done; the thread sees the ticket, runs the driver's
// pageable cudaMemcpyAsync on its own stream to completion and then releases the gate.
class PageableMover {
 public:
  PageableMover(int device, void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                double timeout_s)
      : device_(device), dst_(dst), src_(src), bytes_(bytes), kind_(kind),
        timeout_ns_(static_cast<std::uint64_t>(timeout_s * 1e9)) {
    MGBENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&flags_), 2 * sizeof(int),
                                     cudaHostAllocMapped));
    flags_[0] = flags_[1] = 0;
    MGBENCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_flags_), flags_, 0));
    MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    thread_ = std::thread([this] { loop(); });
  }
  ~PageableMover() {
    // Host functions still queued would call into a destroyed mover: drain the streams first
    // (the thread keeps serving tickets meanwhile).
    for (cudaStream_t s : streams_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(s));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(copy_stream_));
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(flags_));
  }
  PageableMover(const PageableMover&) = delete;
  PageableMover& operator=(const PageableMover&) = delete;

  void enqueue(cudaStream_t stream) {
    const int ticket = ++issued_;
    if (std::find(streams_.begin(), streams_.end(), stream) == streams_.end()) {
      streams_.push_back(stream);
    }
    MGBENCH_CUDA_CHECK(cudaLaunchHostFunc(stream, &PageableMover::reached, this));
    MGBENCH_CUDA_CHECK(kernels::launch_start_gate(dev_flags_, ticket, timeout_ns_,
                                                  dev_flags_ + 1, stream));
  }
  // "" when every copy succeeded and no gate timed out.
  std::string error() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty() && __atomic_load_n(&flags_[1], __ATOMIC_ACQUIRE) != 0) {
      return "a pageable copy did not finish within the group time-out";
    }
    return error_;
  }

 private:
  static void CUDART_CB reached(void* self) {
    auto* mover = static_cast<PageableMover*>(self);
    {
      std::lock_guard<std::mutex> lock(mover->mutex_);
      ++mover->reached_;
    }
    mover->cv_.notify_all();
  }

  void loop() {
    (void)cudaSetDevice(device_);
    int served = 0;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || reached_ > served; });
        if (reached_ <= served) return;  // stopping with nothing pending
      }
      cudaError_t err = cudaMemcpyAsync(dst_, src_, bytes_, kind_, copy_stream_);
      if (err == cudaSuccess) err = cudaStreamSynchronize(copy_stream_);
      if (err != cudaSuccess) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (error_.empty()) error_ = std::string("pageable copy: ") + cudaGetErrorString(err);
      }
      __atomic_store_n(&flags_[0], ++served, __ATOMIC_RELEASE);  // releases the gate kernel
    }
  }

  int device_;
  void* dst_;
  const void* src_;
  std::size_t bytes_;
  cudaMemcpyKind kind_;
  std::uint64_t timeout_ns_;
  int* flags_ = nullptr;      // host-mapped: [0] last ticket done, [1] a gate timed out
  int* dev_flags_ = nullptr;  // the same, as the device sees it
  cudaStream_t copy_stream_ = nullptr;
  std::mutex mutex_;
  std::condition_variable cv_;
  int issued_ = 0, reached_ = 0;
  bool stop_ = false;
  std::string error_;
  std::vector<cudaStream_t> streams_;  // where enqueue() queued host functions
  std::thread thread_;
};

struct H2dParams {
  std::string direction, memory, numa;
  std::size_t words;
};

H2dParams h2d_params(const Params& p) {
  H2dParams h{param_str(p, "direction"), param_str(p, "memory"), param_str(p, "numa"), 0};
  (void)datapath::h2d_bytes_moved(h.direction, 0);  // validates the direction
  if (h.memory != "pinned" && h.memory != "pageable") {
    throw UsageError("unknown h2d memory '" + h.memory + "': expected pinned or pageable");
  }
  const auto bytes = param_int(p, "bytes");
  if (bytes < 16) throw UsageError("h2d needs bytes >= 16");
  h.words = static_cast<std::size_t>(bytes) / 4;
  return h;
}

// One rank's buffers: "up" is host -> device (h2d, bidir), "down" device -> host (d2h, bidir).
class H2dPoint final : public RankPoint {
 public:
  explicit H2dPoint(RankEnv& env) : env_(env), p_(h2d_params(*env.params)) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(env.device));
    bus_id_ = bus_id_of(env.device);
    gpu_node_ = gpu_numa_node(bus_id_);
    host_node_ = target_node(p_.numa, gpu_node_);
    const bool pinned = p_.memory == "pinned";
    const bool must_bind = p_.numa == "remote";
    const std::size_t bytes = p_.words * 4;
    const auto rank = static_cast<std::uint32_t>(env.rank);
    if (p_.direction != "d2h") {
      up_host_ = std::make_unique<HostBuffer>(bytes, host_node_, pinned, must_bind);
      up_dev_ = DeviceBuffer(bytes);
      // The host source: the pattern made on the device and copied over once.
      MGBENCH_CUDA_CHECK(kernels::fill_pattern(up_dev_.as<std::uint32_t>(), p_.words,
                                               kUpSeed + rank, env_.stream));
      MGBENCH_CUDA_CHECK(cudaMemcpyAsync(up_host_->get(), up_dev_.get(), bytes,
                                         cudaMemcpyDeviceToHost, env_.stream));
      MGBENCH_CUDA_CHECK(cudaMemsetAsync(up_dev_.get(), 0xff, bytes, env_.stream));
    }
    if (p_.direction != "h2d") {
      down_host_ = std::make_unique<HostBuffer>(bytes, host_node_, pinned, must_bind);
      down_dev_ = DeviceBuffer(bytes);
      MGBENCH_CUDA_CHECK(kernels::fill_pattern(down_dev_.as<std::uint32_t>(), p_.words,
                                               kDownSeed + rank, env_.stream));
    }
    counter_ = DeviceBuffer(sizeof(unsigned long long));
    if (!pinned) make_movers(env);
    MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  }
  ~H2dPoint() override {
    if (fork_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(fork_));
    if (join_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(join_));
  }
  H2dPoint(const H2dPoint&) = delete;
  H2dPoint& operator=(const H2dPoint&) = delete;

  void enqueue() override {
    if (down_host_ && up_host_) {  // bidir: device -> host on the second stream
      MGBENCH_CUDA_CHECK(cudaEventRecord(fork_, env_.stream));
      MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.comm_stream, fork_, 0));
      copy_down(env_.comm_stream);
      MGBENCH_CUDA_CHECK(cudaEventRecord(join_, env_.comm_stream));
    } else if (down_host_) {
      copy_down(env_.stream);
    }
    if (up_host_) copy_up(env_.stream);
    if (down_host_ && up_host_) MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.stream, join_, 0));
  }

  Verification verify() override {
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.comm_stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    const auto rank = static_cast<std::uint32_t>(env_.rank);
    std::uint64_t wrong = 0, checked = 0;
    if (up_host_) {
      auto* counter = counter_.as<unsigned long long>();
      MGBENCH_CUDA_CHECK(kernels::count_pattern_mismatch(up_dev_.as<std::uint32_t>(), p_.words,
                                                         kUpSeed + rank, counter, env_.stream));
      unsigned long long n = 0;
      MGBENCH_CUDA_CHECK(cudaMemcpyAsync(&n, counter, sizeof n, cudaMemcpyDeviceToHost, env_.stream));
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
      wrong += n;
      checked += p_.words;
    }
    if (down_host_) {
      const auto* words = static_cast<const std::uint32_t*>(down_host_->get());
      for (std::size_t i = 0; i < p_.words; ++i) {
        wrong += words[i] != kernels::pattern_word(i, kDownSeed + rank) ? 1 : 0;
      }
      checked += p_.words;
    }
    Verification v;
    v.details["checked"] = checked;
    v.details["wrong"] = wrong;
    for (auto* mover : {up_mover_.get(), down_mover_.get()}) {
      if (mover != nullptr && !mover->error().empty()) throw EnvironmentError(mover->error());
    }
    if (wrong != 0) {
      v.ok = false;
      v.message = fmt::format("{} of {} copied words differ from the source pattern", wrong, checked);
    }
    return v;
  }

  Json rank_details() override {
    // The slot's maximum link (a link trained below it is what the verdict should catch).
    const NvmlPcieLink pcie = pcie_link(bus_id_);
    const unsigned gen = pcie.gen_max.value_or(0), width = pcie.width_max.value_or(0);
    const double link = datapath::pcie_link_gbps(gen, width) * (p_.direction == "bidir" ? 2.0 : 1.0);
    Json d{{"pci_bus_id", bus_id_},
           {"gpu_numa_node", gpu_node_},
           {"host_numa_node", host_node_},
           {"host_binding", up_host_ ? up_host_->binding() : down_host_->binding()},
           {"pcie_gen", gen},
           {"pcie_width", width},
           {"pcie_gen_current", pcie.gen_current ? Json(*pcie.gen_current) : Json(nullptr)},
           {"pcie_width_current", pcie.width_current ? Json(*pcie.width_current) : Json(nullptr)}};
    if (link > 0) d["metrics"] = Json{{"link_GBps", link}};
    return d;
  }

 private:
  static constexpr std::uint32_t kUpSeed = 0x68326400u;

  void make_movers(const RankEnv& env) {
    // A gate that is never released gives up well before the group time-out.
    const double timeout_s =
        std::min(env.settings != nullptr ? env.settings->group_timeout_s : 600.0, 120.0);
    const std::size_t bytes = p_.words * 4;
    if (up_host_) {
      up_mover_ = std::make_unique<PageableMover>(env.device, up_dev_.get(), up_host_->get(),
                                                  bytes, cudaMemcpyHostToDevice, timeout_s);
    }
    if (down_host_) {
      down_mover_ = std::make_unique<PageableMover>(env.device, down_host_->get(),
                                                    down_dev_.get(), bytes,
                                                    cudaMemcpyDeviceToHost, timeout_s);
    }
  }
  void copy_up(cudaStream_t stream) {
    if (up_mover_) return up_mover_->enqueue(stream);
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(up_dev_.get(), up_host_->get(), p_.words * 4,
                                       cudaMemcpyHostToDevice, stream));
  }
  void copy_down(cudaStream_t stream) {
    if (down_mover_) return down_mover_->enqueue(stream);
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(down_host_->get(), down_dev_.get(), p_.words * 4,
                                       cudaMemcpyDeviceToHost, stream));
  }
  static constexpr std::uint32_t kDownSeed = 0x64326800u;

  RankEnv env_;
  H2dParams p_;
  std::string bus_id_;
  int gpu_node_ = -1, host_node_ = -1;
  std::unique_ptr<HostBuffer> up_host_, down_host_;
  DeviceBuffer up_dev_, down_dev_, counter_;
  std::unique_ptr<PageableMover> up_mover_, down_mover_;  // pageable memory only
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace

}  // namespace mgbench::bench

namespace {
// How reports show h2d: GB/s per GPU per direction, memory and placement, the link rate beside
// it, and the verdict summary.
mgbench::Presentation h2d_presentation() {
  using namespace mgbench;
  return Presentation()
      .metric(MetricSpec("GBps_per_gpu", "GB/s per GPU", "GB/s").format(ValueFormat::fixed, 2))
      .metric(MetricSpec("GBps_aggregate", "aggregate GB/s", "GB/s").format(ValueFormat::fixed, 2))
      .metric(MetricSpec("link_GBps", "PCIe link GB/s", "GB/s").format(ValueFormat::fixed, 1))
      .axis(AxisSpec("bytes", "copy size").format(ValueFormat::bytes).log2())
      .table(TableSpec()
                 .split_by({"direction"})
                 .sort_by({"memory", "numa", "bytes", "gpus"})
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::param("memory"))
                 .column(ColumnSpec::param("numa", "host memory"))
                 .column(ColumnSpec::param("bytes", "size").format(ValueFormat::bytes))
                 .column(ColumnSpec::metric("GBps_per_gpu", "GB/s/GPU").format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("GBps_aggregate", "GB/s total")
                             .format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::metric("link_GBps", "link GB/s").format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::verification("wrong", "#wrong", "N/A"))
                 .tail())
      .chart(ChartSpec::scaling())
      .summary(SummarySpec("", "data path verdict",
                           "alone = 1 GPU; shared = per GPU with the group at once / alone; "
                           "link = alone / PCIe gen x width; NUMA = remote / local")
                   .column("gpus", "GPUs", ValueFormat::count)
                   .column("direction", "direction")
                   .column("memory", "memory")
                   .column("numa", "host memory")
                   .column("bytes", "size", ValueFormat::bytes)
                   .column("GBps_per_gpu", "GB/s/GPU", ValueFormat::fixed, 2)
                   .column("shared_ratio", "shared", ValueFormat::fixed, 2)
                   .column("link_efficiency", "of link", ValueFormat::fixed, 2)
                   .column("numa_ratio", "remote/local", ValueFormat::fixed, 2)
                   .column("verdict", "bottleneck"));
}
}  // namespace

MGBENCH_REGISTER_WORKLOAD(
    mgbench::Workload("h2d")
        .summary("Host <-> device copy bandwidth per GPU (PCIe): directions, pinned and "
                 "pageable, local and remote NUMA node, alone and all GPUs at once")
        .formulas("Bytes moved per GPU = bytes (h2d, d2h) or 2 x bytes (bidir). GB/s per GPU = "
                  "bytes moved / t / 1e9 (t = slowest rank's median time per copy); aggregate "
                  "= GPUs x per GPU; link_GBps = PCIe gen x width rate (x2 for bidir).")
        .requirements("numa=remote needs a second NUMA node with memory (else waived)")
        .axis(mgbench::Axis::text("direction", {"h2d", "d2h", "bidir"})
                  .quick({"h2d", "d2h"})
                  .allowed({"h2d", "d2h", "bidir"})
                  .describe("h2d: host to device; d2h: device to host; bidir: both at once"))
        .axis(mgbench::Axis::text("memory", {"pinned", "pageable"})
                  .quick({"pinned"})
                  .allowed({"pinned", "pageable"})
                  .describe("pinned: page-locked host buffer; pageable: ordinary memory"))
        .axis(mgbench::Axis::text("numa", {"local", "remote"})
                  .quick({"local"})
                  .allowed({"local", "remote"})
                  .describe("host buffer on the GPU's NUMA node or on another node"))
        .axis(mgbench::Axis::size("bytes", {"1073741824"})
                  .quick({"268435456"})
                  .full({"67108864", "1073741824"})
                  .describe("bytes per copy"))
        .summarize(mgbench::bench::datapath::h2d_summary)
        .throughput("GBps_aggregate", "GB/s")
        .present(h2d_presentation())
        .estimate_seconds_per_point(2.0)
        .runner(mgbench::bench::make_runner(
            [](mgbench::bench::RankEnv& env) -> std::unique_ptr<mgbench::bench::RankPoint> {
              return std::make_unique<mgbench::bench::H2dPoint>(env);
            },
            mgbench::bench::datapath::h2d_metrics)));
