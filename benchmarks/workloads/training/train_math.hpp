#pragma once
// Host-side pieces of the training-step workload (training/train_step.cpp) that need no GPU:
// precisions, the flat parameter layout, gradient buckets, the per-GPU memory estimate, the
// FP64 reference of the step's gradients and the step-time breakdown formulas.
//
// The model: an MLP of L layers of width H. Layer l (0-based) computes
//   z_l = a_{l-1} W_l^T + b_l,  a_l = act(z_l) for l < L-1,  y = z_{L-1} (no activation),
// with a_{-1} = x (the batch, rows x H, row-major) and W_l of H x H (row-major, out x in).
// Loss = 0.5 * sum over the batch and features of (y - t)^2 (a sum, not a mean: the 1/(global
// batch) factor is applied in fp32 by the optimizer, which keeps 16-bit gradients near 1).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench::train {

// The step's precision is one of fp32, tf32, bf16 and fp16 of the project's element-type enum.
using kernels::DType;
DType precision_from_string(const std::string& name);  // throws UsageError for other types
// Bytes of one stored activation / weight-copy element (tf32 stores fp32).
std::size_t element_bytes(DType precision);
bool has_weight_copy(DType precision);  // 16-bit: GEMMs read a copy of the fp32 master

// Relative tolerance of the gradient check (normwise, see gradient_error()) on the tiny model
// (3 layers: a gradient passes through up to ~6 GEMMs and ~14 stored roundings in series).
// The reference reads the same stored inputs and weights, so only the step's own roundings
// count. Real bugs (a wrong layout, a missing or doubled all-reduce or micro-step) give
// errors of order 1.
// - fp32: fp32 GEMMs with fp32 accumulation, fp32 storage: ~1e-6 relative; tolerance 1e-4.
// - fp16: 16-bit storage of activations and their gradients, rounded to nearest (unit
//   roundoff 2^-11 ~ 4.9e-4, RMS ~2.8e-4 per rounding, ~14 in series): ~1e-3; tolerance 1e-2.
// - tf32: every GEMM operand reduced to a 10-bit mantissa; tensor cores may simply ignore the
//   low 13 bits (truncation: up to 2^-10 ~ 9.8e-4, biased, so it does not average out) in
//   ~6 GEMMs in series: up to ~6e-3; tolerance 2e-2.
// - bf16: as fp16 with a 7-bit mantissa (unit roundoff 2^-8 ~ 3.9e-3, RMS ~2.3e-3 per
//   rounding): ~1e-2; tolerance 3e-2.
double gradient_tolerance(DType precision);

enum class Activation { identity, relu, gelu };  // gelu: tanh approximation
double activation(double z, Activation act);
double activation_derivative(double z, Activation act);

// ---- flat parameter layout ---------------------------------------------------------------
// Every parameter array (fp32 master, momentum, gradients, 16-bit copy) shares one flat
// layout. Layers are stored in backward order (the last layer first) so that the gradients
// finished first by the backward pass are contiguous: a bucket is a contiguous range. Every
// segment (W_l, b_l) starts at a multiple of kAlignElements (cuBLASLt-friendly 256-byte
// alignment for 16-bit and fp32 elements); padding elements stay zero.
inline constexpr std::size_t kAlignElements = 128;
std::size_t align_elements(std::size_t count);

struct LayerSlot {
  std::size_t weight_offset = 0;  // H*H elements (row-major, out x in)
  std::size_t bias_offset = 0;    // H elements
  std::size_t begin = 0, end = 0; // the layer's range in the flat array (with padding)
};

struct ParamLayout {
  int layers = 0;
  std::size_t hidden = 0;
  std::vector<LayerSlot> slots;  // indexed by layer 0..L-1
  std::size_t total = 0;         // flat length (multiple of kAlignElements)

  static ParamLayout make(int layers, std::size_t hidden);
  std::size_t parameter_count() const;  // L * (H*H + H), without padding
};

// A gradient bucket: layers [low_layer, high_layer], flat range [offset, offset + count).
// The backward pass finishes high_layer first and low_layer last: the bucket is ready to be
// all-reduced once low_layer's gradients are done.
struct Bucket {
  std::size_t offset = 0;
  std::size_t count = 0;
  int high_layer = 0;
  int low_layer = 0;
};

// PyTorch-DDP-style partition: walking layers in backward order, a bucket takes whole layers
// until it holds at least `bucket_bytes` of fp32 gradients (a layer larger than the cap is a
// bucket of its own). bucket_bytes == 0 gives one bucket per layer.
std::vector<Bucket> partition_buckets(const ParamLayout& layout, std::size_t bucket_bytes);
std::size_t max_bucket_count(const std::vector<Bucket>& buckets);

// ---- memory -------------------------------------------------------------------------------

struct MemoryEstimate {
  std::size_t master = 0, momentum = 0, gradients = 0, weight_copy = 0;
  std::size_t activations = 0;  // x, t, z_0..z_{L-1}, a_0..a_{L-2}, two gradient buffers
  std::size_t workspace = 0;    // GEMM workspace + bias-gradient workspace
  std::size_t staging = 0;      // all-reduce staging (impl=mgbench), if any
  std::size_t total() const;
};

// Bytes of one activation slab (rows x H elements, padded to kAlignElements).
std::size_t slab_elements(std::size_t batch, std::size_t hidden);
MemoryEstimate estimate_memory(int layers, std::size_t hidden, std::size_t batch,
                               DType precision, std::size_t gemm_workspace_bytes,
                               std::size_t bias_workspace_floats, std::size_t staging_bytes);

// FLOPs of one step per GPU: forward 2LH^2B, weight gradients 2LH^2B, input gradients
// 2(L-1)H^2B (the first layer's input gradient is not needed), times the accumulation steps.
double step_flops(int layers, std::size_t hidden, std::size_t batch, int accum);

// ---- FP64 reference --------------------------------------------------------------------------

// Gradients (flat, in `layout`, padding zero) of the loss above for one batch, in FP64.
// `params` is the flat parameter array (the values the GEMMs read), x and t are batch x H.
std::vector<double> reference_gradients(const ParamLayout& layout, std::size_t batch,
                                        const std::vector<double>& params,
                                        const std::vector<double>& x,
                                        const std::vector<double>& t, Activation act);
double reference_loss(const ParamLayout& layout, std::size_t batch,
                      const std::vector<double>& params, const std::vector<double>& x,
                      const std::vector<double>& t, Activation act);

struct GradientError {
  double rel_l2 = 0;   // ||got - ref||_2 / ||ref||_2 (the criterion)
  double max_rel = 0;  // max |got - ref| / max |ref|
  std::size_t nonfinite = 0;
};
GradientError gradient_error(const std::vector<double>& got, const std::vector<double>& ref);

// ---- step-time breakdown -------------------------------------------------------------------

struct Breakdown {
  double step_s = 0;          // the whole step, timed collectively (slowest rank, median)
  double compute_only_s = 0;  // the same step without the all-reduce
  double comm_s = 0;          // the bucketed all-reduce alone
  double h2d_s = 0;           // the batch copies of one step alone (0 when h2d is off)
  double optimizer_s = 0;     // the optimizer kernel alone
  double exposed_comm_s = 0;  // max(0, step - compute_only)
  double overlap_ratio = 0;   // clamp((comm - exposed) / comm, 0, 1); 0 when comm is 0
};
// Fills exposed_comm_s and overlap_ratio from the measured fields.
Breakdown derive_breakdown(Breakdown measured);

}  // namespace mgbench::bench::train
