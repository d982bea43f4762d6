// The own GEMM kernels on one GPU against an FP64 host reference: every dtype through the
// dispatch at odd sizes, tile multiples and large non-multiples; the sm_90a kernel called
// directly (Hopper only); which kernel the dispatch picks; no writes past C; bad arguments.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "gemm_check.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/kernels/gemm.hpp"
#include "support.hpp"

using mgbench::kernels::DType;
using mgbench::kernels::GemmKernel;
using mgbench::test::Buffer;
using mgbench::test::check_gemm;
using mgbench::test::GemmCheck;
using mgbench::test::GemmLaunch;
using mgbench::test::Shape;

namespace {

// Odd shapes and tile multiples (full reference), then large non-multiples (sampled rows).
const std::vector<Shape> kShapes = {
    {1, 1, 1},         // a single element
    {127, 253, 61},    // odd everything, K not a multiple of 8 (no TMA, per-element loads)
    {200, 96, 1000},   // M, N tails, long K with a K-tile tail
    {129, 130, 72},    // one past a tile in M and N, a K tail
    {256, 256, 256},   // tile multiples
    {1157, 136, 40},   // ten 128-row tiles: a full and a partial raster group
    {8191, 256, 8208},  // M tail of 8191 rows, K tail of a long K
    {264, 8191, 2056},  // N tail of 8191 columns
    {4100, 2100, 264},  // more tiles than SMs: the persistent loop goes round
};

// Shapes the sm_90a kernel takes for every type (K a multiple of 16 elements, so of 16 bytes
// for fp8 too).
const std::vector<Shape> kHopperShapes = {
    {1, 1, 16},       {2, 300, 4096},   {200, 96, 1008},   {129, 130, 80},   {256, 256, 256},
    {1157, 136, 48},  {300, 520, 272},  {8191, 256, 8208}, {4100, 2100, 272}, {2056, 2056, 528},
};

bool device_has_fp8() { return mgbench::kernels::detail::current_device_cc() >= 89; }

bool hopper_available() {
  int device = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         mgbench::kernels::detail::gemm_hopper_available(device);
}

void check_shapes(DType type, const std::vector<Shape>& shapes, const GemmLaunch& launch) {
  for (const auto& s : shapes) {
    CAPTURE(mgbench::test::gemm_dtype_name(type), s.m, s.n, s.k);
    const GemmCheck check = check_gemm(type, s, launch);
    INFO(check.summary());
    CHECK(check.checked > 0);
    CHECK(check.wrong == 0);
  }
}

GemmLaunch hopper_launch() {
  return [](DType type, Shape s, const void* a, const void* b, void* c) {
    return mgbench::kernels::detail::gemm_hopper(type, s.m, s.n, s.k, a, b, c, nullptr);
  };
}

GemmLaunch mma_sync_launch(bool aligned) {
  return [aligned](DType type, Shape s, const void* a, const void* b, void* c) {
    return mgbench::kernels::detail::gemm_tensor_core(type, s.m, s.n, s.k, a, b, c, aligned,
                                                      nullptr);
  };
}

GemmLaunch simt_launch(bool aligned) {
  return [aligned](DType, Shape s, const void* a, const void* b, void* c) {
    return mgbench::kernels::detail::gemm_simt_fp32(s.m, s.n, s.k, static_cast<const float*>(a),
                                                    static_cast<const float*>(b),
                                                    static_cast<float*>(c), aligned, nullptr);
  };
}

// One kernel's vector load path (`launch(true)`) and per-element path (`launch(false)`) on one
// shape: the first verifies, and both give the same bits.
void check_same_bits(DType type, Shape s, GemmLaunch (*launch)(bool)) {
  const GemmCheck vector_path = check_gemm(type, s, launch(true));
  const GemmCheck scalar_path = check_gemm(type, s, launch(false));
  INFO(vector_path.summary());
  REQUIRE(vector_path.wrong == 0);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < vector_path.c.size(); ++i) {
    differ += vector_path.c[i] == scalar_path.c[i] ? 0 : 1;
  }
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("own gemm bf16 matches the FP64 reference at odd, tile-multiple and large shapes") {
  check_shapes(DType::bf16, kShapes, mgbench::test::dispatch_launch());
}

TEST_CASE("own gemm fp16 matches the FP64 reference at odd, tile-multiple and large shapes") {
  check_shapes(DType::fp16, kShapes, mgbench::test::dispatch_launch());
}

TEST_CASE("own gemm tf32 matches the FP64 reference at odd, tile-multiple and large shapes") {
  check_shapes(DType::tf32, kShapes, mgbench::test::dispatch_launch());
}

TEST_CASE("own gemm fp32 (SIMT) matches the FP64 reference at odd, tile-multiple, large shapes") {
  check_shapes(DType::fp32, kShapes, mgbench::test::dispatch_launch());
}

TEST_CASE("own gemm fp8 (bf16 out) matches the FP64 reference at odd, tile-multiple, large shapes") {
  if (!device_has_fp8()) mgbench::test::skip_test("fp8 needs compute capability 8.9");
  check_shapes(DType::fp8_e4m3, kShapes, mgbench::test::dispatch_launch());
}

TEST_CASE("own gemm fp8 on the mma.sync kernel matches the FP64 reference") {
  if (!device_has_fp8()) mgbench::test::skip_test("fp8 needs compute capability 8.9");
  check_shapes(DType::fp8_e4m3, {{200, 96, 1008}, {129, 130, 80}, {1157, 136, 48}},
               mma_sync_launch(true));
}

TEST_CASE("own gemm sm_90a kernel matches the FP64 reference for every type") {
  if (!hopper_available()) mgbench::test::skip_test("no sm_90 GPU or no sm_90a code built");
  Buffer a(16), b(16);
  for (const Shape& s : kHopperShapes) {
    CAPTURE(s.m, s.n, s.k);
    REQUIRE(mgbench::kernels::detail::gemm_hopper_fits(DType::fp8_e4m3, s.m, s.n, s.k, a.get(),
                                                       b.get()));
  }
  for (DType type : {DType::bf16, DType::fp16, DType::tf32, DType::fp8_e4m3}) {
    check_shapes(type, kHopperShapes, hopper_launch());
  }
}

TEST_CASE("own gemm sm_90a kernel: small bf16 and fp8 cases (the sanitizer run)") {
  if (!hopper_available()) mgbench::test::skip_test("no sm_90 GPU or no sm_90a code built");
  check_shapes(DType::bf16, {{300, 520, 272}}, hopper_launch());
  check_shapes(DType::fp8_e4m3, {{130, 300, 144}}, hopper_launch());
}

TEST_CASE("own gemm dispatch: sm_90a where it fits on Hopper, mma.sync otherwise, SIMT for fp32") {
  Buffer a(1 << 20), b(1 << 20);
  using mgbench::kernels::gemm_select;
  const auto* pa = static_cast<const unsigned char*>(a.get());
  const GemmKernel expected = hopper_available() ? GemmKernel::sm90a_wgmma : GemmKernel::mma_sync;
  CHECK(gemm_select(DType::bf16, 8192, 8192, 8192, pa, b.get()) == expected);
  CHECK(gemm_select(DType::tf32, 100, 100, 12, pa, b.get()) == expected);
  CHECK(gemm_select(DType::fp8_e4m3, 100, 100, 32, pa, b.get()) == expected);
  // K * element size not a multiple of 16 bytes, or A misaligned: no TMA.
  CHECK(gemm_select(DType::bf16, 127, 253, 61, pa, b.get()) == GemmKernel::mma_sync);
  CHECK(gemm_select(DType::fp8_e4m3, 64, 64, 1000, pa, b.get()) == GemmKernel::mma_sync);
  CHECK(gemm_select(DType::bf16, 64, 64, 64, pa + 2, b.get()) == GemmKernel::mma_sync);
  CHECK(gemm_select(DType::fp32, 8192, 8192, 8192, pa, b.get()) == GemmKernel::simt_fp32);
  CHECK(std::string(mgbench::kernels::gemm_kernel_info(GemmKernel::sm90a_wgmma).name) ==
        "sm90a_wgmma");
}

TEST_CASE("own gemm: the per-element load path gives the same bits as the vector path") {
  const Shape s{136, 72, 272};  // K a multiple of 16: the vector path applies to fp8 too
  std::vector<DType> types = {DType::bf16, DType::fp16, DType::tf32};
  if (device_has_fp8()) types.push_back(DType::fp8_e4m3);
  for (DType type : types) {
    CAPTURE(mgbench::test::gemm_dtype_name(type));
    check_same_bits(type, s, mma_sync_launch);
  }
}

TEST_CASE("own gemm fp32 (SIMT): the per-element load path gives the same bits") {
  for (const Shape& s : {Shape{136, 72, 272}, Shape{300, 260, 40}}) {
    CAPTURE(s.m, s.n, s.k);
    check_same_bits(DType::fp32, s, simt_launch);
  }
}

TEST_CASE("own gemm fp32 (SIMT): a K too long for 32-bit offsets in a block is right") {
  // 128 rows x 2^24 elements pass 2^31: the kernel takes its 64-bit offset variant.
  check_shapes(DType::fp32, {{1, 1, std::int64_t{1} << 24}, {2, 3, (std::int64_t{1} << 24) + 3}},
               mgbench::test::dispatch_launch());
}

TEST_CASE("own gemm writes no element past the end of C") {
  std::vector<DType> types = {DType::bf16, DType::fp16, DType::tf32, DType::fp32};
  if (device_has_fp8()) types.push_back(DType::fp8_e4m3);
  for (const Shape& s : {Shape{130, 67, 40}, Shape{130, 67, 48}}) {
    for (DType type : types) {
      CAPTURE(mgbench::test::gemm_dtype_name(type), s.m, s.n, s.k);
      const std::size_t extra = 4096;
      const GemmCheck check = check_gemm(type, s, mgbench::test::dispatch_launch(), extra);
      INFO(check.summary());
      CHECK(check.wrong == 0);
      std::size_t untouched = 0;
      const auto written = static_cast<std::size_t>(s.m * s.n);
      for (std::size_t i = written; i < check.c.size(); ++i) {
        untouched += std::isnan(check.c[i]) ? 1 : 0;
      }
      CHECK(untouched == extra);
    }
  }
}

TEST_CASE("own gemm rejects empty shapes and null pointers") {
  Buffer buf(1024);
  CHECK(mgbench::kernels::gemm(DType::bf16, 0, 4, 4, buf.get(), buf.get(), buf.get(),
                               nullptr) == cudaErrorInvalidValue);
  CHECK(mgbench::kernels::gemm(DType::fp32, 4, 4, 0, buf.get(), buf.get(), buf.get(),
                               nullptr) == cudaErrorInvalidValue);
  CHECK(mgbench::kernels::gemm(DType::tf32, 4, 4, 4, nullptr, buf.get(), buf.get(),
                               nullptr) == cudaErrorInvalidValue);
  CHECK(mgbench::kernels::detail::gemm_hopper(DType::bf16, 4, 4, 3, buf.get(), buf.get(),
                                              buf.get(), nullptr) == cudaErrorInvalidValue);
}
