"""Python eager per-op overhead: 200 chained `x = x + 1.0` on a 4-element tensor, microseconds per
op, ampjit next to torch 1.13 in the same process. Also `mm` of 1024x1024 float32 under CPU
autocast (bfloat16) in GFLOP/s. Usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_python_eager.py
"""
import statistics
import sys
import time


def chain(mod, n=200):
    x = mod.ones(4)
    t0 = time.perf_counter()
    for _ in range(n):
        x = x + 1.0
    return (time.perf_counter() - t0) / n * 1e6


def per_op(mod, reps=200):
    for _ in range(20):
        chain(mod)
    return statistics.median(chain(mod) for _ in range(reps))


def mm_autocast(mod, n=1024, reps=5):
    a = mod.randn(n, n)
    b = mod.randn(n, n)
    with mod.autocast("cpu", dtype=mod.bfloat16):
        mod.mm(a, b)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            mod.mm(a, b)
            times.append(time.perf_counter() - t0)
    return 2 * n ** 3 / statistics.median(times) / 1e9


def main():
    import ampjit
    mods = [("ampjit", ampjit)]
    try:
        import torch
        mods.append(("torch", torch))
    except ImportError:
        print("(torch not installed: ampjit figures only)")
    results = {}
    for name, mod in mods:
        results[name] = {"add_us_per_op": per_op(mod)}
        if hasattr(mod, "autocast"):
            results[name]["mm_bf16_autocast_gflops"] = mm_autocast(mod)
    print("{:<32} {:>12} {:>12} {:>10}".format("benchmark", "ampjit", "torch", "ratio"))
    for key in results["ampjit"]:
        a = results["ampjit"][key]
        t = results.get("torch", {}).get(key)
        ratio = "" if t is None else ("{:.1f}x".format(t / a) if "us" in key else "{:.1f}x".format(a / t))
        print("{:<32} {:>12.3f} {:>12} {:>10}".format(key, a, "-" if t is None else "{:.3f}".format(t), ratio))


if __name__ == "__main__":
    sys.exit(main())
