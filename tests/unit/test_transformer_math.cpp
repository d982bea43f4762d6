// CPU tests of the transformer step's arithmetic: presets against the published configurations,
// FLOPs (MFU), bytes per strategy, memory per GPU, layouts and shards, tensor-parallel slices,
// where each strategy can run, the points and metrics.
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "training/transformer_math.hpp"
#include "training/transformer_points.hpp"
#include "training/transformer_shards.hpp"
#include "mgbench/core/error.hpp"

using namespace mgbench::bench::transformer;
using mgbench::Json;
using mgbench::Params;

namespace {

Params point(const std::string& model, const std::string& strategy) {
  Params p{{"model", model}, {"layers", 2},     {"seq", 4096},       {"batch", 2},
           {"accum", 1},     {"dtype", "bf16"}, {"strategy", strategy}};
  if (strategy == "tp_dp") p.set("tp_size", 2);
  if (strategy != "tp") p.set("overlap", true);
  return p;
}

}  // namespace

TEST_CASE("transformer presets carry the published dimensions", "[unit][transformer]") {
  const ModelShape* b1 = find_preset("llama3-1b");
  const ModelShape* b8 = find_preset("llama3-8b");
  const ModelShape* b70 = find_preset("llama3-70b");
  REQUIRE(b1 != nullptr);
  REQUIRE(b8 != nullptr);
  REQUIRE(b70 != nullptr);
  CHECK(find_preset("llama3-13b") == nullptr);
  CHECK((b1->hidden == 2048 && b1->heads == 32 && b1->kv_heads == 8 && b1->mlp == 8192));
  CHECK((b8->hidden == 4096 && b8->heads == 32 && b8->kv_heads == 8 && b8->mlp == 14336));
  CHECK((b70->hidden == 8192 && b70->heads == 64 && b70->kv_heads == 8 && b70->mlp == 28672));
  CHECK((b1->head_dim == 64 && b8->head_dim == 128 && b70->head_dim == 128));
  CHECK((b1->published_layers == 16 && b8->published_layers == 32 &&
         b70->published_layers == 80));
  // The layers' parameters (no embedding) of the published layer counts: 1B: 0.97e9 (+0.26e9
  // tied embedding = 1.24e9), 8B: 6.98e9 (+1.05e9 = 8.03e9), 70B: 68.45e9 (+2.1e9 = 70.55e9).
  CHECK(model_parameters(*b1, 16) == Approx(973.1e6).epsilon(1e-3));
  CHECK(model_parameters(*b8, 32) == Approx(6979.9e6).epsilon(1e-3));
  CHECK(model_parameters(*b70, 80) == Approx(68452.6e6).epsilon(1e-3));
  // One 8B layer exactly: 4096 x 6144 + 4096 x 4096 + 3 x 4096 x 14336 + 2 x 4096.
  CHECK(model_parameters(*b8, 1) == 218103808.0 + 8192.0);
}

TEST_CASE("transformer model FLOPs: 6 N plus the attention term", "[unit][transformer]") {
  const ModelShape& s = *find_preset("llama3-8b");
  const double n = model_parameters(s, 2);
  CHECK(model_flops_per_token(s, 2, 4096) == 6 * n + 12.0 * 2 * 4096 * 4096);
  StepConfig c = config_from_params(point("llama3-8b", "ddp"), 1);
  CHECK(step_model_flops_per_gpu(c) == model_flops_per_token(s, 2, 4096) * 2 * 4096);
  c.accum = 3;
  CHECK(step_model_flops_per_gpu(c) == 3 * model_flops_per_token(s, 2, 4096) * 2 * 4096);
}

TEST_CASE("transformer custom shapes: head dim from hidden / heads, bad ones refused",
          "[unit][transformer]") {
  const ModelShape s = custom_shape(1024, 16, 4, 2816);
  CHECK(s.head_dim == 64);
  CHECK(s.name == "custom");
  CHECK_THROWS_AS(custom_shape(1000, 16, 4, 2816), mgbench::UsageError);  // 16 does not divide
  CHECK_THROWS_AS(custom_shape(1024, 16, 3, 2816), mgbench::UsageError);  // 3 does not divide
  CHECK_THROWS_AS(custom_shape(1024, 0, 1, 2816), mgbench::UsageError);
}

TEST_CASE("transformer strategies: where each can run", "[unit][transformer]") {
  const Params ddp = point("llama3-8b", "ddp"), tp = point("llama3-8b", "tp");
  Params tpdp = point("llama3-8b", "tp_dp");
  CHECK(placement_problem(ddp, 1, 8).empty());
  CHECK(placement_problem(point("llama3-8b", "fsdp"), 3, 8).empty());
  CHECK(placement_problem(tp, 1, 8) == "tp needs at least 2 GPUs");
  CHECK(placement_problem(tp, 2, 8).empty());
  CHECK(placement_problem(tp, 8, 8).empty());
  CHECK(placement_problem(tp, 16, 8) == "tp stays within one node");
  CHECK(placement_problem(tp, 3, 8).find("does not divide the heads") != std::string::npos);
  // 70B: 8 kv heads; tensor parallelism over 16 GPUs of one node would not divide them.
  CHECK(placement_problem(point("llama3-70b", "tp"), 16, 16).find("kv heads") !=
        std::string::npos);
  CHECK(placement_problem(tpdp, 2, 8).find("two replicas") != std::string::npos);
  CHECK(placement_problem(tpdp, 4, 8).empty());
  CHECK(placement_problem(tpdp, 6, 8).empty());
  CHECK(placement_problem(tpdp, 5, 8).find("multiple of 4") != std::string::npos);
  tpdp.set("tp_size", 1);
  CHECK(placement_problem(tpdp, 4, 8) == "tp_dp needs tp_size >= 2");
  tpdp.set("tp_size", 4);
  CHECK(placement_problem(tpdp, 8, 6).find("within one node") != std::string::npos);
  CHECK_THROWS_AS(config_from_params(tp, 1), mgbench::UsageError);
  CHECK(config_from_params(tp, 4).tp == 4);
  CHECK(config_from_params(tpdp, 8).tp == 4);
  CHECK(config_from_params(tpdp, 8).dp() == 2);
  CHECK(config_from_params(ddp, 8).tp == 1);
}

TEST_CASE("transformer layout: segments aligned, the FSDP length divisible by the ranks",
          "[unit][transformer]") {
  const LocalDims d = local_dims(*find_preset("llama3-8b"), 1);
  const LayerLayout l = layer_layout(d);
  CHECK(l.at(Segment::attn_norm).offset == 0);
  CHECK(l.at(Segment::qkv).offset == 4096);
  CHECK(l.at(Segment::qkv).rows == 6144);
  CHECK(l.at(Segment::out).cols == 4096);
  CHECK(l.at(Segment::gate_up).rows == 2 * 14336);
  CHECK(l.at(Segment::down).cols == 14336);
  CHECK(l.parameters == 218103808 + 8192);
  for (const SegmentSlot& s : l.segments) CHECK(s.offset % kAlign == 0);
  const LayerLayout padded = layer_layout(local_dims(ModelShape{"t", 64, 16, 8, 8, 128, 0, 0}, 1),
                                          kAlign * 3);
  CHECK(padded.total % (kAlign * 3) == 0);
  // The pieces of a shard: the segments it cuts, clipped to it.
  const auto pieces = pieces_in(padded, 32, 300);  // norm [0, 64), padding, QKV from 128
  REQUIRE(pieces.size() == 2);
  CHECK((pieces[0].segment == Segment::attn_norm && pieces[0].begin == 32 &&
         pieces[0].end == 64));
  CHECK((pieces[1].segment == Segment::qkv && pieces[1].begin == 128 && pieces[1].end == 300));
  CHECK(pieces_in(padded, 64, 128).empty());  // padding only
}

TEST_CASE("transformer tensor-parallel slices: heads, kv heads and MLP rows in place",
          "[unit][transformer]") {
  const ModelShape s{"t", 64, 16, 8, 8, 128, 0, 0};  // 2 q heads per kv head
  // Rank 1 of 4 holds q heads 4..7, kv heads 2..3, MLP rows 32..63.
  CHECK(tp_position(s, 4, 1, Segment::qkv, 0, 5).row == 4 * 8);          // its first q row
  CHECK(tp_position(s, 4, 1, Segment::qkv, 0, 5).col == 5);
  CHECK(tp_position(s, 4, 1, Segment::qkv, 4 * 8, 0).row == 16 * 8 + 2 * 8);  // its first k row
  CHECK(tp_position(s, 4, 1, Segment::qkv, 6 * 8, 0).row == 24 * 8 + 2 * 8);  // its first v row
  CHECK(tp_position(s, 4, 1, Segment::out, 3, 0).col == 4 * 8);
  CHECK(tp_position(s, 4, 1, Segment::gate_up, 0, 0).row == 32);
  CHECK(tp_position(s, 4, 1, Segment::gate_up, 32, 0).row == 128 + 32);  // its first up row
  CHECK(tp_position(s, 4, 1, Segment::down, 0, 31).col == 63);
  // Slicing the whole model and assembling it again gives it back.
  const LayerLayout whole = full_layout(s);
  std::vector<double> model(2 * whole.total, 0.0);
  for (int l = 0; l < 2; ++l) {
    for (const SegmentSlot& seg : whole.segments) {
      for (std::size_t i = 0; i < seg.count(); ++i) {
        model[static_cast<std::size_t>(l) * whole.total + seg.offset + i] =
            1.0 + l * 1e6 + static_cast<double>(i);
      }
    }
  }
  std::vector<std::vector<double>> slices;
  for (int r = 0; r < 4; ++r) slices.push_back(slice_tp(s, 2, 4, r, model));
  CHECK(assemble_tp(s, 2, slices) == model);
  slices.pop_back();  // three slices of a 4-way split: the wrong length for 3-way
  CHECK_THROWS(assemble_tp(s, 2, slices));
  CHECK_THROWS(assemble_tp(s, 2, std::vector<std::vector<double>>{}));
}

TEST_CASE("transformer FSDP shards assemble into the whole model", "[unit][transformer]") {
  const ModelShape s{"t", 64, 16, 8, 8, 128, 0, 0};
  const LayerLayout whole = full_layout(s);
  const LayerLayout padded = layer_layout(local_dims(s, 1), kAlign * 3);
  const std::size_t shard = padded.total / 3;
  std::vector<std::vector<double>> shards(3, std::vector<double>(2 * shard));
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t l = 0; l < 2; ++l) {
      for (std::size_t i = 0; i < shard; ++i) {
        shards[r][l * shard + i] =
            1e6 * static_cast<double>(l) + static_cast<double>(r * shard + i);
      }
    }
  }
  const std::vector<double> model = assemble_fsdp(s, 2, shards);
  REQUIRE(model.size() == 2 * whole.total);
  CHECK(model[0] == 0.0);
  CHECK(model[shard] == static_cast<double>(shard));            // rank 1's first element
  CHECK(model[whole.total + 5] == 1e6 + 5);                     // layer 1
  CHECK(model[whole.total - 1] == static_cast<double>(whole.total - 1));
}

TEST_CASE("transformer bytes per step, per strategy", "[unit][transformer]") {
  const ModelShape& s = *find_preset("llama3-8b");
  const double P = static_cast<double>(layer_layout(local_dims(s, 1)).total);
  StepConfig ddp = config_from_params(point("llama3-8b", "ddp"), 8);
  CHECK(comm_volume(ddp).all_reduce_dp == 2 * 4 * P);
  CHECK(comm_volume(ddp).total() == 2 * 4 * P);
  ddp.accum = 4;  // the all-reduce once per step
  CHECK(comm_volume(ddp).all_reduce_dp == 2 * 4 * P);

  StepConfig fsdp = config_from_params(point("llama3-8b", "fsdp"), 8);
  const double Pf = static_cast<double>(layer_layout(local_dims(s, 1), kAlign * 8).total);
  CHECK(Pf >= P);
  CHECK(comm_volume(fsdp).all_gather == 2 * 2 * 2 * Pf);
  CHECK(comm_volume(fsdp).reduce_scatter == 2 * 4 * Pf);
  fsdp.accum = 2;  // every micro-step
  CHECK(comm_volume(fsdp).all_gather == 2 * 2 * 2 * 2 * Pf);

  const StepConfig tp = config_from_params(point("llama3-8b", "tp"), 4);
  // 4 all-reduces per layer of the TP group's tokens (4 GPUs x 2 sequences x 4096) x hidden.
  CHECK(comm_volume(tp).all_reduce_tp == 4.0 * 2 * 2 * (4 * 2 * 4096) * 4096);
  CHECK(comm_volume(tp).all_reduce_dp == 0);

  const StepConfig tpdp = config_from_params(point("llama3-8b", "tp_dp"), 8);
  const double Pl = static_cast<double>(layer_layout(local_dims(s, 2)).total);
  CHECK(comm_volume(tpdp).all_reduce_tp == 4.0 * 2 * 2 * (2 * 2 * 4096) * 4096);
  CHECK(comm_volume(tpdp).all_reduce_dp == 2 * 4 * Pl);
  CHECK(Pl < P / 2 + 4096 * 2 + kAlign * 6);
}

TEST_CASE("transformer memory per GPU: parameters, activations, scores", "[unit][transformer]") {
  StepConfig c = config_from_params(point("llama3-8b", "ddp"), 1);
  const double P = static_cast<double>(layout_for(c).total);
  const MemoryEstimate m = estimate_memory(c);
  CHECK(static_cast<double>(m.parameters) == 2 * P * 18);  // fp32 master, m, v, grad + bf16
  CHECK(m.gathered == 0);
  // Scores of 2 sequences x 32 heads x 4096^2 in bf16 per layer: 2 GiB each.
  const BufferSizes b = buffer_sizes(c);
  CHECK(b.probs == 2ull * 32 * 4096 * 4096);
  CHECK(m.activations > 2 * b.probs * 2);
  // FSDP on 8 GPUs: an eighth of the parameter state, two gathered layers and gradients.
  const StepConfig f = config_from_params(point("llama3-8b", "fsdp"), 8);
  const MemoryEstimate mf = estimate_memory(f);
  CHECK(mf.parameters * 8 == 2 * layout_for(f).total * 18);
  CHECK(mf.gathered == 2 * layout_for(f).total * 6 + layout_for(f).total / 8 * 4);
  // Tensor parallelism over 4: a quarter of the heads' scores, the whole TP group's tokens.
  const StepConfig t = config_from_params(point("llama3-8b", "tp"), 4);
  CHECK(buffer_sizes(t).probs == 4ull * 2 * 8 * 4096 * 4096);
}

TEST_CASE("transformer GEMM alignment: the largest power of two every offset keeps",
          "[unit][transformer]") {
  CHECK(gemm_alignment(config_from_params(point("llama3-8b", "ddp"), 1)) == 256);
  CHECK(gemm_alignment(config_from_params(point("llama3-1b", "ddp"), 1)) == 128);  // head dim 64
  StepConfig tiny = tiny_config(config_from_params(point("llama3-8b", "ddp"), 1));
  CHECK(gemm_alignment(tiny) == 16);  // head dim 8 in bf16
}

TEST_CASE("transformer tiny model: every tensor-parallel degree splits it into whole heads",
          "[unit][transformer]") {
  StepConfig cfg = config_from_params(point("llama3-8b", "ddp"), 1);
  for (int tp = 1; tp <= 8; ++tp) {
    CAPTURE(tp);
    cfg.tp = tp;
    const ModelShape tiny = tiny_config(cfg).shape;
    const LocalDims d = local_dims(tiny, tp);
    CHECK(d.q_heads * tp == tiny.heads);  // 3 of a fixed 16 heads would leave one out
    CHECK(d.kv_heads * tp == tiny.kv_heads);
    CHECK(d.mlp * tp == tiny.mlp);
    CHECK(d.group() * d.kv_heads == d.q_heads);
    // The degrees that divide 8 keep the model the tolerances were derived on.
    CHECK((tiny.heads == 16 && tiny.kv_heads == 8 && tiny.mlp == 128) == (8 % tp == 0));
  }
  cfg.tp = 7;
  CHECK(tiny_config(cfg).shape.heads == 14);
  CHECK(tiny_config(cfg).shape.mlp == 112);
}

TEST_CASE("transformer points: presets, custom dimensions, strategies' own axes",
          "[unit][transformer]") {
  mgbench::AxisValues v{{"model", {"llama3-8b"}},     {"layers", {2}},  {"seq", {4096}},
                        {"batch", {1, 2}},            {"accum", {1}},   {"dtype", {"bf16"}},
                        {"strategy", {"ddp", "tp", "tp_dp"}}, {"tp_size", {2}},
                        {"overlap", {true, false}}};
  const auto points = expand_points(v);
  // ddp: 2 overlaps x 2 batches; tp: 2 batches; tp_dp: 2 overlaps x 2 batches.
  REQUIRE(points.size() == 10);
  CHECK(points[0].integer("batch") == 1);
  CHECK(points[1].integer("batch") == 2);  // batch innermost, in the order given
  for (const auto& p : points) {
    CHECK(p.contains("overlap") == (p.text("strategy") != "tp"));
    CHECK(p.contains("tp_size") == (p.text("strategy") == "tp_dp"));
    CHECK_FALSE(p.contains("hidden"));
  }
  v["hidden"] = {1024};
  CHECK_THROWS_AS(expand_points(v), mgbench::UsageError);  // dimensions without model=custom
  v["model"] = {"custom"};
  CHECK_THROWS_AS(expand_points(v), mgbench::UsageError);  // no heads, no mlp
  v["heads"] = {16};
  v["mlp"] = {2816};
  const auto custom = expand_points(v);
  REQUIRE(custom.size() == 10);
  CHECK(custom[0].integer("kv_heads") == 16);  // defaults to heads
  v["heads"] = {7};
  CHECK_THROWS_AS(expand_points(v), mgbench::UsageError);  // 7 does not divide 1024
}

TEST_CASE("transformer metrics: tokens/s and model TFLOP/s per GPU", "[unit][transformer]") {
  const Params p = point("llama3-8b", "ddp");
  const Json m = metrics(p, 4, 0.5);
  CHECK(m["tokens_per_s"].get<double>() == 2.0 * 4096 * 4 / 0.5);
  CHECK(m["tokens_per_s_per_gpu"].get<double>() == 2.0 * 4096 / 0.5);
  CHECK(m["global_batch"].get<double>() == 8);
  const StepConfig c = config_from_params(p, 4);
  CHECK(m["model_tflops_per_gpu"].get<double>() ==
        Approx(step_model_flops_per_gpu(c) / 0.5 / 1e12));
  CHECK(m["comm_bytes_per_step"].get<double>() == comm_volume(c).total());
  CHECK(std::isnan(metrics(p, 4, 0.0)["tokens_per_s"].get<double>()));
}
