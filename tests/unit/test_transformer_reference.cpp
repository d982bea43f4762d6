// CPU tests of the transformer step's FP64 reference: its gradients against central differences
// of its loss (every parameter tensor, every layer), the causal mask, grouped-query heads, and the
// error a correct 16-bit step makes (emulated storage rounding) against gradient_tolerance().
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "training/transformer_reference.hpp"

using namespace mgbench::bench::transformer;

namespace {

struct Problem {
  ReferenceModel model;
  std::vector<double> params, x, t;
};

// Random parameters scaled as the device initialises them (norm weights near 1, matrices
// +-sqrt(3 / fan-in)); padding zero.
Problem make_problem(const ModelShape& shape, int layers, std::size_t seq, std::size_t sequences,
                     unsigned seed) {
  Problem p;
  p.model = reference_model(shape, layers, seq, sequences);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  p.params.assign(static_cast<std::size_t>(layers) * p.model.layout.total, 0.0);
  for (int l = 0; l < layers; ++l) {
    for (const SegmentSlot& s : p.model.layout.segments) {
      const bool norm = s.kind == Segment::attn_norm || s.kind == Segment::mlp_norm;
      const double range = std::sqrt(3.0 / static_cast<double>(s.fan_in()));
      for (std::size_t i = 0; i < s.count(); ++i) {
        p.params[static_cast<std::size_t>(l) * p.model.layout.total + s.offset + i] =
            norm ? 1.0 + 0.5 * u(rng) : range * u(rng);
      }
    }
  }
  const std::size_t n = p.model.tokens() * static_cast<std::size_t>(shape.hidden);
  p.x.resize(n);
  p.t.resize(n);
  for (auto& v : p.x) v = u(rng);
  for (auto& v : p.t) v = u(rng);
  return p;
}

// A small shape: hidden 16, 4 heads of 4 over 2 kv heads (grouped 2 to 1), MLP 24.
ModelShape small_shape() { return ModelShape{"small", 16, 4, 2, 4, 24, 0, 0}; }

// Largest |analytic - central difference| relative to the tensor's largest gradient, over a
// sample of every tensor of every layer (first, last and strided elements).
double finite_difference_error(const Problem& p) {
  const std::vector<double> grad = reference_gradients(p.model, p.params, p.x, p.t);
  double worst = 0;
  const double h = 1e-6;
  for (int l = 0; l < p.model.layers; ++l) {
    for (const SegmentSlot& s : p.model.layout.segments) {
      const std::size_t base = static_cast<std::size_t>(l) * p.model.layout.total + s.offset;
      double largest = 0;
      for (std::size_t i = 0; i < s.count(); ++i) {
        largest = std::fmax(largest, std::fabs(grad[base + i]));
      }
      REQUIRE(largest > 0);
      std::vector<std::size_t> picks;
      for (std::size_t i = 0; i < s.count(); i += std::max<std::size_t>(1, s.count() / 7)) {
        picks.push_back(i);
      }
      picks.push_back(s.count() - 1);
      for (std::size_t i : picks) {
        std::vector<double> plus = p.params, minus = p.params;
        plus[base + i] += h;
        minus[base + i] -= h;
        const double fd = (reference_loss(p.model, plus, p.x, p.t) -
                           reference_loss(p.model, minus, p.x, p.t)) /
                          (2 * h);
        worst = std::fmax(worst, std::fabs(fd - grad[base + i]) / largest);
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("transformer reference: gradients equal central differences of the loss",
          "[unit][transformer]") {
  const Problem p = make_problem(small_shape(), 2, 5, 2, 11);
  CHECK(finite_difference_error(p) < 1e-6);
}

TEST_CASE("transformer reference: multi-head attention (kv heads = heads) also checks out",
          "[unit][transformer]") {
  ModelShape mha = small_shape();
  mha.kv_heads = mha.heads;
  const Problem p = make_problem(mha, 1, 4, 1, 5);
  CHECK(finite_difference_error(p) < 1e-6);
}

TEST_CASE("transformer reference: the mask is causal", "[unit][transformer]") {
  // Changing the last token's input changes its own output and no earlier token's.
  const Problem p = make_problem(small_shape(), 2, 6, 1, 3);
  const std::size_t h = static_cast<std::size_t>(small_shape().hidden);
  std::vector<double> x2 = p.x;
  for (std::size_t i = 0; i < h; ++i) x2[5 * h + i] += 0.5;
  const std::vector<double> y = reference_output(p.model, p.params, p.x);
  const std::vector<double> y2 = reference_output(p.model, p.params, x2);
  REQUIRE(y.size() == 6 * h);
  for (std::size_t i = 0; i < 5 * h; ++i) CHECK(y[i] == y2[i]);
  bool last_changed = false;
  for (std::size_t i = 5 * h; i < 6 * h; ++i) last_changed = last_changed || y[i] != y2[i];
  CHECK(last_changed);
  // And the first token's input reaches the last token's output.
  std::vector<double> x3 = p.x;
  x3[0] += 0.5;
  const std::vector<double> y3 = reference_output(p.model, p.params, x3);
  CHECK(y3[5 * h] != y[5 * h]);
}

TEST_CASE("transformer reference: 16-bit storage errors stay well inside the tolerance",
          "[unit][transformer]") {
  // The tiny model of the gradient check (3 layers, GQA 2:1, 16 tokens), one sequence: the one
  // of tensor-parallel degrees 1, 2, 4, 8 and the one of degree 3 (6 heads over 3 kv heads).
  StepConfig point;
  point.tp = GENERATE(1, 3);
  const StepConfig tiny = tiny_config(point);
  const Problem p = make_problem(tiny.shape, tiny.layers, static_cast<std::size_t>(tiny.seq), 1, 7);
  const std::vector<double> exact = reference_gradients(p.model, p.params, p.x, p.t);
  const std::vector<double> bf16 = reference_gradients(p.model, p.params, p.x, p.t, store_bf16);
  const std::vector<double> fp16 = reference_gradients(p.model, p.params, p.x, p.t, store_fp16);
  const TensorErrors eb = tensor_errors(p.model, bf16, exact);
  const TensorErrors eh = tensor_errors(p.model, fp16, exact);
  CAPTURE(eb.worst, to_string(eb.worst_segment), eb.worst_layer, eh.worst,
          to_string(eh.worst_segment), eh.worst_layer);
  CHECK(eb.worst > 1e-4);  // the emulation rounds
  CHECK(eb.worst < gradient_tolerance(DType::bf16) / 3);
  CHECK(eh.worst < gradient_tolerance(DType::fp16) / 3);
  CHECK(eh.worst < eb.worst);
}

TEST_CASE("transformer reference: storage rounding is round-to-nearest", "[unit][transformer]") {
  CHECK(store_bf16(1.0) == 1.0);
  CHECK(store_bf16(1.0 + std::ldexp(1.0, -9)) == 1.0);  // a tie rounds to even
  CHECK(store_bf16(1.0 + 3 * std::ldexp(1.0, -9)) == 1.0 + std::ldexp(1.0, -7));
  CHECK(store_fp16(1.0 + std::ldexp(1.0, -12)) == 1.0);
  CHECK(store_fp16(1.0 + 3 * std::ldexp(1.0, -12)) == 1.0 + std::ldexp(1.0, -10));
  CHECK(store_fp16(-3.0) == -3.0);
}

TEST_CASE("transformer reference: a wrong gradient is caught tensor by tensor",
          "[unit][transformer]") {
  const Problem p = make_problem(small_shape(), 2, 4, 1, 9);
  const std::vector<double> ref = reference_gradients(p.model, p.params, p.x, p.t);
  std::vector<double> got = ref;
  CHECK(tensor_errors(p.model, got, ref).worst == 0.0);
  // The last layer's MLP-norm gradient doubled (a doubled reduction): its tensor is the worst,
  // off by 1 (relative), where the other tensors are exact.
  const SegmentSlot& norm = p.model.layout.at(Segment::mlp_norm);
  for (std::size_t i = 0; i < norm.count(); ++i) got[p.model.layout.total + norm.offset + i] *= 2;
  const TensorErrors e = tensor_errors(p.model, got, ref);
  CHECK(e.worst == Approx(1.0));
  CHECK(e.worst_layer == 1);
  CHECK(e.worst_segment == Segment::mlp_norm);
}
