// All-to-all: every rank sends a distinct chunk to every rank, as mixture-of-experts training
// exchanges tokens.
//
// Measured: one all-to-all per op, on every rank at once: ncclAlltoAll of count elements with
// every rank (itself included) where NCCL has it (2.28 on, as nccl-tests' alltoall_perf calls
// it), else one group of ncclSend / ncclRecv with every rank.
// `bytes` is the total as nccl-tests prints it: count = bytes / element / n per peer, count x n
// sent and received per rank. Point-to-point: NCCL_ALGO does not apply and NCCL_PROTO does not
// pick its protocol (LL below NCCL_P2P_LL_THRESHOLD, else Simple), so it has no algo / proto
// axis; no in-place variant (a rank would overwrite what it still has to send).
// Formulas: t = slowest rank's median time per op; size = count x n x element (nccl-tests' size);
//   algbw = size / t / 1e9 GB/s; busbw = algbw * (n-1)/n: the (n-1)/n of its data each rank sends
//   to others (nccl-tests; undefined on one GPU).
// One GPU: the rank exchanges with itself, a local copy (measured: algbw is the copy's). No in-
//   place variant.
// Timing: default host, as nccl-tests; below 1 MiB also device-side. Cache: default cold (a
// rotation of buffer sets larger than twice the L2 cache); algbw above HBM's copy limit is
// flagged. Verification as nccl-tests, exact in every dtype (collective_point.hpp): #wrong
// counts every element that differs from its source (or exact sum) on every rank.
// Profiles: standard = bf16, 1 KiB, 64 KiB, 4 MiB and 256 MiB, out-of-place; full = all
// four dtypes, 8 B .. 1 GiB in x2 steps; not in quick's default selection
// (named with --workloads: bf16, 1 MiB and 256 MiB). Sizes below one element per rank are left
// out of a group. Shared machinery: collective_workload.hpp.
#include "collectives/collective_workload.hpp"

MGBENCH_REGISTER_WORKLOAD(mgbench::bench::nccl_collective_workload(
    {mgbench::bench::collective::Kind::alltoall,
     "All-to-all across the group (NCCL grouped send/recv), nccl-tests' sizes and metrics",
     "t = slowest rank's median time per op; size = count x n x element (nccl-tests' size); algbw "
     "= size / t / 1e9 GB/s; busbw = algbw * (n-1)/n: the (n-1)/n of its data each rank sends to "
     "others (nccl-tests; undefined on one GPU).",
     "One GPU: the rank exchanges with itself, a local copy (measured: algbw is the copy's). No "
     "in-place variant.",
     {},
     false}));
