#pragma once
// The host side of the h2d workload: where its host buffers live (NUMA placement, pinned or
// pageable) and how a pageable copy is timed beside the executor's streams.
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mgbench::bench {

// The CUDA PCI bus id of `device` ("0000:19:00.0").
std::string bus_id_of(int device);
// The node the host buffers go to for numa=local|remote (`gpu_node` -1: unknown, no binding);
// throws WaivedError when the placement cannot be made, UsageError for another value.
int target_node(const std::string& numa, int gpu_node);

// Anonymous host memory bound to one NUMA node (node < 0: not bound), optionally page-locked.
class HostBuffer {
 public:
  HostBuffer(std::size_t bytes, int node, bool pinned, bool must_bind);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* get() const { return ptr_; }
  const std::string& binding() const { return binding_; }

 private:
  void bind(int node, bool must_bind);

  std::size_t bytes_;
  void* ptr_ = nullptr;
  bool registered_ = false;
  std::string binding_ = "not bound (node unknown)";
};

// The driver's pageable copies block the calling thread (they are staged through its own pinned
// buffers), so they cannot be queued behind the executor's start gate. A mover thread issues
// them instead: each enqueue() adds a host function that marks ticket k as reached and a gate
// kernel that waits until ticket k is done; the thread sees the ticket, runs the driver's
// pageable cudaMemcpyAsync of that ticket's buffers on its own stream to completion and then
// releases the gate. A CUDA graph cannot replay this (the tickets are numbered when enqueued).
class PageableMover {
 public:
  PageableMover(int device, std::size_t bytes, cudaMemcpyKind kind, double timeout_s);
  ~PageableMover();
  PageableMover(const PageableMover&) = delete;
  PageableMover& operator=(const PageableMover&) = delete;

  // One copy of `bytes` from src to dst, in the order of `stream`.
  void enqueue(cudaStream_t stream, void* dst, const void* src);
  // "" when every copy succeeded and no gate timed out.
  std::string error();

 private:
  struct Job {
    void* dst;
    const void* src;
  };
  static void CUDART_CB reached(void* self);
  void loop();

  int device_;
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
  std::deque<Job> jobs_;               // one per ticket not yet served, in ticket order
  std::vector<cudaStream_t> streams_;  // where enqueue() queued host functions
  std::thread thread_;
};

}  // namespace mgbench::bench
