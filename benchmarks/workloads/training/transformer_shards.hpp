#pragma once
// Where each rank's parameters sit in the whole model (transformer_math.hpp has the layouts), so
// that the verification can assemble the model and its gradients from the ranks and compare them
// with the FP64 reference, and the alignment every GEMM of a configuration keeps. Host-only.
//
// Tensor parallelism (Megatron-style): rank r of t holds q heads [r q/t, (r+1) q/t) and kv heads
// [r kv/t, (r+1) kv/t) of the QKV projection (column-parallel: rows of Wqkv), the matching
// columns of the output projection (row-parallel), rows [r m/t, (r+1) m/t) of the gate and of the
// up projection (column-parallel) and those columns of the down projection (row-parallel); the
// norm weights are replicated. FSDP: rank r of n holds elements [r P/n, (r+1) P/n) of each
// layer's flat array of padded length P.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "training/transformer_math.hpp"

namespace mgbench::bench::transformer {

// The whole-model layout of `shape` (tensor-parallel degree 1, padded to kAlign): the layout of
// the reference.
LayerLayout full_layout(const ModelShape& shape);

// Element (row, col) of `segment` of tensor-parallel rank `rank`'s layer: its (row, col) in the
// whole layer.
struct Position {
  std::size_t row = 0, col = 0;
};
Position tp_position(const ModelShape& shape, int tp, int rank, Segment segment, std::size_t row,
                     std::size_t col);

// The whole model (layers x full_layout(shape).total, padding zero) from every tensor-parallel
// rank's arrays (`locals[r]`: layers x layer_layout(local_dims(shape, tp)).total). Replicated
// norm weights are taken from rank 0.
std::vector<double> assemble_tp(const ModelShape& shape, int layers,
                                const std::vector<std::vector<double>>& locals);
// The inverse, for tests: rank `rank`'s arrays from the whole model.
std::vector<double> slice_tp(const ModelShape& shape, int layers, int tp, int rank,
                             const std::vector<double>& whole);

// The whole model from every FSDP rank's shards (`shards[r]`: layers x P/n), P the padded layer
// length of layer_layout(local_dims(shape, 1), kAlign * n).
std::vector<double> assemble_fsdp(const ModelShape& shape, int layers,
                                  const std::vector<std::vector<double>>& shards);

// The largest power of two <= 256 that divides every byte offset, stride and leading dimension
// the step's GEMMs use (weights, activation slabs, heads, score matrices): cuBLASLt picks its
// algorithms for that alignment.
std::uint32_t gemm_alignment(const StepConfig& cfg);

}  // namespace mgbench::bench::transformer
