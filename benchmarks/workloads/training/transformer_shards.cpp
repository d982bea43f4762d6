// Where each rank's parameters sit in the whole model (see transformer_shards.hpp).
#include "training/transformer_shards.hpp"

#include <initializer_list>

#include "mgbench/core/error.hpp"

namespace mgbench::bench::transformer {

namespace {

std::size_t z(std::int64_t v) { return static_cast<std::size_t>(v); }

// Row of QKV row `row` of rank `rank` in the whole QKV projection.
std::size_t qkv_row(const LocalDims& whole, const LocalDims& local, int rank, std::size_t row) {
  const std::size_t hd = z(local.head_dim), r = static_cast<std::size_t>(rank);
  const std::size_t q = z(local.q_heads) * hd, kv = z(local.kv_heads) * hd;
  if (row < q) return r * q + row;
  if (row < q + kv) return z(whole.q_heads) * hd + r * kv + (row - q);
  return z(whole.q_heads + whole.kv_heads) * hd + r * kv + (row - q - kv);
}

void check_ranks(std::size_t have, std::size_t want, const char* what) {
  if (have != want || have == 0) {
    throw EnvironmentError(std::string("transformer_step: ") + what +
                           " from a wrong number of ranks");
  }
}

}  // namespace

LayerLayout full_layout(const ModelShape& shape) { return layer_layout(local_dims(shape, 1)); }

Position tp_position(const ModelShape& shape, int tp, int rank, Segment segment, std::size_t row,
                     std::size_t col) {
  const LocalDims whole = local_dims(shape, 1), local = local_dims(shape, tp);
  const auto r = static_cast<std::size_t>(rank);
  switch (segment) {
    case Segment::attn_norm:
    case Segment::mlp_norm: return {row, col};
    case Segment::qkv: return {qkv_row(whole, local, rank, row), col};
    case Segment::out: return {row, r * z(local.attn_width()) + col};
    case Segment::gate_up: {
      const std::size_t m = z(local.mlp);
      return {row < m ? r * m + row : z(whole.mlp) + r * m + (row - m), col};
    }
    case Segment::down: return {row, r * z(local.mlp) + col};
  }
  return {row, col};
}

std::vector<double> assemble_tp(const ModelShape& shape, int layers,
                                const std::vector<std::vector<double>>& locals) {
  check_ranks(locals.size(), locals.size(), "TP slices");
  const int tp = static_cast<int>(locals.size());
  const LayerLayout whole = full_layout(shape), local = layer_layout(local_dims(shape, tp));
  const std::size_t L = static_cast<std::size_t>(layers);
  std::vector<double> out(L * whole.total, 0.0);
  for (int r = 0; r < tp; ++r) {
    check_ranks(locals[static_cast<std::size_t>(r)].size(), L * local.total, "TP slices");
    for (std::size_t l = 0; l < L; ++l) {
      for (const SegmentSlot& s : local.segments) {
        const bool replicated = s.kind == Segment::attn_norm || s.kind == Segment::mlp_norm;
        if (replicated && r != 0) continue;
        const SegmentSlot& w = whole.at(s.kind);
        for (std::size_t i = 0; i < s.rows; ++i) {
          for (std::size_t j = 0; j < s.cols; ++j) {
            const Position p = tp_position(shape, tp, r, s.kind, i, j);
            out[l * whole.total + w.offset + p.row * w.cols + p.col] =
                locals[static_cast<std::size_t>(r)][l * local.total + s.offset + i * s.cols + j];
          }
        }
      }
    }
  }
  return out;
}

std::vector<double> slice_tp(const ModelShape& shape, int layers, int tp, int rank,
                             const std::vector<double>& whole_model) {
  const LayerLayout whole = full_layout(shape), local = layer_layout(local_dims(shape, tp));
  const std::size_t L = static_cast<std::size_t>(layers);
  std::vector<double> out(L * local.total, 0.0);
  for (std::size_t l = 0; l < L; ++l) {
    for (const SegmentSlot& s : local.segments) {
      const SegmentSlot& w = whole.at(s.kind);
      for (std::size_t i = 0; i < s.rows; ++i) {
        for (std::size_t j = 0; j < s.cols; ++j) {
          const Position p = tp_position(shape, tp, rank, s.kind, i, j);
          out[l * local.total + s.offset + i * s.cols + j] =
              whole_model[l * whole.total + w.offset + p.row * w.cols + p.col];
        }
      }
    }
  }
  return out;
}

std::vector<double> assemble_fsdp(const ModelShape& shape, int layers,
                                  const std::vector<std::vector<double>>& shards) {
  check_ranks(shards.size(), shards.size(), "FSDP shards");
  const std::size_t n = shards.size(), L = static_cast<std::size_t>(layers);
  const LayerLayout whole = full_layout(shape);
  const LayerLayout padded = layer_layout(local_dims(shape, 1), kAlign * n);
  const std::size_t shard = padded.total / n;
  std::vector<double> out(L * whole.total, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    check_ranks(shards[r].size(), L * shard, "FSDP shards");
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t i = 0; i < shard; ++i) {
        const std::size_t at = r * shard + i;  // in the padded layer: same segment offsets
        if (at < whole.total) out[l * whole.total + at] = shards[r][l * shard + i];
      }
    }
  }
  return out;
}

std::uint32_t gemm_alignment(const StepConfig& cfg) {
  const LocalDims d = local_dims(cfg.shape, cfg.tp);
  const std::size_t e = kernels::dtype_size(cfg.precision), T = z(cfg.local_tokens()),
                    S = z(cfg.seq), G = z(d.group());
  const std::size_t h = z(d.hidden), q = z(d.qkv_width()), a = z(d.attn_width()),
                    m = z(d.mlp), hd = z(d.head_dim);
  std::uint32_t align = 256;
  for (const std::size_t elements :
       {h, q, a, 2 * m, m, hd, G * hd, S * S, G * S * S, S * q, S * a, T * h, T * q, T * a,
        T * m, 2 * T * m}) {
    while (align > 1 && (elements * e) % align != 0) align /= 2;
  }
  return align;
}

}  // namespace mgbench::bench::transformer
