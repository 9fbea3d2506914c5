"""Traced graphs: per-node cost and tracing time, ampjit next to torch 1.13 in the same process.

1. Per node: a function of 200 chained `x = x + 1.0` on a 4-element tensor, traced, then called;
   microseconds per op (median of many calls).
2. Tracing time of that function (check_trace=False), milliseconds.
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_trace.py
"""
import statistics
import time


def chain200(x):
    for _ in range(200):
        x = x + 1.0
    return x


def per_node_us(traced, x, reps=300):
    for _ in range(30):
        traced(x)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        traced(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / 200 * 1e6


def trace_ms(mod, x, reps=30):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        mod.jit.trace(chain200, (x,), check_trace=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    import ampjit
    mods = [("ampjit", ampjit)]
    try:
        import torch
        torch.set_num_threads(1)
        mods.append(("torch", torch))
    except ImportError:
        print("(torch is not installed: ampjit only)")
    rows = {}
    for name, mod in mods:
        x = mod.ones(4)
        traced = mod.jit.trace(chain200, (x,), check_trace=False)
        assert traced(x).tolist() == [201.0] * 4
        rows[name] = (per_node_us(traced, x), trace_ms(mod, x))
    print("{:<8} {:>16} {:>16}".format("", "us/node (traced)", "trace ms"))
    for name, (us, ms) in rows.items():
        print("{:<8} {:>16.3f} {:>16.2f}".format(name, us, ms))
    if "torch" in rows:
        a, t = rows["ampjit"], rows["torch"]
        print("torch/ampjit: per node {:.1f}x, tracing {:.1f}x".format(t[0] / a[0], t[1] / a[1]))


if __name__ == "__main__":
    main()
