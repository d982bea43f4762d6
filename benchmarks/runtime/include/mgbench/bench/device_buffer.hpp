#pragma once
// RAII for a device allocation, shared by the workloads, and a synchronous read-back.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "mgbench/core/check.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench {

// A device allocation of at least 1 byte (movable, empty when default-constructed);
// cudaErrorMemoryAllocation surfaces as OutOfMemoryError.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    MGBENCH_CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 1)));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.ptr_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }  // as requested (0 when empty)

 private:
  void release() {
    if (ptr_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Synchronous host copy, as doubles, of `count` elements of `dtype` at `device`, ordered after
// everything enqueued on `stream` so far (for verification, never in a timed region).
inline std::vector<double> read_doubles(const void* device, kernels::DType dtype,
                                        std::size_t count, cudaStream_t stream) {
  const std::size_t size = kernels::dtype_size(dtype);
  std::vector<unsigned char> raw(count * size);
  MGBENCH_CUDA_CHECK(
      cudaMemcpyAsync(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost, stream));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = kernels::decode_element(dtype, raw.data(), i);
  return out;
}

}  // namespace mgbench::bench
