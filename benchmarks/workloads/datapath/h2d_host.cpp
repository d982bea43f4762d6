// The host side of the h2d workload (see h2d_host.hpp).
#include "datapath/h2d_host.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "datapath/datapath_math.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/gate.hpp"

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

}  // namespace

std::string bus_id_of(int device) {
  char bus[32] = {};
  MGBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return bus;
}

int target_node(const std::string& numa, int gpu_node) {
  if (numa == "local") return gpu_node;  // -1: unknown, no binding
  if (numa != "remote") {
    throw UsageError("unknown h2d numa '" + numa + "': expected local or remote");
  }
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

// ---- HostBuffer -------------------------------------------------------------------------------

HostBuffer::HostBuffer(std::size_t bytes, int node, bool pinned, bool must_bind) : bytes_(bytes) {
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

HostBuffer::~HostBuffer() {
  if (registered_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaHostUnregister(ptr_));
  if (ptr_ != nullptr) munmap(ptr_, bytes_);
}

void HostBuffer::bind(int node, bool must_bind) {
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
  const std::string why =
      fmt::format("mbind to NUMA node {} failed: {}", node, std::strerror(errno));
  if (must_bind) {
    munmap(ptr_, bytes_);
    ptr_ = nullptr;
    throw WaivedError(why);
  }
  binding_ = why;
}

// ---- PageableMover ----------------------------------------------------------------------------

PageableMover::PageableMover(int device, std::size_t bytes, cudaMemcpyKind kind, double timeout_s)
    : device_(device), bytes_(bytes), kind_(kind),
      timeout_ns_(static_cast<std::uint64_t>(timeout_s * 1e9)) {
  MGBENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&flags_), 2 * sizeof(int),
                                   cudaHostAllocMapped));
  flags_[0] = flags_[1] = 0;
  MGBENCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_flags_), flags_, 0));
  MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
  thread_ = std::thread([this] { loop(); });
}

PageableMover::~PageableMover() {
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

void PageableMover::enqueue(cudaStream_t stream, void* dst, const void* src) {
  const int ticket = ++issued_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back({dst, src});
  }
  if (std::find(streams_.begin(), streams_.end(), stream) == streams_.end()) {
    streams_.push_back(stream);
  }
  MGBENCH_CUDA_CHECK(cudaLaunchHostFunc(stream, &PageableMover::reached, this));
  MGBENCH_CUDA_CHECK(
      kernels::launch_start_gate(dev_flags_, ticket, timeout_ns_, dev_flags_ + 1, stream));
}

std::string PageableMover::error() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.empty() && __atomic_load_n(&flags_[1], __ATOMIC_ACQUIRE) != 0) {
    return "a pageable copy did not finish within the group time-out";
  }
  return error_;
}

void CUDART_CB PageableMover::reached(void* self) {
  auto* mover = static_cast<PageableMover*>(self);
  {
    std::lock_guard<std::mutex> lock(mover->mutex_);
    ++mover->reached_;
  }
  mover->cv_.notify_all();
}

void PageableMover::loop() {
  (void)cudaSetDevice(device_);
  int served = 0;
  while (true) {
    Job job{};
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || reached_ > served; });
      if (reached_ <= served || jobs_.empty()) return;  // stopping with nothing pending
      job = jobs_.front();
      jobs_.pop_front();
    }
    cudaError_t err = cudaMemcpyAsync(job.dst, job.src, bytes_, kind_, copy_stream_);
    if (err == cudaSuccess) err = cudaStreamSynchronize(copy_stream_);
    if (err != cudaSuccess) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_.empty()) error_ = std::string("pageable copy: ") + cudaGetErrorString(err);
    }
    __atomic_store_n(&flags_[0], ++served, __ATOMIC_RELEASE);  // releases the gate kernel
  }
}

}  // namespace mgbench::bench
