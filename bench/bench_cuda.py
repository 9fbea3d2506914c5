"""The CUDA backend end to end, in one run on a GPU machine:

1. Launch overhead: a function of 200 chained `x = x + 1.0` on a 4-element CUDA tensor, eager and
   traced; microseconds per op (median of many calls, synchronized after each call).
2. A small MLP (batch 256, 1024 -> 4096 -> 4096 -> 1024, ReLU) eager, scripted and traced, in
   float32 and under CUDA autocast (float16, and bfloat16); milliseconds per forward.
torch runs beside ampjit when a CUDA build of torch is importable (Debian's torch 1.13 is CPU-only,
so on these machines the table holds ampjit alone and says so).
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_cuda.py
"""
import statistics
import sys
import time


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


def run(name, mod):
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


def main():
    import ampjit
    if not ampjit.cuda.is_available():
        print("no CUDA device: " + ampjit._C._cuda_unavailable_reason())
        return 77
    results = {"ampjit": run("ampjit", ampjit)}
    try:
        import torch
        if torch.cuda.is_available():
            results["torch"] = run("torch", torch)
        else:
            print("(torch {} here has no CUDA: ampjit only)".format(torch.__version__))
    except ImportError:
        print("(torch is not installed: ampjit only)")
    print("{:<30} {:>12} {:>12} {:>8}".format("", "ampjit", "torch", "ratio"))
    for i, (label, value, unit) in enumerate(results["ampjit"]):
        t = results.get("torch")
        tv = "{:12.3f}".format(t[i][1]) if t else "{:>12}".format("-")
        ratio = "{:8.2f}".format(t[i][1] / value) if t else "{:>8}".format("-")
        print("{:<30} {:9.3f} {:<2} {} {}".format(label, value, unit, tv, ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
