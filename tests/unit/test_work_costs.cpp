// What one op of each workload costs (benchmarks/workloads/work_costs.hpp): the
// items `mgbench predict` composes and the work its throughput divides.
#include <cstdint>
#include <string>
#include <utility>

#include "catch_compat.hpp"
#include "training/train_math.hpp"
#include "work_costs.hpp"

using namespace mgbench;
using namespace mgbench::bench;

namespace {

Params train_params(int layers, int hidden, int batch, int accum, bool overlap, bool h2d,
                    int bucket_mb, const char* dtype = "bf16") {
  return Params{{"layers", layers}, {"hidden", hidden}, {"batch", batch},
                {"accum", accum},   {"dtype", dtype},   {"overlap", overlap},
                {"h2d", h2d},       {"impl", "nccl"},   {"bucket_mb", bucket_mb}};
}

double gemm_flops(const WorkCost& cost) {
  double total = 0;
  for (const auto& c : cost.compute) {
    if (c.kind == ComputeKind::gemm) {
      total += 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) *
               static_cast<double>(c.k) * c.repeat;
    }
  }
  return total;
}

double bytes_of(const WorkCost& cost, ComputeKind kind) {
  double total = 0;
  for (const auto& c : cost.compute) {
    if (c.kind == kind) total += c.bytes * c.repeat;
  }
  return total;
}

}  // namespace

TEST_CASE("train_step cost: the step's FLOPs, its batch copies, fp32 buckets, the optimizer last") {
  for (int accum : {1, 3}) {
    const auto cost = train_step_cost(train_params(4, 256, 64, accum, true, true, 0));
    REQUIRE(cost);
    CHECK(gemm_flops(*cost) == Approx(train::step_flops(4, 256, 64, accum)));
    // x and t per micro-step, 2 bytes each.
    CHECK(bytes_of(*cost, ComputeKind::host_copy) == Approx(2.0 * 64 * 256 * 2 * accum));
    const auto layout = train::ParamLayout::make(4, 256);
    double reduced = 0;
    for (const auto& c : cost->collectives) reduced += c.bytes;
    CHECK(reduced == Approx(4.0 * static_cast<double>(layout.total)));
    CHECK(cost->collectives.size() == 4);  // bucket_mb 0: one bucket per layer
    const auto& last = cost->compute.back();
    CHECK(last.after_communication);
    CHECK(last.bytes == Approx(22.0 * static_cast<double>(layout.total)));  // 20 + bf16 copy
    CHECK(cost->work(8) == Approx(64.0 * accum * 8));
  }
}

TEST_CASE("train_step cost: buckets become ready in backward order, or after it without overlap") {
  const auto overlapped = train_step_cost(train_params(4, 256, 64, 1, true, false, 0));
  REQUIRE(overlapped);
  std::size_t previous = 0;
  for (const auto& c : overlapped->collectives) {
    REQUIRE(c.ready_after);
    CHECK(*c.ready_after > previous);  // strictly later, the last layer's bucket first
    previous = *c.ready_after;
    CHECK(overlapped->compute[*c.ready_after].label == "bias gradient");
  }
  // The first layer's bucket is complete with the backward pass's last item before the join.
  CHECK(previous + 2 == overlapped->compute.size());
  const auto serial = train_step_cost(train_params(4, 256, 64, 1, false, false, 0));
  for (const auto& c : serial->collectives) CHECK_FALSE(c.ready_after);
  // fp32: no 16-bit copy, 20 bytes per parameter; no host copy without h2d.
  const auto fp32 = train_step_cost(train_params(2, 128, 16, 1, true, false, 25, "fp32"));
  CHECK(fp32->compute.back().bytes ==
        Approx(20.0 * static_cast<double>(train::ParamLayout::make(2, 128).total)));
  CHECK(bytes_of(*fp32, ComputeKind::host_copy) == 0.0);
  CHECK(fp32->collectives.size() == 1);  // 25 MiB holds both layers
}

TEST_CASE("train_step cost: the own reducer and impossible shapes are not modelled") {
  Params own = train_params(2, 64, 8, 1, true, true, 25);
  own.set("impl", "mgbench");
  CHECK_FALSE(train_step_cost(own));
  CHECK_FALSE(train_step_cost(train_params(0, 64, 8, 1, true, true, 25)));
  CHECK_FALSE(train_step_cost(train_params(2, 64, 8, 1, true, true, -1)));
}

TEST_CASE("gemm, allreduce, membw and h2d costs do one thing each") {
  const auto gemm = gemm_cost(Params{{"m", 1024}, {"n", 2048}, {"k", 512}, {"dtype", "bf16"}});
  REQUIRE(gemm);
  REQUIRE(gemm->compute.size() == 1);
  CHECK(gemm->compute[0].dtype == "bf16");
  CHECK(gemm->work(4) == Approx(4 * 2.0 * 1024 * 2048 * 512 / 1e12));

  const auto ar = allreduce_cost(
      Params{{"bytes", 1 << 20}, {"dtype", "fp32"}, {"impl", "nccl"}, {"inplace", false}});
  REQUIRE(ar);
  REQUIRE(ar->collectives.size() == 1);
  CHECK(ar->collectives[0].bytes == Approx(1 << 20));
  CHECK(ar->work(1) == 0.0);  // no bus bandwidth on one GPU
  CHECK(ar->work(8) == Approx((1 << 20) * 1.75 / 1e9));
  CHECK_FALSE(allreduce_cost(Params{{"bytes", 1 << 20}, {"dtype", "fp32"}, {"impl", "mgbench"}}));

  const auto triad = membw_cost(Params{{"bytes", 1 << 20}, {"impl", "triad"}});
  REQUIRE(triad);
  CHECK(triad->compute[0].bytes == Approx(3.0 * (1 << 20)));
  const auto h2d = h2d_cost(Params{{"bytes", 1 << 20}, {"direction", "h2d"}});
  CHECK(h2d->compute.size() == 1);
  const auto bidir = h2d_cost(Params{{"bytes", 1 << 20}, {"direction", "bidir"}});
  CHECK(bidir->compute.size() == 2);  // two concurrent copies: never a one-copy reference
  CHECK(bidir->work(1) == Approx(2.0 * (1 << 20) / 1e9));
}

TEST_CASE("the other collectives cost one collective of their kind, busbw as nccl-tests") {
  using mgbench::bench::collective::Kind;
  const Params p{{"bytes", 1 << 20}, {"dtype", "fp32"}, {"inplace", false}, {"root", 0},
                 {"algo", "default"}, {"proto", "default"}};
  const std::pair<Kind, CollectiveKind> modelled[] = {
      {Kind::allgather, CollectiveKind::all_gather},
      {Kind::reducescatter, CollectiveKind::reduce_scatter},
      {Kind::broadcast, CollectiveKind::broadcast},
      {Kind::reduce, CollectiveKind::reduce}};
  for (const auto& [kind, as] : modelled) {
    INFO(mgbench::bench::collective::to_string(kind));
    const auto c = collective_cost(kind, p);
    REQUIRE(c);
    REQUIRE(c->collectives.size() == 1);
    CHECK(c->collectives[0].kind == as);
    CHECK(c->collectives[0].bytes == Approx(1 << 20));
    CHECK(c->compute.empty());
    CHECK(c->work(1) == 0.0);  // no bus on one GPU
    const bool splits = kind == Kind::allgather || kind == Kind::reducescatter;
    CHECK(c->work(8) == Approx((1 << 20) * (splits ? 7.0 / 8.0 : 1.0) / 1e9));
  }
  CHECK_FALSE(collective_cost(Kind::alltoall, p));  // not in the cost model
  CHECK_FALSE(collective_cost(Kind::sendrecv, p));
  Params forced = p;
  forced.set("proto", "ll");  // a forced protocol is not the model's choice
  CHECK_FALSE(collective_cost(Kind::broadcast, forced));
  forced.set("proto", "default");
  forced.set("algo", "ring");
  CHECK_FALSE(collective_cost(Kind::allgather, forced));
  // Whole elements: 6 bytes of fp32 are one element.
  const auto odd = collective_cost(Kind::reduce, Params{{"bytes", 6}, {"dtype", "fp32"}});
  REQUIRE(odd);
  CHECK(odd->collectives[0].bytes == Approx(4));
  CHECK_FALSE(collective_cost(Kind::reduce, Params{{"bytes", 3}, {"dtype", "fp32"}}));
}

namespace {

Params transformer_params(const char* strategy, int accum, bool overlap) {
  Params p{{"model", "llama3-8b"}, {"layers", 2},     {"seq", 4096},         {"batch", 1},
           {"accum", accum},       {"dtype", "bf16"}, {"strategy", strategy}};
  if (std::string(strategy) != "tp") p.set("overlap", overlap);
  if (std::string(strategy) == "tp_dp") p.set("tp_size", 2);
  return p;
}

}  // namespace

TEST_CASE("transformer_step cost: the model's GEMMs, ddp's all-reduces ready layer by layer") {
  const auto cost = transformer_step_cost(transformer_params("ddp", 1, true));
  REQUIRE(cost.has_value());
  // 6 per token and matrix parameter (the norm weights are no GEMM) plus the full-square
  // attention GEMMs (12 L heads*head_dim S per token).
  const double n = 2.0 * 218103808, tokens = 4096;
  CHECK(gemm_flops(*cost) == Approx(6 * n * tokens + 12.0 * 2 * 4096 * 4096 * tokens));
  REQUIRE(cost->collectives.size() == 2);
  CHECK(cost->collectives[0].kind == CollectiveKind::all_reduce);
  REQUIRE(cost->collectives[0].ready_after.has_value());
  REQUIRE(cost->collectives[1].ready_after.has_value());
  CHECK(*cost->collectives[0].ready_after < *cost->collectives[1].ready_after);
  CHECK(cost->compute.back().after_communication);  // AdamW
  CHECK(cost->work(8) == 8.0 * 4096);
  const auto late = transformer_step_cost(transformer_params("ddp", 1, false));
  CHECK_FALSE(late->collectives[0].ready_after.has_value());
}

TEST_CASE("transformer_step cost: fsdp gathers and reduce-scatters every micro-step, tp not") {
  const auto cost = transformer_step_cost(transformer_params("fsdp", 2, true));
  REQUIRE(cost.has_value());
  int gathers = 0, scatters = 0;
  for (const auto& c : cost->collectives) {
    gathers += c.kind == CollectiveKind::all_gather;
    scatters += c.kind == CollectiveKind::reduce_scatter;
  }
  CHECK(gathers == 2 * 2 * 2);  // layers x (forward, backward) x micro-steps
  CHECK(scatters == 2 * 2);
  CHECK(cost->work(1) == 2.0 * 4096);
  CHECK_FALSE(transformer_step_cost(transformer_params("tp", 1, true)).has_value());
  CHECK_FALSE(transformer_step_cost(transformer_params("tp_dp", 1, true)).has_value());
}
