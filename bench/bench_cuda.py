"""The CUDA backend end to end, in one run on a GPU machine:

1. Launch overhead: a function of 200 chained `x = x + 1.0` on a 4-element CUDA tensor, eager and
   traced; microseconds per op (median of many calls, synchronized after each call).
2. A small MLP (batch 256, 1024 -> 4096 -> 4096 -> 1024, ReLU) eager, scripted and traced, in
   float32 and under CUDA autocast (float16, and bfloat16); milliseconds per forward.
3. With `--impl torch` only: torch.mm at n = 4096 and 8192 in float16, bfloat16 and float32, timed
   as build/bench/bench_cuda_gemm times ampjit's mm and the direct cuBLAS call (CUDA events around
   each call, median of 20 after 3 warm-ups, operands uniform in [-1, 1)), so the three can stand in
   one table. torch is set to round as ampjit does: no TF32, no reduced-precision reductions.

`--impl both` (the default) runs ampjit and, when a CUDA build of torch is importable, torch beside
it in the same process. The GPU bundle (scripts/gpu-bundle.sh) runs the two sides in separate
interpreters, since ampjit's module is built for Debian's Python and the GPU machine's torch for
its own: `--impl ampjit` and `--impl torch`, each with `--json FILE` for the summary.
Exits 77 when the chosen implementation has no CUDA device.
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_cuda.py [--impl both|ampjit|torch]
                                                                    [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time

GEMM_SIZES = (4096, 8192)
GEMM_DTYPES = ("float16", "bfloat16", "float32")
GEMM_WARMUP, GEMM_REPS = 3, 20


def chain200(x):
    for _ in range(200):
        x = x + 1.0
    return x


def timed(mod, f, args, reps, warmup=10):
    for _ in range(warmup):
        f(*args)
    mod.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(*args)
        mod.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def mlp(x, w1, w2, w3):
    h = mod_relu(x @ w1)
    h = mod_relu(h @ w2)
    return h @ w3


mod_relu = None


def run(mod):
    """The chain and MLP rows for one implementation: (label, value, unit)."""
    global mod_relu
    mod_relu = mod.relu
    rows = []
    x = mod.ones(4, device="cuda")
    traced = mod.jit.trace(chain200, (x,), check_trace=False)
    assert traced(x).cpu().tolist() == [201.0] * 4
    rows.append(("200 adds, eager", timed(mod, chain200, (x,), 200) / 200 * 1e6, "us/op"))
    rows.append(("200 adds, traced", timed(mod, traced, (x,), 200) / 200 * 1e6, "us/op"))

    mod.manual_seed(0)
    args = (mod.randn(256, 1024, device="cuda"), mod.randn(1024, 4096, device="cuda") * 0.02,
            mod.randn(4096, 4096, device="cuda") * 0.02, mod.randn(4096, 1024, device="cuda") * 0.02)
    scripted = mod.jit.script(mlp)
    traced_mlp = mod.jit.trace(mlp, args, check_trace=False)
    for label, dtype in (("float32", None), ("autocast f16", mod.float16), ("autocast bf16", mod.bfloat16)):
        for kind, f in (("eager", mlp), ("scripted", scripted), ("traced", traced_mlp)):
            if dtype is None:
                g = f
            else:
                def g(*a, f=f, dtype=dtype):
                    with mod.autocast("cuda", dtype=dtype):
                        return f(*a)
            rows.append(("MLP {} {}".format(label, kind), timed(mod, g, args, 30) * 1e3, "ms"))
    return rows


def torch_gemm(torch):
    """torch.mm TFLOP/s per (dtype, n), timed as bench_cuda_gemm times ampjit and cuBLAS."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    rows = []
    for n in GEMM_SIZES:
        for name in GEMM_DTYPES:
            dtype = getattr(torch, name)
            a = torch.rand(n, n, device="cuda", dtype=dtype) * 2 - 1
            b = torch.rand(n, n, device="cuda", dtype=dtype) * 2 - 1
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            ms = []
            for i in range(GEMM_WARMUP + GEMM_REPS):
                start.record()
                torch.mm(a, b)
                stop.record()
                stop.synchronize()
                if i >= GEMM_WARMUP:
                    ms.append(start.elapsed_time(stop))
            rows.append({"dtype": name, "n": n,
                         "tflops": 2.0 * n ** 3 / (statistics.median(ms) * 1e-3) * 1e-12})
            del a, b
    return rows


def cuda_reason(name, mod):
    if name == "ampjit":
        return None if mod.cuda.is_available() else mod._C._cuda_unavailable_reason()
    return None if mod.cuda.is_available() else "torch {} sees no CUDA device".format(mod.__version__)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=("both", "ampjit", "torch"), default="both")
    parser.add_argument("--json", help="also write the results to this file as JSON")
    opts = parser.parse_args(argv)

    names = ["ampjit", "torch"] if opts.impl == "both" else [opts.impl]
    results, notes = {}, []
    for name in names:
        try:
            mod = __import__(name)
        except ImportError as e:
            if name == opts.impl:  # asked for by name: its absence is the answer
                print("no CUDA device: {} is not importable ({})".format(name, e))
                return 77
            notes.append("({} is not installed: ampjit only)".format(name))
            continue
        reason = cuda_reason(name, mod)
        if reason is not None:
            if name == names[0]:
                print("no CUDA device: " + reason)
                return 77
            notes.append("({}: ampjit only)".format(reason))
            continue
        results[name] = {"version": getattr(mod, "__version__", ""), "rows": run(mod)}
        if name == "torch" and opts.impl == "torch":
            results[name]["gemm"] = torch_gemm(mod)
            results[name]["device"] = mod.cuda.get_device_name(0)

    for note in notes:
        print(note)
    first = results[names[0]]["rows"]
    other = results.get("torch") if opts.impl == "both" else None
    print("{:<30} {:>12} {:>12} {:>8}".format("", names[0], "torch" if other else "", "ratio" if other else ""))
    for i, (label, value, unit) in enumerate(first):
        tv = "{:12.3f}".format(other["rows"][i][1]) if other else "{:>12}".format("-")
        ratio = "{:8.2f}".format(other["rows"][i][1] / value) if other else "{:>8}".format("-")
        print("{:<30} {:9.3f} {:<2} {} {}".format(label, value, unit, tv, ratio))
    for row in results.get("torch", {}).get("gemm", []):
        print("torch.mm {:<9} {:6d} {:10.1f} TFLOP/s".format(row["dtype"], row["n"], row["tflops"]))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({name: {"version": r["version"], "device": r.get("device", ""),
                              "rows": [{"label": l, "value": v, "unit": u} for l, v, u in r["rows"]],
                              "gemm": r.get("gemm", [])} for name, r in results.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
