// Host-side arithmetic of the transformer training step (see transformer_math.hpp). No CUDA.
#include "training/transformer_math.hpp"

#include <algorithm>
#include <string>

#include "mgbench/bench/dtype.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/train.hpp"

namespace mgbench::bench::transformer {

namespace {

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

std::size_t z(std::int64_t v) { return static_cast<std::size_t>(v); }

std::int64_t positive(const Params& p, const char* key) {
  const std::int64_t v = p.integer(key);
  if (v < 1) throw UsageError(std::string("transformer_step ") + key + " must be >= 1");
  return v;
}

ModelShape shape_from_params(const Params& p) {
  const std::string& model = p.text("model");
  if (model == "custom") {
    return custom_shape(positive(p, "hidden"), positive(p, "heads"), positive(p, "kv_heads"),
                        positive(p, "mlp"));
  }
  const ModelShape* preset = find_preset(model);
  if (preset == nullptr) {
    throw UsageError("unknown transformer_step model '" + model +
                     "': expected llama3-1b, llama3-8b, llama3-70b or custom");
  }
  return *preset;
}

// Why a tensor-parallel degree does not split the shape ("" when it does).
std::string tp_problem(const ModelShape& s, std::int64_t tp) {
  for (const auto& [what, value] : {std::pair<const char*, std::int64_t>{"heads", s.heads},
                                    {"kv heads", s.kv_heads},
                                    {"MLP size", s.mlp}}) {
    if (value % tp != 0) {
      return "tensor-parallel degree " + std::to_string(tp) + " does not divide the " + what +
             " (" + std::to_string(value) + ")";
    }
  }
  return "";
}

}  // namespace

const std::vector<ModelShape>& presets() {
  // name, hidden, heads, kv heads, head dim, MLP, published layers, vocab: the models'
  // published configurations (Llama 3.2 1B; Llama 3.1 8B; Llama 3.1 70B).
  static const std::vector<ModelShape> all = {
      {"llama3-1b", 2048, 32, 8, 64, 8192, 16, 128256},
      {"llama3-8b", 4096, 32, 8, 128, 14336, 32, 128256},
      {"llama3-70b", 8192, 64, 8, 128, 28672, 80, 128256},
  };
  return all;
}

const ModelShape* find_preset(const std::string& name) {
  for (const auto& p : presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

ModelShape custom_shape(std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t mlp) {
  if (hidden < 1 || heads < 1 || kv_heads < 1 || mlp < 1) {
    throw UsageError("transformer_step hidden, heads, kv_heads and mlp must be >= 1");
  }
  if (hidden % heads != 0) {
    throw UsageError("transformer_step heads (" + std::to_string(heads) +
                     ") must divide hidden (" + std::to_string(hidden) + ")");
  }
  if (heads % kv_heads != 0) {
    throw UsageError("transformer_step kv_heads (" + std::to_string(kv_heads) +
                     ") must divide heads (" + std::to_string(heads) + ")");
  }
  return ModelShape{"custom", hidden, heads, kv_heads, hidden / heads, mlp, 0, 0};
}

const std::initializer_list<std::pair<const char*, Strategy>> kStrategyNames{
    {"ddp", Strategy::ddp}, {"fsdp", Strategy::fsdp}, {"tp", Strategy::tp},
    {"tp_dp", Strategy::tp_dp}};

const char* to_string(Strategy strategy) {
  for (const auto& [name, named] : kStrategyNames) {
    if (named == strategy) return name;
  }
  return "?";
}

std::string placement_problem(const Params& params, int gpus, int gpus_per_node) {
  const Strategy strategy = params.choice<Strategy>("strategy", kStrategyNames);
  if (strategy == Strategy::ddp || strategy == Strategy::fsdp) return "";
  const ModelShape shape = shape_from_params(params);
  if (strategy == Strategy::tp) {
    if (gpus < 2) return "tp needs at least 2 GPUs";
    if (gpus > gpus_per_node) return "tp stays within one node";
    return tp_problem(shape, gpus);
  }
  const std::int64_t tp = params.integer("tp_size");
  if (tp < 2) return "tp_dp needs tp_size >= 2";
  if (gpus % tp != 0 || gpus / tp < 2) {
    return "tp_dp with tp_size " + std::to_string(tp) + " needs a multiple of " +
           std::to_string(2 * tp) + " GPUs or more (two replicas at least)";
  }
  if (gpus_per_node % tp != 0) return "tp_dp's tensor-parallel groups stay within one node";
  return tp_problem(shape, tp);
}

StepConfig config_from_params(const Params& params, int gpus) {
  StepConfig c;
  c.shape = shape_from_params(params);
  c.layers = static_cast<int>(positive(params, "layers"));
  c.seq = positive(params, "seq");
  c.batch = positive(params, "batch");
  c.accum = static_cast<int>(positive(params, "accum"));
  c.precision = dtype_from_string(params.text("dtype"), {DType::bf16, DType::fp16},
                                  "transformer_step");
  c.strategy = params.choice<Strategy>("strategy", kStrategyNames);
  c.overlap = params.contains("overlap") ? params.boolean("overlap") : true;  // none for tp
  c.gpus = gpus;
  const std::string problem = placement_problem(params, gpus, gpus);
  if (!problem.empty()) throw UsageError("transformer_step: " + problem);
  if (c.strategy == Strategy::tp) c.tp = gpus;
  if (c.strategy == Strategy::tp_dp) c.tp = static_cast<int>(params.integer("tp_size"));
  return c;
}

LocalDims local_dims(const ModelShape& shape, int tp) {
  const std::int64_t t = std::max(tp, 1);
  return LocalDims{shape.hidden, shape.heads / t, shape.kv_heads / t, shape.head_dim,
                   shape.mlp / t};
}

const char* to_string(Segment segment) {
  switch (segment) {
    case Segment::attn_norm: return "attention norm";
    case Segment::qkv: return "QKV projection";
    case Segment::out: return "output projection";
    case Segment::mlp_norm: return "MLP norm";
    case Segment::gate_up: return "gate/up projection";
    case Segment::down: return "down projection";
  }
  return "?";
}

LayerLayout layer_layout(const LocalDims& d, std::size_t pad_multiple) {
  LayerLayout layout;
  const std::size_t shapes[kSegments][2] = {
      {1, z(d.hidden)},                    {z(d.qkv_width()), z(d.hidden)},
      {z(d.hidden), z(d.attn_width())},    {1, z(d.hidden)},
      {2 * z(d.mlp), z(d.hidden)},         {z(d.hidden), z(d.mlp)}};
  std::size_t offset = 0;
  for (int i = 0; i < kSegments; ++i) {
    SegmentSlot& s = layout.segments[i];
    s.kind = static_cast<Segment>(i);
    s.offset = offset;
    s.rows = shapes[i][0];
    s.cols = shapes[i][1];
    layout.parameters += s.count();
    offset = round_up(offset + s.count(), kAlign);
  }
  layout.total = round_up(offset, std::max<std::size_t>(pad_multiple, 1));
  return layout;
}

LayerLayout layout_for(const StepConfig& cfg) {
  const std::size_t pad =
      cfg.strategy == Strategy::fsdp ? kAlign * static_cast<std::size_t>(cfg.gpus) : kAlign;
  return layer_layout(local_dims(cfg.shape, cfg.tp), pad);
}

std::vector<SegmentPiece> pieces_in(const LayerLayout& layout, std::size_t begin,
                                    std::size_t end) {
  std::vector<SegmentPiece> out;
  for (const SegmentSlot& s : layout.segments) {
    const std::size_t b = std::max(begin, s.offset), e = std::min(end, s.offset + s.count());
    if (b < e) out.push_back({s.kind, b, e});
  }
  return out;
}

double model_parameters(const ModelShape& shape, int layers) {
  return static_cast<double>(layers) *
         static_cast<double>(layer_layout(local_dims(shape, 1)).parameters);
}

double model_flops_per_token(const ModelShape& shape, int layers, std::int64_t seq) {
  return 6.0 * model_parameters(shape, layers) +
         12.0 * layers * static_cast<double>(shape.heads * shape.head_dim) *
             static_cast<double>(seq);
}

double step_model_flops_per_gpu(const StepConfig& cfg) {
  return model_flops_per_token(cfg.shape, cfg.layers, cfg.seq) *
         static_cast<double>(cfg.batch * cfg.seq) * cfg.accum;
}

CommVolume comm_volume(const StepConfig& cfg) {
  CommVolume v;
  const double L = cfg.layers, accum = cfg.accum;
  const double P = static_cast<double>(layout_for(cfg).total);
  const double e = static_cast<double>(kernels::dtype_size(cfg.precision));
  const double activation = e * static_cast<double>(cfg.local_tokens()) *
                            static_cast<double>(cfg.shape.hidden);
  switch (cfg.strategy) {
    case Strategy::ddp: v.all_reduce_dp = L * 4 * P; break;
    case Strategy::fsdp:
      v.all_gather = accum * 2 * L * e * P;
      v.reduce_scatter = accum * L * 4 * P;
      break;
    case Strategy::tp: v.all_reduce_tp = accum * 4 * L * activation; break;
    case Strategy::tp_dp:
      v.all_reduce_tp = accum * 4 * L * activation;
      v.all_reduce_dp = L * 4 * P;
      break;
  }
  return v;
}

BufferSizes buffer_sizes(const StepConfig& cfg) {
  const LocalDims d = local_dims(cfg.shape, cfg.tp);
  const LayerLayout layout = layout_for(cfg);
  const std::size_t T = z(cfg.local_tokens()), h = z(d.hidden), q = z(d.qkv_width()),
                    a = z(d.attn_width()), m = z(d.mlp), S = z(cfg.seq);
  BufferSizes b;
  b.layer_params = cfg.strategy == Strategy::fsdp ? layout.total / z(cfg.gpus) : layout.total;
  b.probs = z(cfg.local_sequences()) * z(d.q_heads) * S * S;
  b.score_scratch = z(d.kv_heads) * S * S;
  // x, n1, qkv, attention output, h1, n2, gate/up, activation
  b.per_layer_16 = T * (h + h + q + a + h + h + 2 * m + m);
  b.per_layer_32 = 2 * T;
  // two residual gradients, the norm-output gradient, attention output, qkv, gate/up, activation
  b.scratch_16 = T * (h + h + h + a + q + 2 * m + m);
  b.scratch_32 = T * h + kernels::bias_grad_workspace_floats(T, h);
  return b;
}

MemoryEstimate estimate_memory(const StepConfig& cfg) {
  const BufferSizes b = buffer_sizes(cfg);
  const LayerLayout layout = layout_for(cfg);
  const std::size_t e = kernels::dtype_size(cfg.precision), L = z(cfg.layers);
  const std::size_t T = z(cfg.local_tokens()), h = z(cfg.shape.hidden);
  MemoryEstimate m;
  m.parameters = L * b.layer_params * (4 * sizeof(float) + e);
  if (cfg.strategy == Strategy::fsdp) {
    m.gathered = 2 * layout.total * (e + sizeof(float)) + b.layer_params * sizeof(float);
  }
  // Per layer, plus the last layer's output and the target.
  m.activations = L * ((b.per_layer_16 + b.probs) * e + b.per_layer_32 * sizeof(float)) +
                  2 * T * h * e;
  m.scratch = (b.scratch_16 + b.score_scratch) * e + b.scratch_32 * sizeof(float);
  return m;
}

StepConfig tiny_config(const StepConfig& point) {
  StepConfig t = point;
  // 8 kv heads split evenly over a tensor-parallel degree of 1, 2, 4 or 8; any other degree gets
  // that many kv heads, so that every rank holds whole heads and its share of the MLP.
  const std::int64_t kv = 8 % std::max(point.tp, 1) == 0 ? 8 : point.tp;
  t.shape = ModelShape{"tiny", 64, 2 * kv, kv, 8, 16 * kv, 0, 0};
  t.layers = 3;
  t.seq = 16;
  t.batch = 1;
  return t;
}

// The tiny model's gradients pass through up to ~40 stored roundings in series (per layer: two
// norms, four projections, scores, probabilities, the attention output, the gated activation,
// the residual sums, forward and backward, over 3 layers) and fp32-accumulated GEMMs. The FP64
// reference reads the same stored inputs and weights, so only the step's own roundings count;
// with storage emulated in the reference (transformer_reference.hpp), the normwise error of the
// worst parameter tensor is 1.1e-2 to 1.4e-2 in bf16 (unit roundoff 2^-8) and 1.4e-3 to 1.9e-3 in
// fp16 (2^-11) over random models. The tolerances leave a factor 4 to 5 for what the emulation
// leaves out: tensor-parallel partial sums rounded before their all-reduce, reductions in another
// order, split-K partial sums, fast exponentials. A wrong
// layout, head mapping, mask, missing or doubled all-reduce, shard offset or micro-step gives
// errors of order 1.
double gradient_tolerance(DType precision) {
  if (precision == DType::bf16) return 6e-2;
  if (precision == DType::fp16) return 1e-2;
  throw UsageError("transformer_step gradient tolerance: bf16 or fp16 only");
}

}  // namespace mgbench::bench::transformer
