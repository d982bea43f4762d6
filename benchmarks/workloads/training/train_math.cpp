// Host-side math of the training-step workload (see train_math.hpp).
#include "training/train_math.hpp"

#include <algorithm>
#include <cmath>

#include "mgbench/bench/dtype.hpp"
#include "mgbench/core/checked_math.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench::train {

DType precision_from_string(const std::string& name) {
  return dtype_from_string(name, {DType::fp32, DType::tf32, DType::bf16, DType::fp16},
                           "train_step");
}

std::size_t element_bytes(DType precision) {
  return precision == DType::bf16 || precision == DType::fp16 ? 2 : 4;
}

bool has_weight_copy(DType precision) { return element_bytes(precision) == 2; }

double gradient_tolerance(DType precision) {
  switch (precision) {
    case DType::fp32: return 1e-4;
    case DType::tf32: return 2e-2;
    case DType::fp16: return 1e-2;
    case DType::bf16: return 3e-2;
    default: return 0;
  }
}

namespace {
constexpr double kGeluK = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluC = 0.044715;
}  // namespace

double activation(double z, Activation act) {
  switch (act) {
    case Activation::relu: return z > 0 ? z : 0.0;
    case Activation::gelu: return 0.5 * z * (1.0 + std::tanh(kGeluK * (z + kGeluC * z * z * z)));
    case Activation::identity: break;
  }
  return z;
}

double activation_derivative(double z, Activation act) {
  switch (act) {
    case Activation::relu: return z > 0 ? 1.0 : 0.0;
    case Activation::gelu: {
      const double t = std::tanh(kGeluK * (z + kGeluC * z * z * z));
      const double dt = kGeluK * (1.0 + 3.0 * kGeluC * z * z);
      return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * dt;
    }
    case Activation::identity: break;
  }
  return 1.0;
}

std::size_t align_elements(std::size_t count) {
  return (count + kAlignElements - 1) / kAlignElements * kAlignElements;
}

ParamLayout ParamLayout::make(int layers, std::size_t hidden) {
  if (layers < 1 || hidden < 1) throw UsageError("train_step needs layers >= 1 and hidden >= 1");
  ParamLayout layout;
  layout.layers = layers;
  layout.hidden = hidden;
  layout.slots.resize(static_cast<std::size_t>(layers));
  std::size_t offset = 0;
  for (int l = layers - 1; l >= 0; --l) {  // backward order: the last layer first
    LayerSlot& slot = layout.slots[static_cast<std::size_t>(l)];
    slot.begin = offset;
    slot.weight_offset = offset;
    const std::size_t weights = checked_product({hidden, hidden}, "train_step weight elements");
    slot.bias_offset = align_elements(checked_sum(offset, weights, "train_step parameters"));
    slot.end = align_elements(checked_sum(slot.bias_offset, hidden, "train_step parameters"));
    offset = slot.end;
  }
  layout.total = offset;
  return layout;
}

std::size_t ParamLayout::parameter_count() const {
  return static_cast<std::size_t>(layers) * (hidden * hidden + hidden);
}

std::vector<Bucket> partition_buckets(const ParamLayout& layout, std::size_t bucket_bytes) {
  std::vector<Bucket> buckets;
  bool open = false;
  Bucket current;
  for (int l = layout.layers - 1; l >= 0; --l) {
    const LayerSlot& slot = layout.slots[static_cast<std::size_t>(l)];
    if (!open) {
      current = Bucket{slot.begin, 0, l, l};
      open = true;
    }
    current.count = slot.end - current.offset;
    current.low_layer = l;
    if (current.count * sizeof(float) >= bucket_bytes) {
      buckets.push_back(current);
      open = false;
    }
  }
  if (open) buckets.push_back(current);
  return buckets;
}

std::size_t max_bucket_count(const std::vector<Bucket>& buckets) {
  std::size_t most = 0;
  for (const auto& b : buckets) most = std::max(most, b.count);
  return most;
}

std::size_t MemoryEstimate::total() const {
  return master + momentum + gradients + weight_copy + activations + workspace + staging;
}

std::size_t slab_elements(std::size_t batch, std::size_t hidden) {
  return align_elements(checked_product({batch, hidden}, "train_step activation elements"));
}

MemoryEstimate estimate_memory(int layers, std::size_t hidden, std::size_t batch,
                               DType precision, std::size_t gemm_workspace_bytes,
                               std::size_t bias_workspace_floats, std::size_t staging_bytes) {
  const ParamLayout layout = ParamLayout::make(layers, hidden);
  MemoryEstimate m;
  m.master = checked_product({layout.total, sizeof(float)}, "train_step weight bytes");
  m.momentum = m.master;
  m.gradients = m.master;
  m.weight_copy = has_weight_copy(precision)
                      ? checked_product({layout.total, element_bytes(precision)},
                                        "train_step weight bytes")
                      : 0;
  // x, t; z_0..z_{L-1}; a_0..a_{L-2}; two ping-pong gradient buffers.
  const std::size_t slabs = 2 + static_cast<std::size_t>(layers) +
                            static_cast<std::size_t>(layers - 1) + 2;
  m.activations = checked_product({slabs, slab_elements(batch, hidden), element_bytes(precision)},
                                  "train_step activation bytes");
  m.workspace = gemm_workspace_bytes + bias_workspace_floats * sizeof(float);
  m.staging = staging_bytes;
  return m;
}

double step_flops(int layers, std::size_t hidden, std::size_t batch, int accum) {
  const double h2b = static_cast<double>(hidden) * static_cast<double>(hidden) *
                     static_cast<double>(batch);
  return (6.0 * layers - 2.0) * h2b * accum;
}

namespace {

struct Forward {
  std::vector<std::vector<double>> z;  // z_0..z_{L-1} (z_{L-1} = y)
  std::vector<std::vector<double>> a;  // a_0..a_{L-2}
};

Forward forward(const ParamLayout& layout, std::size_t batch, const std::vector<double>& params,
                const std::vector<double>& x, Activation act) {
  const std::size_t h = layout.hidden;
  const int n_layers = layout.layers;
  if (params.size() != layout.total || x.size() != batch * h) {
    throw UsageError("reference_gradients: parameter or batch size does not match the layout");
  }
  Forward f;
  f.z.resize(static_cast<std::size_t>(n_layers));
  f.a.resize(static_cast<std::size_t>(n_layers - 1));
  const std::vector<double>* in = &x;
  for (int l = 0; l < n_layers; ++l) {
    const LayerSlot& slot = layout.slots[static_cast<std::size_t>(l)];
    std::vector<double>& z = f.z[static_cast<std::size_t>(l)];
    z.assign(batch * h, 0.0);
    for (std::size_t i = 0; i < batch; ++i) {
      for (std::size_t o = 0; o < h; ++o) {
        double s = params[slot.bias_offset + o];
        const double* w = &params[slot.weight_offset + o * h];
        const double* v = &(*in)[i * h];
        for (std::size_t k = 0; k < h; ++k) s += v[k] * w[k];
        z[i * h + o] = s;
      }
    }
    if (l < n_layers - 1) {
      std::vector<double>& a = f.a[static_cast<std::size_t>(l)];
      a.resize(z.size());
      for (std::size_t i = 0; i < z.size(); ++i) a[i] = activation(z[i], act);
      in = &a;
    }
  }
  return f;
}

}  // namespace

std::vector<double> reference_gradients(const ParamLayout& layout, std::size_t batch,
                                        const std::vector<double>& params,
                                        const std::vector<double>& x,
                                        const std::vector<double>& t, Activation act) {
  const std::size_t h = layout.hidden;
  const int n_layers = layout.layers;
  if (t.size() != batch * h) throw UsageError("reference_gradients: target size mismatch");
  const Forward f = forward(layout, batch, params, x, act);
  std::vector<double> grad(layout.total, 0.0);
  // dz of the last layer: y - t.
  std::vector<double> dz(batch * h);
  for (std::size_t i = 0; i < dz.size(); ++i) dz[i] = f.z.back()[i] - t[i];
  for (int l = n_layers - 1; l >= 0; --l) {
    const LayerSlot& slot = layout.slots[static_cast<std::size_t>(l)];
    const std::vector<double>& in = l == 0 ? x : f.a[static_cast<std::size_t>(l - 1)];
    for (std::size_t o = 0; o < h; ++o) {
      double gb = 0;
      for (std::size_t i = 0; i < batch; ++i) gb += dz[i * h + o];
      grad[slot.bias_offset + o] = gb;
      for (std::size_t k = 0; k < h; ++k) {
        double gw = 0;
        for (std::size_t i = 0; i < batch; ++i) gw += dz[i * h + o] * in[i * h + k];
        grad[slot.weight_offset + o * h + k] = gw;
      }
    }
    if (l == 0) break;
    std::vector<double> next(batch * h, 0.0);
    const std::vector<double>& z_prev = f.z[static_cast<std::size_t>(l - 1)];
    for (std::size_t i = 0; i < batch; ++i) {
      for (std::size_t k = 0; k < h; ++k) {
        double s = 0;
        for (std::size_t o = 0; o < h; ++o) {
          s += dz[i * h + o] * params[slot.weight_offset + o * h + k];
        }
        next[i * h + k] = s * activation_derivative(z_prev[i * h + k], act);
      }
    }
    dz.swap(next);
  }
  return grad;
}

double reference_loss(const ParamLayout& layout, std::size_t batch,
                      const std::vector<double>& params, const std::vector<double>& x,
                      const std::vector<double>& t, Activation act) {
  const Forward f = forward(layout, batch, params, x, act);
  double loss = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double d = f.z.back()[i] - t[i];
    loss += 0.5 * d * d;
  }
  return loss;
}

GradientError gradient_error(const std::vector<double>& got, const std::vector<double>& ref) {
  GradientError e;
  if (got.size() != ref.size()) {
    e.rel_l2 = e.max_rel = INFINITY;
    return e;
  }
  double diff2 = 0, ref2 = 0, max_diff = 0, max_ref = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++e.nonfinite;
      continue;
    }
    const double d = got[i] - ref[i];
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    max_diff = std::max(max_diff, std::fabs(d));
    max_ref = std::max(max_ref, std::fabs(ref[i]));
  }
  if (e.nonfinite > 0) {
    e.rel_l2 = e.max_rel = INFINITY;
    return e;
  }
  e.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
  e.max_rel = max_ref > 0 ? max_diff / max_ref : (max_diff > 0 ? INFINITY : 0.0);
  return e;
}

Breakdown derive_breakdown(Breakdown m) {
  m.exposed_comm_s = std::max(0.0, m.step_s - m.compute_only_s);
  if (m.comm_s > 0) {
    m.overlap_ratio = std::clamp((m.comm_s - m.exposed_comm_s) / m.comm_s, 0.0, 1.0);
  } else {
    m.overlap_ratio = 0;
  }
  return m;
}

}  // namespace mgbench::bench::train
