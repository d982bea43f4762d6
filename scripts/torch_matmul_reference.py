#!/usr/bin/env python3
"""torch.matmul reference for the cuBLAS cross-check of the GEMM workload.

Measures C = A @ B^T with A[N,N] and B[N,N] random in [-1, 1] (the layout mgbench's gemm
uses: B given as [N, K]), 10 warm-ups then at least 50 timed calls, each timed with its own
pair of CUDA events; prints the median as one line on stdout:

    torch_bf16_8192_tflops <value>

TFLOP/s = 2 N^3 / t / 1e12. Run it in the same device session as
`mgbench sweep --gpus 1 --workloads gemm` and compare with the cublas bf16 m=n=k=8192 point
(target: within 3 %). Details (torch/CUDA versions, GPU, median ms) go to stderr.
Exit codes: 0 ok, 2 bad arguments, 4 no torch or no CUDA device.
"""
import argparse
import statistics
import sys

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192, help="M = N = K (default 8192)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50, help="timed calls (at least 50)")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="sustained mode: warm up for 1 s, then time calls for this many "
                             "seconds (steady-state clocks at the power limit, as mgbench measures)")
    args = parser.parse_args()
    if args.size < 1 or args.warmup < 0 or args.iters < 50:
        parser.error("--size must be >= 1, --warmup >= 0 and --iters >= 50")

    try:
        import torch
    except ImportError:
        print("torch_matmul_reference: torch is not installed", file=sys.stderr)
        return 4
    if not torch.cuda.is_available():
        print("torch_matmul_reference: no CUDA device", file=sys.stderr)
        return 4

    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    dtype = getattr(torch, DTYPES[args.dtype])
    n = args.size
    generator = torch.Generator(device=device)
    generator.manual_seed(1234)
    a = torch.empty((n, n), device=device, dtype=dtype).uniform_(-1.0, 1.0, generator=generator)
    b = torch.empty((n, n), device=device, dtype=dtype).uniform_(-1.0, 1.0, generator=generator)
    c = torch.empty((n, n), device=device, dtype=dtype)
    bt = b.t()  # a view: cuBLAS reads B[N, K] transposed, like mgbench's "TN" layout

    for _ in range(args.warmup):
        torch.matmul(a, bt, out=c)
    torch.cuda.synchronize(device)
    if args.seconds > 0:
        # Sustained: run until the power/clock controller has settled, then time as long as
        # mgbench samples a point, so that both see the same steady-state clocks.
        import time
        start_wall = time.monotonic()
        while time.monotonic() - start_wall < 1.0:
            for _ in range(20):
                torch.matmul(a, bt, out=c)
            torch.cuda.synchronize(device)
        probe = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        probe[0].record()
        torch.matmul(a, bt, out=c)
        probe[1].record()
        torch.cuda.synchronize(device)
        args.iters = max(args.iters, int(args.seconds / max(probe[0].elapsed_time(probe[1]) / 1e3, 1e-6)))

    events = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(args.iters)
    ]
    for start, end in events:
        start.record()
        torch.matmul(a, bt, out=c)
        end.record()
    torch.cuda.synchronize(device)

    if not torch.isfinite(c).all():
        print("torch_matmul_reference: non-finite output", file=sys.stderr)
        return 3

    times_ms = [start.elapsed_time(end) for start, end in events]
    median_s = statistics.median(times_ms) / 1e3
    tflops = 2.0 * n * n * n / median_s / 1e12
    print(
        f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
        f"{torch.cuda.get_device_name(device)}: median {median_s * 1e3:.4f} ms over "
        f"{args.iters} calls (min {min(times_ms):.4f}, max {max(times_ms):.4f})",
        file=sys.stderr,
    )
    print(f"torch_{args.dtype}_{n}_tflops {tflops:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
