"""Scripted functions: compile time and per-node cost, ampjit next to torch 1.13 in the same process.

1. Compile time of a generated straight-line function of 10, 100 and 500 statements (a mix of
   tensor arithmetic, activations and int bookkeeping), a fresh function object per compile so
   neither side's cache answers; milliseconds, median of several runs.
2. Per node: a straight-line chain of 200 `x = x + 1.0` on a 4-element tensor, scripted, then
   called; microseconds per op (median of many calls).
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_script.py
"""
import linecache
import statistics
import time

_counter = [0]


def make_function(n_statements, body_line):
    """A fresh function object compiled from generated source that inspect/linecache can find."""
    _counter[0] += 1
    filename = "<bench_script_{}>".format(_counter[0])
    lines = ["def generated(x, y):", "    k = 0"]
    for i in range(n_statements):
        lines.append("    " + body_line(i))
    lines.append("    return x, k")
    source = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "bench_script_generated_{}".format(_counter[0])}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["generated"], namespace


def mixed(i):
    return ("x = x * 0.5 + y", "x = torch.relu(x) - y", "k = k + {}".format(i), "x = torch.sigmoid(x) * y")[i % 4]


def compile_ms(mod, n, reps):
    times = []
    for _ in range(reps):
        fn, ns = make_function(n, mixed)
        ns["torch"] = mod
        t0 = time.perf_counter()
        mod.jit.script(fn)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def per_node_us(mod, reps=300):
    fn, ns = make_function(200, lambda i: "x = x + 1.0")
    ns["torch"] = mod
    scripted = mod.jit.script(fn)
    x = mod.ones(4)
    out, _ = scripted(x, x)
    assert out.tolist() == [201.0] * 4
    for _ in range(30):
        scripted(x, x)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        scripted(x, x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / 200 * 1e6


def main():
    import ampjit
    mods = [("ampjit", ampjit)]
    try:
        import torch
        torch.set_num_threads(1)
        mods.append(("torch", torch))
    except ImportError:
        print("(torch is not installed: ampjit only)")
    sizes = (10, 100, 500)
    rows = {}
    for name, mod in mods:
        rows[name] = [compile_ms(mod, n, 15 if n < 500 else 5) for n in sizes] + [per_node_us(mod)]
    header = ["compile {} ms".format(n) for n in sizes] + ["us/node"]
    print("{:<8}".format("") + "".join("{:>16}".format(h) for h in header))
    for name, vals in rows.items():
        print("{:<8}".format(name) + "".join("{:>16.3f}".format(v) for v in vals))
    a = rows["ampjit"]
    per_stmt = [a[i] / n * 1e3 for i, n in enumerate(sizes)]
    print("ampjit compile per statement (us): " + ", ".join("{:.1f}".format(p) for p in per_stmt))
    if "torch" in rows:
        t = rows["torch"]
        print("torch/ampjit: " + ", ".join("{} {:.1f}x".format(h, t[i] / a[i]) for i, h in enumerate(header)))


if __name__ == "__main__":
    main()
