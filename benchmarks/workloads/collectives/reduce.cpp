// Reduce: the sum over ranks to the root (ncclReduce, sum).
//
// Measured: one reduce of count = bytes / element elements per op, on every rank at once; only
// the root's output is defined (and checked). The root is an axis (default 0; `--param
// root=all`: one point per rank). NCCL's algorithm is ring (its only one for reduce) and its
// protocol its own unless `proto` sets NCCL_PROTO for the point's communicators.
// Formulas: t = slowest rank's median time per op; size = count x element; algbw = size / t / 1e9
//   GB/s; busbw = algbw: every byte reaches the root once, whose link is the bottleneck (nccl-
//   tests; undefined on one GPU).
// One GPU: out of place NCCL copies the input to the output (measured: algbw is the copy's); in
//   place it moves nothing (waived).
// Timing: default host, as nccl-tests; below 1 MiB also device-side. Cache: default cold (a
// rotation of buffer sets larger than twice the L2 cache); algbw above HBM's copy limit is
// flagged. Verification as nccl-tests, exact in every dtype (collective_point.hpp): #wrong
// counts every element that differs from its source (or exact sum) on every rank.
// Profiles: standard = bf16, 1 KiB, 64 KiB, 4 MiB and 256 MiB, out-of-place; full = all
// four dtypes, 8 B .. 1 GiB in x2 steps, in- and out-of-place; not in quick's default selection
// (named with --workloads: bf16, 1 MiB and 256 MiB). Sizes below one element per rank are left
// out of a group. Shared machinery: collective_workload.hpp.
#include "collectives/collective_workload.hpp"

MGBENCH_REGISTER_WORKLOAD(mgbench::bench::nccl_collective_workload(
    {mgbench::bench::collective::Kind::reduce,
     "Sum reduce to a root across the group (NCCL), nccl-tests' sizes and metrics",
     "t = slowest rank's median time per op; size = count x element; algbw = size / t / 1e9 GB/s; "
     "busbw = algbw: every byte reaches the root once, whose link is the bottleneck (nccl-tests; "
     "undefined on one GPU).",
     "One GPU: out of place NCCL copies the input to the output (measured: algbw is the copy's); "
     "in place it moves nothing (waived).",
     {"ring"},
     true}));
