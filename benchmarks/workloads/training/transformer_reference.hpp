#pragma once
// The FP64 host reference of the transformer step (transformer_math.hpp has the model): the loss
// and the parameter gradients of one micro-batch, computed in double precision from the values
// the device stored (parameters, input and target). The verification assembles the whole model
// from the ranks' shards and compares the step's gradients with this, tensor by tensor.
//
// Optionally each tensor the device stores in 16 bits (normed inputs, projections, scores,
// probabilities, attention outputs, residual sums, the gated activation and every activation
// gradient) is rounded as it is stored: the unit tests use it to bound the error a correct
// 16-bit step makes, which is where gradient_tolerance() comes from. Host-only, no CUDA.
#include <cstddef>
#include <vector>

#include "training/transformer_math.hpp"

namespace mgbench::bench::transformer {

// Rounds a value as the device stores it (none: FP64 exactly).
using StoreFn = double (*)(double);
double store_exact(double v);
double store_bf16(double v);  // round to nearest even into bfloat16
double store_fp16(double v);  // round to nearest even into IEEE half (normal range)

inline constexpr double kNormEpsilon = 1e-5;  // RMSNorm's epsilon (Llama 3's rms_norm_eps)

struct ReferenceModel {
  LocalDims dims;      // the whole model (tensor-parallel degree 1)
  LayerLayout layout;  // layer_layout(dims): parameters are layers x layout.total
  int layers = 1;
  std::size_t seq = 0, sequences = 0;
  std::size_t tokens() const { return seq * sequences; }
};
ReferenceModel reference_model(const ModelShape& shape, int layers, std::size_t seq,
                               std::size_t sequences);

// Gradients (layers x layout.total, padding zero) of the loss 0.5 sum (y - t)^2 for one
// micro-batch; x and t are tokens x hidden (sequence after sequence).
std::vector<double> reference_gradients(const ReferenceModel& model,
                                        const std::vector<double>& params,
                                        const std::vector<double>& x,
                                        const std::vector<double>& t,
                                        StoreFn store = store_exact);
// The last layer's output y (tokens x hidden).
std::vector<double> reference_output(const ReferenceModel& model,
                                     const std::vector<double>& params,
                                     const std::vector<double>& x, StoreFn store = store_exact);
double reference_loss(const ReferenceModel& model, const std::vector<double>& params,
                      const std::vector<double>& x, const std::vector<double>& t,
                      StoreFn store = store_exact);

// Normwise error of every parameter tensor: ||got - ref|| / ||ref|| over its elements, per
// layer and segment; `worst` names the largest.
struct TensorErrors {
  double worst = 0;
  int worst_layer = 0;
  Segment worst_segment = Segment::attn_norm;
  std::size_t nonfinite = 0;
};
TensorErrors tensor_errors(const ReferenceModel& model, const std::vector<double>& got,
                           const std::vector<double>& ref);

}  // namespace mgbench::bench::transformer
