#pragma once
// Checking the own GEMM kernels on one GPU: run one launch on random inputs and compare C with
// an FP64 host reference computed from the stored inputs, with the workload's tolerance.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::test {

#define CUDA_REQUIRE(expr) REQUIRE((expr) == cudaSuccess)

class Buffer {
 public:
  explicit Buffer(std::size_t bytes) : bytes_(bytes) { CUDA_REQUIRE(cudaMalloc(&ptr_, bytes)); }
  ~Buffer() { cudaFree(ptr_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return ptr_; }
  std::vector<unsigned char> to_host() const {
    std::vector<unsigned char> host(bytes_);
    CUDA_REQUIRE(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

struct Shape {
  std::int64_t m, n, k;
};

// One GEMM launch: the dispatch (kernels::gemm) or one kernel called directly.
using GemmLaunch = std::function<cudaError_t(kernels::DType type, Shape s, const void* a,
                                             const void* b, void* c)>;
GemmLaunch dispatch_launch();

struct GemmCheck {
  std::vector<double> c;            // all of C and the `extra` elements after it, decoded
  std::vector<std::int64_t> rows;   // rows of C compared with the reference (all columns)
  std::size_t checked = 0, wrong = 0;
  double worst_ratio = 0;  // largest |error| / allowed error
  std::string first_bad;   // "C[i][j] = x, reference r, allowed a" of the first wrong element
  std::string worst;       // the same for the element with the largest ratio
  // Wrong elements by row % 128 / 16 and by column % 256 / 32 (where in a tile they are).
  std::size_t wrong_by_row[8] = {}, wrong_by_col[8] = {};
  std::string summary() const;
};

// Runs `launch` on inputs uniform in [-1, 1] with C poisoned (NaN) and `extra` poisoned elements
// after it, then compares rows of C with the reference: all rows when the reference costs at
// most `max_macs` multiply-adds, else the first, the last and evenly spaced rows in between.
GemmCheck check_gemm(kernels::DType type, Shape s, const GemmLaunch& launch,
                     std::size_t extra = 0, double max_macs = 3e8);

// The workload's name of a kernel input type ("fp8" for fp8_e4m3).
std::string gemm_dtype_name(kernels::DType type);

}  // namespace mgbench::test
