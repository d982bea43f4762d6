// Send/recv: every rank sends to its neighbour, as pipeline-parallel stages hand activations
// on (nccl-tests' sendrecv_perf ring).
//
// Measured: per op every rank r sends count = bytes / element elements to rank r+1 and receives
// as many from rank r-1 (one group of ncclSend / ncclRecv), on every rank at once.
// Point-to-point: NCCL_ALGO does not apply and NCCL_PROTO does not pick its protocol (LL below
// NCCL_P2P_LL_THRESHOLD, else Simple), so it has no algo / proto axis; no in-place variant.
// Formulas: t = slowest rank's median time per op; size = count x element; algbw = size / t / 1e9
//   GB/s; busbw = algbw: each byte crosses one link (nccl-tests; undefined on one GPU).
// One GPU: the rank sends to itself, a local copy (measured: algbw is the copy's). No in-place
//   variant.
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
    {mgbench::bench::collective::Kind::sendrecv,
     "Ring send/recv between neighbours (NCCL), nccl-tests' sizes and metrics",
     "t = slowest rank's median time per op; size = count x element; algbw = size / t / 1e9 GB/s; "
     "busbw = algbw: each byte crosses one link (nccl-tests; undefined on one GPU).",
     "One GPU: the rank sends to itself, a local copy (measured: algbw is the copy's). No in-place "
     "variant.",
     {},
     false}));
