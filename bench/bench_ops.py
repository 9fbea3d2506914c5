"""Per-op speed of the ops added for issue 30, ampjit next to torch 1.13 in one process.

The ops come in the order the issue ranks them by use in model code. Each runs on the same
model-sized inputs (float32 unless the op takes integers; made with NumPy, handed to each library
with from_numpy on its own copy) in both libraries. Before timing, the two results are compared:
exactly for integer and bool results, with np.allclose for floating ones, by shape, dtype, mean and
std for random ones (normal); sort, argsort and topk indices are checked through the values they
pick, since ties may order differently. A result that differs is marked DIFF; an op ampjit does not have
is recorded as missing. Timing: warm-up calls, then --reps samples that alternate which library
goes first, each sample one call (or a loop of calls long enough to measure, for ops that take
microseconds) right after an untimed call of its own; the median per call is reported. The ratio
is torch's time over ampjit's (> 1: ampjit is faster); the geometric mean is over the ops both
libraries ran.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_ops.py [--ops sort,F.pad] [--reps 30]
        [--threads 2] [--json FILE]

docs/performance.md records a run with the CPU it ran on.
"""
import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

# ---- inputs -------------------------------------------------------------------------------------

def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def uniform(rng, lo, hi, *shape):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def with_specials(rng, n):
    """n float32 values, about 1% of them nan, +inf or -inf."""
    x = randn(rng, n)
    pick = rng.random(n)
    x[pick < 0.01] = np.nan
    x[(pick >= 0.01) & (pick < 0.02)] = np.inf
    x[(pick >= 0.02) & (pick < 0.03)] = -np.inf
    return x


def unique_rows_index(rng, rows, cols, k):
    """An int64 (rows, k) index whose rows hold k distinct columns of `cols`, so that scatter has
    no duplicate targets and its result does not depend on write order."""
    return np.argsort(rng.random((rows, cols)), axis=1)[:, :k].astype(np.int64)


def hann(n):
    """torch.hann_window(n) (periodic)."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)


# ---- the ops ------------------------------------------------------------------------------------
# Each op: name, make(rng) -> dict of inputs (NumPy arrays become tensors, anything else is passed
# as is), run(torch, F, a) -> result, check ("close", "exact", "random", "picked"), and optionally
# reset(a) (run untimed before each timed call, for in-place ops that change their input) and a
# tolerance. "picked": (values, indices) where indices may differ on ties: values compared exactly,
# indices through the values of a["x"] they select.

OPS = []


def op(name, make, run, check="close", reset=None, rtol=1e-5, atol=1e-6, note=""):
    OPS.append(dict(name=name, make=make, run=run, check=check, reset=reset, rtol=rtol, atol=atol,
                    note=note))


op("linspace", lambda r: {},
   lambda t, F, a: t.linspace(-3.0, 7.0, 1000000), atol=1e-5)
op("sort", lambda r: {"x": randn(r, 256, 1024)},
   lambda t, F, a: t.sort(a["x"], dim=-1), check="picked")
op("log10", lambda r: {"x": uniform(r, 1e-3, 1e3, 1000000)},
   lambda t, F, a: t.log10(a["x"]))
op("stft", lambda r: {"x": randn(r, 8, 16000), "w": hann(400)},
   lambda t, F, a: t.stft(a["x"], 400, hop_length=160, window=a["w"], return_complex=False),
   rtol=1e-4, atol=1e-4, note="real layout")
op("topk", lambda r: {"x": randn(r, 256, 4096)},
   lambda t, F, a: t.topk(a["x"], 16, dim=-1), check="picked")
op("log2", lambda r: {"x": uniform(r, 1e-3, 1e3, 1000000)},
   lambda t, F, a: t.log2(a["x"]))
op("Tensor.unfold", lambda r: {"x": randn(r, 64, 16000)},
   lambda t, F, a: a["x"].unfold(-1, 400, 160), check="exact", note="view")
op("atan", lambda r: {"x": randn(r, 1000000)},
   lambda t, F, a: t.atan(a["x"]))
op("normal", lambda r: {},
   lambda t, F, a: t.normal(0.0, 1.0, size=(1000, 1000)), check="random")
op("repeat_interleave", lambda r: {"x": randn(r, 16384, 16)},
   lambda t, F, a: t.repeat_interleave(a["x"], 4, dim=0), check="exact")
op("trace", lambda r: {"x": randn(r, 2048, 2048)},
   lambda t, F, a: t.trace(a["x"]), rtol=1e-4, atol=1e-3, note="2048 reads")
op("count_nonzero", lambda r: {"x": np.where(r.random((1000, 1000)) < 0.5, 0, 1).astype(np.float32)},
   lambda t, F, a: t.count_nonzero(a["x"], dim=1), check="exact")
op("isfinite", lambda r: {"x": with_specials(r, 1000000)},
   lambda t, F, a: t.isfinite(a["x"]), check="exact")
op("unique", lambda r: {"x": r.integers(0, 10000, 200000).astype(np.int64)},
   lambda t, F, a: t.unique(a["x"]), check="exact")
op("trunc", lambda r: {"x": uniform(r, -100, 100, 1000000)},
   lambda t, F, a: t.trunc(a["x"]), check="exact")
op("where", lambda r: {"c": r.random(1000000) < 0.5, "x": randn(r, 1000000), "y": randn(r, 1000000)},
   lambda t, F, a: t.where(a["c"], a["x"], a["y"]), check="exact")
op("nonzero", lambda r: {"x": np.where(r.random((1000, 1000)) < 0.1, 1, 0).astype(np.float32)},
   lambda t, F, a: t.nonzero(a["x"]), check="exact")
op("masked_select", lambda r: {"x": randn(r, 1000000), "m": r.random(1000000) < 0.5},
   lambda t, F, a: t.masked_select(a["x"], a["m"]), check="exact")
op("scatter", lambda r: {"x": np.zeros((4096, 256), np.float32), "i": unique_rows_index(r, 4096, 256, 64),
                         "s": randn(r, 4096, 64)},
   lambda t, F, a: t.scatter(a["x"], 1, a["i"], a["s"]), check="exact")
op("index_put_", lambda r: {"x": randn(r, 100000, 16), "i": r.permutation(100000)[:20000].astype(np.int64),
                            "v": randn(r, 20000, 16)},
   lambda t, F, a: a["x"].index_put_((a["i"],), a["v"]), check="exact")
op("argsort", lambda r: {"x": randn(r, 256, 1024)},
   lambda t, F, a: t.argsort(a["x"], dim=-1), check="picked")
op("cumsum_", lambda r: {"x": randn(r, 1000, 1000), "src": randn(r, 1000, 1000)},
   lambda t, F, a: a["x"].cumsum_(1), reset=lambda a: a["x"].copy_(a["src"]), rtol=1e-4, atol=1e-4)
op("tile", lambda r: {"x": randn(r, 512, 512)},
   lambda t, F, a: t.tile(a["x"], (2, 2)), check="exact")
op("outer", lambda r: {"a": randn(r, 1024), "b": randn(r, 1024)},
   lambda t, F, a: t.outer(a["a"], a["b"]))
op("cross", lambda r: {"a": randn(r, 262144, 3), "b": randn(r, 262144, 3)},
   lambda t, F, a: t.linalg.cross(a["a"], a["b"], dim=-1))
op("diag", lambda r: {"x": randn(r, 1024)},
   lambda t, F, a: t.diag(a["x"]), check="exact")
op("erfinv", lambda r: {"x": uniform(r, -0.999, 0.999, 1000000)},
   lambda t, F, a: t.erfinv(a["x"]), rtol=1e-5, atol=1e-5)
op("expm1", lambda r: {"x": uniform(r, -5, 5, 1000000)},
   lambda t, F, a: t.expm1(a["x"]))
op("lerp", lambda r: {"a": randn(r, 1000000), "b": randn(r, 1000000)},
   lambda t, F, a: t.lerp(a["a"], a["b"], 0.3))
op("isnan", lambda r: {"x": with_specials(r, 1000000)},
   lambda t, F, a: t.isnan(a["x"]), check="exact")
op("isinf", lambda r: {"x": with_specials(r, 1000000)},
   lambda t, F, a: t.isinf(a["x"]), check="exact")
op("nan_to_num", lambda r: {"x": with_specials(r, 1000000)},
   lambda t, F, a: t.nan_to_num(a["x"]), check="exact")
op("bitwise_and", lambda r: {"a": r.integers(0, 1 << 30, 1000000), "b": r.integers(0, 1 << 30, 1000000)},
   lambda t, F, a: t.bitwise_and(a["a"], a["b"]), check="exact")
op("F.one_hot", lambda r: {"y": r.integers(0, 64, 16384).astype(np.int64)},
   lambda t, F, a: F.one_hot(a["y"], 64), check="exact")
op("F.interpolate", lambda r: {"x": randn(r, 4, 32, 56, 56)},
   lambda t, F, a: F.interpolate(a["x"], scale_factor=2, mode="bilinear", align_corners=False),
   note="bilinear x2")
op("F.pad", lambda r: {"x": randn(r, 8, 64, 56, 56)},
   lambda t, F, a: F.pad(a["x"], (1, 1, 1, 1), mode="reflect"), check="exact", note="reflect")
op("max_pool1d", lambda r: {"x": randn(r, 16, 64, 1000)},
   lambda t, F, a: F.max_pool1d(a["x"], 3, stride=2), check="exact")
op("max_pool3d", lambda r: {"x": randn(r, 2, 16, 16, 56, 56)},
   lambda t, F, a: F.max_pool3d(a["x"], 3, stride=2, padding=1), check="exact")
op("adaptive_max_pool2d", lambda r: {"x": randn(r, 8, 64, 56, 56)},
   lambda t, F, a: F.adaptive_max_pool2d(a["x"], (7, 7)), check="exact")
op("F.unfold", lambda r: {"x": randn(r, 4, 32, 28, 28)},
   lambda t, F, a: F.unfold(a["x"], 3, padding=1), check="exact")
op("F.fold", lambda r: {"x": randn(r, 4, 32 * 9, 28 * 28)},
   lambda t, F, a: F.fold(a["x"], (28, 28), 3, padding=1))
op("F.grid_sample", lambda r: {"x": randn(r, 4, 32, 56, 56), "g": uniform(r, -1, 1, 4, 56, 56, 2)},
   lambda t, F, a: F.grid_sample(a["x"], a["g"], mode="bilinear", align_corners=False),
   note="bilinear")
op("pixel_shuffle", lambda r: {"x": randn(r, 8, 64, 56, 56)},
   lambda t, F, a: F.pixel_shuffle(a["x"], 2), check="exact")


# ---- comparing ----------------------------------------------------------------------------------

def to_numpy(t):
    """A result as NumPy (tuples element-wise)."""
    if isinstance(t, (tuple, list)):
        return tuple(to_numpy(e) for e in t)
    return t.detach().numpy() if hasattr(t, "numpy") else np.asarray(t)


def dtype_name(t):
    if isinstance(t, (tuple, list)):
        return tuple(dtype_name(e) for e in t)
    return str(t.dtype).replace("torch.", "") if hasattr(t, "dtype") else type(t).__name__


def compare(spec, mine, ref, x=None):
    """'' when ampjit's result `mine` matches torch's `ref`, else what differs."""
    if dtype_name(mine) != dtype_name(ref):
        return "dtype {} vs {}".format(dtype_name(mine), dtype_name(ref))
    a, b = to_numpy(mine), to_numpy(ref)
    if spec["check"] == "random":  # the same distribution: shape, and mean and std within 0.01
        if a.shape != b.shape:
            return "shape {} vs {}".format(a.shape, b.shape)
        if abs(a.mean() - b.mean()) > 0.01 or abs(a.std() - b.std()) > 0.01:
            return "mean/std {:.3f}/{:.3f} vs {:.3f}/{:.3f}".format(a.mean(), a.std(), b.mean(), b.std())
        return ""
    if spec["check"] == "picked":
        if not isinstance(a, tuple):  # argsort: indices only
            a, b = (np.take_along_axis(x, a, -1), a), (np.take_along_axis(x, b, -1), b)
        if a[0].shape != b[0].shape or not np.array_equal(a[0], b[0]):
            return "values differ"
        if a[1].shape != b[1].shape or not np.array_equal(np.take_along_axis(x, a[1], -1), a[0]):
            return "indices pick other values"
        return ""
    us, vs = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    if len(us) != len(vs):
        return "{} results vs {}".format(len(us), len(vs))
    for u, v in zip(us, vs):
        if np.shape(u) != np.shape(v):
            return "shape {} vs {}".format(np.shape(u), np.shape(v))
        if spec["check"] == "exact" or not np.issubdtype(np.asarray(u).dtype, np.inexact):
            same = np.array_equal(u, v, equal_nan=np.issubdtype(np.asarray(u).dtype, np.inexact))
        else:
            same = np.allclose(u, v, rtol=spec["rtol"], atol=spec["atol"], equal_nan=True)
        if not same:
            err = np.nanmax(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64)))
            return "values differ (max abs diff {:.3g})".format(err)
    return ""


# ---- timing -------------------------------------------------------------------------------------

def inputs_for(mod, arrays):
    return {k: mod.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in arrays.items()}


def loop_count(call, reset):
    """Calls per sample: 1, or enough to last about 0.2 ms for ops that take microseconds."""
    if reset is not None:
        return 1
    t0 = time.perf_counter()
    call()
    dt = time.perf_counter() - t0
    return 1 if dt >= 2e-4 else min(1000, int(2e-4 / max(dt, 1e-7)) + 1)


def sample(call, reset, n):
    """Seconds per call of n calls, timed right after an untimed call of the same library: the
    first call after the other library ran pays for waking this one's worker threads (both share
    libgomp; docs/performance.md, Models), which is not the op's cost."""
    if reset is not None:
        reset()
    call()
    if reset is not None:
        reset()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n


def bench_op(spec, mods, reps, warmup):
    """One op's row: the median ms per call of each library (None where it failed, with LIB_error
    saying why), the ratio, and `check` (what differs, '' when the results agree)."""
    arrays = spec["make"](np.random.default_rng(0))
    res = {"op": spec["name"], "note": spec["note"]}
    calls, results = {}, {}
    for name, (mod, F) in mods.items():
        a = inputs_for(mod, arrays)
        call = (lambda a=a, mod=mod, F=F: spec["run"](mod, F, a))
        reset = (lambda a=a: spec["reset"](a)) if spec["reset"] else None
        try:
            if reset:
                reset()
            results[name] = call()
            calls[name] = (call, reset)
        except Exception as e:  # noqa: BLE001 -- a missing or failing op is reported, not fatal
            missing = isinstance(e, (AttributeError, NotImplementedError)) or "unknown op" in str(e).lower()
            res[name + "_error"] = ("missing: " if missing else "error: ") + "{}: {}".format(
                type(e).__name__, str(e).splitlines()[0][:160] if str(e) else "")
    if "ampjit" in results and "torch" in results:
        try:
            res["check"] = compare(spec, results["ampjit"], results["torch"], arrays.get("x"))
        except Exception as e:  # noqa: BLE001
            res["check"] = "compare failed: {}: {}".format(type(e).__name__, e)
    del results
    loops = {}
    for name, (call, reset) in calls.items():
        for _ in range(warmup):
            if reset:
                reset()
            call()
        loops[name] = loop_count(call, reset)
    times = {name: [] for name in calls}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for i in range(reps):
            order = list(calls) if i % 2 == 0 else list(reversed(list(calls)))
            for name in order:
                call, reset = calls[name]
                times[name].append(sample(call, reset, loops[name]))
    finally:
        if gc_was:
            gc.enable()
    for name in mods:
        res[name] = statistics.median(times[name]) * 1e3 if times.get(name) else None
    if res.get("ampjit") and res.get("torch"):
        res["ratio"] = res["torch"] / res["ampjit"]
    return res


# ---- report -------------------------------------------------------------------------------------

def cpu_line(threads):
    """The CPU model, which of avx2/avx512f/avx512_bf16/amx* /proc/cpuinfo lists, and the threads."""
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    amx = sorted(f for f in flags if f.startswith("amx"))
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16") if f in flags] + amx
    missing = [f for f in ("avx2", "avx512f", "avx512_bf16") if f not in flags] + ([] if amx else ["amx"])
    return "CPU: {} ({} CPUs); ISA: {}{}; threads: {}".format(
        model, os.cpu_count(), " ".join(isa) or "none of avx2/avx512f/avx512_bf16/amx",
        "; no " + " ".join(missing) if missing else "", threads)


def fmt_ms(v):
    return "-" if v is None else "{:.3f}".format(v)


def status_of(r):
    if "ampjit_error" in r:
        return r["ampjit_error"]
    if "torch_error" in r:
        return "torch " + r["torch_error"]
    return "DIFF: " + r["check"] if r.get("check") else "ok"


def print_table(rows, header):
    print(header)
    print("{:<28} {:>10} {:>10} {:>7}  {}".format("op", "ampjit ms", "torch ms", "ratio", "check"))
    for r in rows:
        op_name = r["op"] + (" ({})".format(r["note"]) if r["note"] else "")
        ratio = "{:.2f}".format(r["ratio"]) if r.get("ratio") else "-"
        print("{:<28} {:>10} {:>10} {:>7}  {}".format(op_name, fmt_ms(r["ampjit"]), fmt_ms(r["torch"]), ratio,
                                                     status_of(r)))
    ratios = [r["ratio"] for r in rows if r.get("ratio")]
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print("geometric mean of {} ratios: {:.2f}".format(len(ratios), gm))
        return gm
    return None


def import_ampjit(tries=10):
    """ampjit from build/python; a build that is relinking _C makes the import fail for a while."""
    for attempt in range(tries):
        try:
            import ampjit
            import ampjit.nn.functional
            return ampjit
        except (ImportError, AttributeError, OSError) as e:
            if attempt == tries - 1:
                raise
            print("ampjit import failed ({}: {}); retrying in 60 s".format(type(e).__name__, e), file=sys.stderr)
            for name in [m for m in sys.modules if m == "ampjit" or m.startswith("ampjit.")]:
                del sys.modules[name]
            time.sleep(60)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", help="comma-separated subset of: " + ",".join(s["name"] for s in OPS))
    p.add_argument("--reps", type=int, default=30, help="timed samples per op and library (median)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--json", help="also write the results to this file as JSON")
    args = p.parse_args()

    specs = OPS
    if args.ops:
        wanted = [w.strip() for w in args.ops.split(",") if w.strip()]
        names = {s["name"].lower(): s for s in OPS}
        unknown = [w for w in wanted if w.lower() not in names]
        if unknown:
            p.error("unknown op(s): {} (known: {})".format(", ".join(unknown),
                                                           ", ".join(s["name"] for s in OPS)))
        specs = [names[w.lower()] for w in wanted]

    # torch 1.13 warns that stft's return_complex=False is deprecated; ampjit has no complex dtype,
    # so the real layout is what both libraries can return.
    warnings.filterwarnings("ignore", message=".*return_complex.*")
    ampjit = import_ampjit()
    import torch
    import torch.nn.functional
    mods = {"ampjit": (ampjit, ampjit.nn.functional), "torch": (torch, torch.nn.functional)}
    ampjit.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    threads = "{} (ampjit {}, torch {})".format(args.threads, ampjit.get_num_threads(), torch.get_num_threads())
    header = "{}\nampjit {} vs torch {}; median of {} samples; ratio = torch / ampjit (> 1: ampjit faster)".format(
        cpu_line(threads), getattr(ampjit, "__version__", "?"), torch.__version__, args.reps)

    rows = []
    for spec in specs:
        rows.append(bench_op(spec, mods, args.reps, args.warmup))
        if sys.stderr.isatty():
            print(".", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    gm = print_table(rows, header)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "threads": args.threads, "reps": args.reps,
                       "geomean": gm, "ops": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
