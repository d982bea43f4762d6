#!/usr/bin/env python3
"""torch.matmul reference for the cuBLAS cross-check of the GEMM workload.

Measures C = A @ B^T with A[N,N] and B[N,N] random in [-1, 1] (the layout mgbench's gemm
uses: B given as [N, K]). For each dtype and size: warm-up calls, then timed calls, each
timed with its own pair of CUDA events; prints the median as one line per case on stdout:

    torch_bf16_8192_tflops <value>

dtypes: bf16, fp16 (16-bit in and out), tf32 (fp32 tensors with
torch.backends.cuda.matmul.allow_tf32 = True), fp32 (allow_tf32 = False), fp8 (e4m3 in, bf16
out, through torch._scaled_mm with unit scales and no fast accumulation, as mgbench's fp8).
TFLOP/s = 2 N^3 / t / 1e12. With --seconds S (sustained mode) each case first runs for one
second so that clocks settle at the power limit, then is timed for S seconds, as mgbench
samples a point. scripts/crosscheck.sh runs it next to `mgbench sweep --workloads gemm`.
A case torch cannot run (fp8 without torch._scaled_mm or on a GPU below sm_89) prints
`torch_<dtype>_<n>_skipped <reason>` instead. Details (versions, GPU, median ms) go to stderr.
Exit codes: 0 ok, 2 bad arguments, 3 non-finite output, 4 no torch or no CUDA device.
"""
import argparse
import statistics
import sys
import time

DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp8")


def parse_list(text, convert, name):
    try:
        values = [convert(item) for item in text.split(",") if item]
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid {name} list '{text}'")
    if not values:
        raise argparse.ArgumentTypeError(f"empty {name} list")
    return values


def dtype_list(text):
    values = parse_list(text, str, "dtype")
    for value in values:
        if value not in DTYPES:
            raise argparse.ArgumentTypeError(f"unknown dtype '{value}': expected {', '.join(DTYPES)}")
    return values


def size_list(text):
    values = parse_list(text, int, "size")
    if min(values) < 1:
        raise argparse.ArgumentTypeError("sizes must be >= 1")
    return values


def make_operation(torch, device, dtype_name, n):
    """Returns (op, reason): op() runs one GEMM and returns its output, or reason says why not."""
    generator = torch.Generator(device=device)
    generator.manual_seed(1234)

    def random(dtype):
        return torch.empty((n, n), device=device, dtype=dtype).uniform_(-1.0, 1.0, generator=generator)

    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    if dtype_name == "fp8":
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            return None, "this torch has no torch._scaled_mm"
        if torch.cuda.get_device_capability(device) < (8, 9):
            return None, "fp8 needs compute capability >= 8.9"
        a = random(torch.float32).to(torch.float8_e4m3fn)
        b = random(torch.float32).to(torch.float8_e4m3fn)
        one = torch.ones((), device=device, dtype=torch.float32)

        def op():
            out = torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            return out[0] if isinstance(out, tuple) else out  # older torch returns (out, amax)

        return op, None
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(dtype_name, torch.float32)
    a, b = random(dtype), random(dtype)
    c = torch.empty((n, n), device=device, dtype=dtype)
    bt = b.t()  # a view: cuBLAS reads B[N, K] transposed, like mgbench's "TN" layout
    return (lambda: torch.matmul(a, bt, out=c)), None


def timed_calls(torch, device, op, args):
    for _ in range(args.warmup):
        op()
    torch.cuda.synchronize(device)
    iters = args.iters
    if args.seconds > 0:
        # Sustained: run until the power/clock controller has settled, then time as long as
        # mgbench samples a point, so that both see the same steady-state clocks.
        start_wall = time.monotonic()
        while time.monotonic() - start_wall < 1.0:
            for _ in range(20):
                op()
            torch.cuda.synchronize(device)
        probe = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        probe[0].record()
        op()
        probe[1].record()
        torch.cuda.synchronize(device)
        iters = max(iters, int(args.seconds / max(probe[0].elapsed_time(probe[1]) / 1e3, 1e-6)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    out = None
    for start, end in events:
        start.record()
        out = op()
        end.record()
    torch.cuda.synchronize(device)
    return [start.elapsed_time(end) for start, end in events], out


def run_case(torch, device, dtype_name, n, args):
    op, reason = make_operation(torch, device, dtype_name, n)
    if op is None:
        print(f"torch_{dtype_name}_{n}_skipped {reason}")
        return 0
    times_ms, out = timed_calls(torch, device, op, args)
    if not torch.isfinite(out.float()).all():
        print(f"torch_matmul_reference: non-finite output ({dtype_name}, {n})", file=sys.stderr)
        return 3
    median_s = statistics.median(times_ms) / 1e3
    tflops = 2.0 * n * n * n / median_s / 1e12
    print(f"{dtype_name} n={n}: median {median_s * 1e3:.4f} ms over {len(times_ms)} calls "
          f"(min {min(times_ms):.4f}, max {max(times_ms):.4f})", file=sys.stderr)
    print(f"torch_{dtype_name}_{n}_tflops {tflops:.2f}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=size_list, default=[8192],
                        help="M = N = K, comma-separated (default 8192)")
    parser.add_argument("--dtype", type=dtype_list, default=["bf16"],
                        help=f"comma-separated, from {','.join(DTYPES)} (default bf16)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50, help="timed calls (at least 50)")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="sustained mode: warm up for 1 s, then time calls for this many "
                             "seconds (steady-state clocks at the power limit, as mgbench measures)")
    args = parser.parse_args()
    if args.warmup < 0 or args.iters < 50 or args.seconds < 0:
        parser.error("--warmup must be >= 0, --iters >= 50 and --seconds >= 0")

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
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"{torch.cuda.get_device_name(device)}", file=sys.stderr)
    for dtype_name in args.dtype:
        for n in args.size:
            rc = run_case(torch, device, dtype_name, n, args)
            if rc != 0:
                return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
