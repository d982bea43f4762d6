// Reduce-scatter: every rank receives the sum over ranks of its slot (ncclReduceScatter, sum),
// as in sharded training's gradient reduction (FSDP / ZeRO).
//
// Measured: one reduce-scatter per op, on every rank at once. `bytes` is the total as nccl-tests
// prints it: each rank sends count x n elements, count = bytes / element / n, and receives the
// sum of its count. NCCL's algorithm and protocol are its own unless `algo` / `proto` set
// NCCL_ALGO / NCCL_PROTO for the point's communicators (ring, nvls, collnetdirect, pat; ll,
// ll128, simple).
// Formulas: t = slowest rank's median time per op; size = count x n x element (nccl-tests' size);
//   algbw = size / t / 1e9 GB/s; busbw = algbw * (n-1)/n: each rank sends the (n-1)/n of its input
//   that other ranks reduce (nccl-tests; undefined on one GPU).
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
    {mgbench::bench::collective::Kind::reducescatter,
     "Sum reduce-scatter across the group (NCCL), nccl-tests' sizes and metrics",
     "t = slowest rank's median time per op; size = count x n x element (nccl-tests' size); algbw "
     "= size / t / 1e9 GB/s; busbw = algbw * (n-1)/n: each rank sends the (n-1)/n of its input "
     "that other ranks reduce (nccl-tests; undefined on one GPU).",
     "One GPU: out of place NCCL copies the input to the output (measured: algbw is the copy's); "
     "in place it moves nothing (waived).",
     {"ring", "nvls", "collnetdirect", "pat"},
     true}));
