// CPU tests of the training-step math: FP64 reference, parameter layout, buckets, memory
// estimate, FLOP count, breakdown formulas.
#include <cmath>
#include <random>
#include <vector>

#include "catch_compat.hpp"
#include "training/train_math.hpp"
#include "mgbench/core/error.hpp"

using namespace mgbench::bench::train;

namespace {

struct TinyProblem {
  ParamLayout layout;
  std::size_t batch = 0;
  std::vector<double> params, x, t;
};

TinyProblem make_problem(int layers, std::size_t hidden, std::size_t batch, unsigned seed) {
  TinyProblem p;
  p.layout = ParamLayout::make(layers, hidden);
  p.batch = batch;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  p.params.assign(p.layout.total, 0.0);
  const double scale = std::sqrt(6.0 / static_cast<double>(hidden));
  for (const auto& slot : p.layout.slots) {
    for (std::size_t i = 0; i < hidden * hidden; ++i) {
      p.params[slot.weight_offset + i] = scale * u(rng);
    }
    for (std::size_t i = 0; i < hidden; ++i) p.params[slot.bias_offset + i] = 0.1 * u(rng);
  }
  p.x.resize(batch * hidden);
  p.t.resize(batch * hidden);
  for (auto& v : p.x) v = u(rng);
  for (auto& v : p.t) v = u(rng);
  return p;
}

// Largest |analytic - central difference| over every real (non-padding) parameter, relative
// to the largest gradient.
double finite_difference_error(const TinyProblem& p, Activation act) {
  const std::vector<double> grad =
      reference_gradients(p.layout, p.batch, p.params, p.x, p.t, act);
  double max_err = 0, max_grad = 0;
  const double h = 1e-6;
  for (const auto& slot : p.layout.slots) {
    std::vector<std::size_t> indices;
    for (std::size_t i = 0; i < p.layout.hidden * p.layout.hidden; ++i) {
      indices.push_back(slot.weight_offset + i);
    }
    for (std::size_t i = 0; i < p.layout.hidden; ++i) indices.push_back(slot.bias_offset + i);
    for (std::size_t idx : indices) {
      std::vector<double> plus = p.params, minus = p.params;
      plus[idx] += h;
      minus[idx] -= h;
      const double fd = (reference_loss(p.layout, p.batch, plus, p.x, p.t, act) -
                         reference_loss(p.layout, p.batch, minus, p.x, p.t, act)) /
                        (2 * h);
      max_err = std::max(max_err, std::fabs(fd - grad[idx]));
      max_grad = std::max(max_grad, std::fabs(grad[idx]));
    }
  }
  return max_err / max_grad;
}

}  // namespace

TEST_CASE("train reference gradients (gelu) match central finite differences of the loss",
          "[train]") {
  const TinyProblem p = make_problem(3, 6, 4, 1);
  CHECK(finite_difference_error(p, Activation::gelu) < 1e-6);
}

TEST_CASE("train reference gradients (relu) match central finite differences of the loss",
          "[train]") {
  const TinyProblem p = make_problem(2, 5, 3, 2);
  CHECK(finite_difference_error(p, Activation::relu) < 1e-6);
}

TEST_CASE("train reference gradients leave layout padding at zero", "[train]") {
  const TinyProblem p = make_problem(2, 5, 3, 3);
  const auto grad = reference_gradients(p.layout, p.batch, p.params, p.x, p.t, Activation::gelu);
  REQUIRE(grad.size() == p.layout.total);
  const auto& slot = p.layout.slots[0];
  for (std::size_t i = slot.weight_offset + 25; i < slot.bias_offset; ++i) CHECK(grad[i] == 0.0);
  for (std::size_t i = slot.bias_offset + 5; i < slot.end; ++i) CHECK(grad[i] == 0.0);
}

TEST_CASE("train reference of a one-layer linear model is the closed form", "[train]") {
  // y = W x + b, loss 0.5 (y - t)^2: dW = (y - t) x^T, db = y - t.
  const ParamLayout layout = ParamLayout::make(1, 1);
  std::vector<double> params(layout.total, 0.0);
  params[layout.slots[0].weight_offset] = 2.0;
  params[layout.slots[0].bias_offset] = 0.5;
  const std::vector<double> x = {3.0, -1.0}, t = {1.0, 1.0};
  const auto g = reference_gradients(layout, 2, params, x, t, Activation::gelu);
  // y = {6.5, -1.5}; y - t = {5.5, -2.5}; dW = 5.5*3 + (-2.5)*(-1) = 19; db = 3.
  CHECK(g[layout.slots[0].weight_offset] == Approx(19.0));
  CHECK(g[layout.slots[0].bias_offset] == Approx(3.0));
  CHECK(reference_loss(layout, 2, params, x, t, Activation::gelu) ==
        Approx(0.5 * (5.5 * 5.5 + 2.5 * 2.5)));
}

TEST_CASE("train reference rejects inputs that do not match the layout", "[train]") {
  const ParamLayout layout = ParamLayout::make(2, 4);
  const std::vector<double> params(layout.total - 1, 0.0), x(8, 0.0), t(8, 0.0);
  CHECK_THROWS_AS(reference_gradients(layout, 2, params, x, t, Activation::gelu),
                  mgbench::UsageError);
}

TEST_CASE("train gelu derivative matches finite differences", "[train]") {
  for (double z : {-3.0, -1.0, -0.2, 0.0, 0.3, 1.5, 4.0}) {
    const double h = 1e-6;
    const double fd =
        (activation(z + h, Activation::gelu) - activation(z - h, Activation::gelu)) / (2 * h);
    CHECK(activation_derivative(z, Activation::gelu) == Approx(fd).margin(1e-8));
  }
  CHECK(activation(1.0, Activation::gelu) == Approx(0.8411920).epsilon(1e-6));
}

TEST_CASE("train layout stores layers in backward order with aligned segments", "[train]") {
  const ParamLayout layout = ParamLayout::make(3, 100);
  // Layer 2 (the last) comes first: W 10000 -> bias at 10112, end at align(10212) = 10240.
  CHECK(layout.slots[2].begin == 0);
  CHECK(layout.slots[2].weight_offset == 0);
  CHECK(layout.slots[2].bias_offset == 10112);
  CHECK(layout.slots[2].end == 10240);
  CHECK(layout.slots[1].begin == 10240);
  CHECK(layout.slots[0].begin == 20480);
  CHECK(layout.slots[0].end == 30720);
  CHECK(layout.total == 30720);
  CHECK(layout.parameter_count() == 3u * (10000u + 100u));
  for (const auto& s : layout.slots) {
    CHECK(s.weight_offset % kAlignElements == 0);
    CHECK(s.bias_offset % kAlignElements == 0);
  }
}

TEST_CASE("train layout rejects zero layers or width", "[train]") {
  CHECK_THROWS_AS(ParamLayout::make(0, 16), mgbench::UsageError);
  CHECK_THROWS_AS(ParamLayout::make(2, 0), mgbench::UsageError);
}

TEST_CASE("train buckets take whole layers in backward order until the cap", "[train]") {
  // H = 256: a layer is 65536 + 256 elements (aligned), 263168 bytes of fp32 gradients;
  // a 1 MiB bucket fills after 4 layers (1052672 bytes >= 1048576).
  const ParamLayout layout = ParamLayout::make(10, 256);
  const auto buckets = partition_buckets(layout, 1u << 20);
  REQUIRE(buckets.size() == 3);
  CHECK(buckets[0].high_layer == 9);
  CHECK(buckets[0].low_layer == 6);
  CHECK(buckets[1].high_layer == 5);
  CHECK(buckets[1].low_layer == 2);
  CHECK(buckets[2].high_layer == 1);
  CHECK(buckets[2].low_layer == 0);
  CHECK(buckets[0].count == 4 * 65792u);
  CHECK(buckets[2].count == 2 * 65792u);
  // Contiguous and covering the whole flat array.
  std::size_t next = 0;
  for (const auto& b : buckets) {
    CHECK(b.offset == next);
    next = b.offset + b.count;
  }
  CHECK(next == layout.total);
  CHECK(max_bucket_count(buckets) == 4 * 65792u);
}

TEST_CASE("train buckets: a layer larger than the cap is a bucket of its own", "[train]") {
  const ParamLayout layout = ParamLayout::make(8, 4096);  // 64 MiB of gradients per layer
  const auto buckets = partition_buckets(layout, 25u << 20);
  REQUIRE(buckets.size() == 8);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    CHECK(buckets[i].high_layer == 7 - static_cast<int>(i));
    CHECK(buckets[i].low_layer == buckets[i].high_layer);
  }
}

TEST_CASE("train buckets: bucket size 0 gives one bucket per layer", "[train]") {
  const ParamLayout layout = ParamLayout::make(3, 32);
  const auto buckets = partition_buckets(layout, 0);
  REQUIRE(buckets.size() == 3);
  CHECK(buckets[0].low_layer == 2);
  CHECK(buckets[2].low_layer == 0);
}

TEST_CASE("train buckets: a cap above the model gives one bucket", "[train]") {
  const ParamLayout layout = ParamLayout::make(4, 64);
  const auto buckets = partition_buckets(layout, 1ull << 30);
  REQUIRE(buckets.size() == 1);
  CHECK(buckets[0].offset == 0);
  CHECK(buckets[0].count == layout.total);
  CHECK(buckets[0].high_layer == 3);
  CHECK(buckets[0].low_layer == 0);
}

TEST_CASE("train memory estimate adds states, activations and workspaces", "[train]") {
  // L = 2, H = 128, batch 64, bf16: a layer is 16384 + 128 elements (both aligned), total
  // 33024. States: 3 x 4 bytes + 2 bytes (copy). Slabs: x, t, z0, z1, a0, two grads = 7 of
  // 8192 elements x 2 bytes.
  const MemoryEstimate m = estimate_memory(2, 128, 64, DType::bf16, 1000, 10, 7);
  CHECK(m.master == 33024u * 4);
  CHECK(m.momentum == 33024u * 4);
  CHECK(m.gradients == 33024u * 4);
  CHECK(m.weight_copy == 33024u * 2);
  CHECK(m.activations == 7u * 8192 * 2);
  CHECK(m.workspace == 1000u + 40u);
  CHECK(m.staging == 7u);
  CHECK(m.total() == 33024u * 14 + 7u * 8192 * 2 + 1040u + 7u);
}

TEST_CASE("train memory estimate: fp32 and tf32 have no weight copy", "[train]") {
  CHECK(estimate_memory(2, 128, 64, DType::fp32, 0, 0, 0).weight_copy == 0);
  CHECK(estimate_memory(2, 128, 64, DType::tf32, 0, 0, 0).weight_copy == 0);
  CHECK(estimate_memory(2, 128, 64, DType::fp32, 0, 0, 0).activations == 7u * 8192 * 4);
}

TEST_CASE("train memory estimate of the default point fits in 16 GB", "[train]") {
  // layers 8, hidden 4096, batch 4096: the defaults must run on 16 GB cards in fp32 too.
  const MemoryEstimate m = estimate_memory(8, 4096, 4096, DType::fp32, 32u << 20, 0, 0);
  CHECK(m.total() < 14ull * (1ull << 30));
}

TEST_CASE("train step FLOPs count forward, weight and input gradients", "[train]") {
  // (6L - 2) H^2 B accum with L = 8, H = 4096, B = 1024, accum 2.
  CHECK(step_flops(8, 4096, 1024, 2) == Approx(46.0 * 4096.0 * 4096.0 * 1024.0 * 2.0));
  CHECK(step_flops(1, 10, 3, 1) == Approx(4.0 * 100.0 * 3.0));
}

TEST_CASE("train breakdown: exposed communication and overlap ratio", "[train]") {
  Breakdown m;
  m.step_s = 10;
  m.compute_only_s = 8;
  m.comm_s = 4;
  const Breakdown d = derive_breakdown(m);
  CHECK(d.exposed_comm_s == Approx(2.0));
  CHECK(d.overlap_ratio == Approx(0.5));
}

TEST_CASE("train breakdown clamps noise: compute-only slower than the step", "[train]") {
  Breakdown m;
  m.step_s = 10;
  m.compute_only_s = 10.5;
  m.comm_s = 3;
  const Breakdown d = derive_breakdown(m);
  CHECK(d.exposed_comm_s == 0.0);
  CHECK(d.overlap_ratio == 1.0);
}

TEST_CASE("train breakdown clamps the overlap ratio at 0 and handles no communication",
          "[train]") {
  Breakdown m;
  m.step_s = 10;
  m.compute_only_s = 5;
  m.comm_s = 3;  // less than the exposed 5 s: nothing hidden
  CHECK(derive_breakdown(m).overlap_ratio == 0.0);
  m.comm_s = 0;
  CHECK(derive_breakdown(m).overlap_ratio == 0.0);
  CHECK(derive_breakdown(m).exposed_comm_s == Approx(5.0));
}

TEST_CASE("train gradient error is normwise and max-relative", "[train]") {
  const std::vector<double> ref = {3.0, 4.0, 0.0};
  const std::vector<double> got = {3.0, 4.3, 0.4};
  const GradientError e = gradient_error(got, ref);
  CHECK(e.rel_l2 == Approx(0.5 / 5.0));  // sqrt(0.09 + 0.16) / 5
  CHECK(e.max_rel == Approx(0.4 / 4.0));
  CHECK(e.nonfinite == 0);
}

TEST_CASE("train gradient error fails non-finite and mismatched gradients", "[train]") {
  const std::vector<double> ref = {1.0, 2.0};
  const GradientError nan = gradient_error({1.0, std::nan("")}, ref);
  CHECK(nan.nonfinite == 1);
  CHECK_FALSE(nan.rel_l2 <= 1.0);
  CHECK_FALSE(gradient_error({1.0}, ref).rel_l2 <= 1.0);
}

TEST_CASE("train precisions parse, print and order their tolerances", "[train]") {
  for (const char* name : {"fp32", "tf32", "bf16", "fp16"}) {
    CHECK(std::string(to_string(precision_from_string(name))) == name);
  }
  CHECK_THROWS_AS(precision_from_string("fp8"), mgbench::UsageError);
  CHECK_THROWS_AS(precision_from_string("int32"), mgbench::UsageError);  // a type, not a precision
  try {
    precision_from_string("fp64");
    FAIL("fp64 parsed");
  } catch (const mgbench::UsageError& e) {
    CHECK(std::string(e.what()) ==
          "unknown train_step dtype 'fp64' (expected fp32, tf32, bf16 or fp16)");
  }
  // fp32 is the tightest and bf16 (7-bit mantissa) the loosest.
  CHECK(gradient_tolerance(DType::fp32) < gradient_tolerance(DType::fp16));
  CHECK(gradient_tolerance(DType::fp16) < gradient_tolerance(DType::tf32));
  CHECK(gradient_tolerance(DType::tf32) < gradient_tolerance(DType::bf16));
  CHECK(element_bytes(DType::tf32) == 4);
  CHECK(element_bytes(DType::bf16) == 2);
  CHECK(has_weight_copy(DType::fp16));
  CHECK_FALSE(has_weight_copy(DType::tf32));
}
