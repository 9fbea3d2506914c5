"""Training speed and memory, ampjit next to torch 1.13 in one run (issue 18).

One training step -- zero_grad, forward, cross-entropy loss, backward, optimizer step -- of resnet18
(torchvision 0.14's source, with ampjit installed as `torch`) and of the transformer text model of
tests/models/, with the same weights in both libraries, in float32 and under CPU autocast
(bfloat16 forward; float32 weights and gradients). resnet18 trains with SGD (momentum 0.9, weight
decay), the transformer with AdamW. Each cell runs in its own child process per library, so that
its peak memory is its own: the peak resident set of the training steps (VmHWM, reset through
/proc/self/clear_refs once the model, optimizer and data are made) minus the resident set then --
activations, gradients, optimizer state and whatever the allocators keep. Steps are timed
--steps times after --warmup untimed ones, in --repeats pairs of child processes that alternate
which library goes first (the machines this runs on share their cores with neighbors, whose load
moves single runs by 2x); the median of the repeats' medians is reported. The ratio is torch's time
over ampjit's (> 1: ampjit is faster).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_training.py [--models resnet18,transformer_text]
        [--dtypes f32,bf16] [--batch 16] [--hw 64] [--threads 2] [--steps 5] [--repeats 3] [--markdown FILE]
"""
import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))

MODELS = ["resnet18", "transformer_text"]


def rss_kb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(lib_name, name, dtype, batch, hw, threads, steps, warmup):
    """One cell in this process: prints a JSON line with the step times and the memory."""
    import numpy as np
    import harness
    import torch
    lib = torch
    if lib_name == "ampjit":
        import ampjit
        lib = ampjit
    lib.set_num_threads(threads)
    torch.manual_seed(0)
    tmodel, _ = harness._build("torch", name)
    harness._no_zero_weights(tmodel, torch)
    if lib_name == "ampjit":
        model, _ = harness._build("ampjit", name)
        harness._copy_weights(tmodel, model, lib)
    else:
        model = tmodel
    del tmodel
    model.train()
    rng = np.random.default_rng(0)
    if name in ("transformer_text", "lstm_tagger"):
        import text_models
        x = lib.from_numpy(rng.integers(0, text_models.VOCAB, (batch, harness.TEXT_INPUT[1])).astype(np.int64))
        classes = 10 if name == "transformer_text" else 17
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    else:
        x = lib.from_numpy(rng.standard_normal((batch, 3, hw, hw)).astype(np.float32))
        classes = 1000
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    y = lib.from_numpy(rng.integers(0, classes, batch).astype(np.int64))
    amp = dtype == "bf16"

    def step():
        opt.zero_grad(set_to_none=True)
        with lib.autocast("cpu") if amp else contextlib.nullcontext():
            out = model(x)
            if out.dim() == 3:  # a tagger: (batch, tokens, tags)
                out = out.mean(1)
            loss = lib.nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return float(loss)

    base = rss_kb()
    reset_peak()
    step()
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    peak = peak_kb()
    print(json.dumps({"ms": statistics.median(times) * 1e3, "peak_mb": max(peak - base, 0) / 1024.0,
                      "rss_mb": base / 1024.0}))


def run_child(lib_name, name, dtype, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", lib_name, "--models", name, "--dtypes", dtype,
           "--batch", str(args.batch), "--hw", str(args.hw), "--threads", str(args.threads),
           "--steps", str(args.steps), "--warmup", str(args.warmup)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
        return None, lines[-1][:100] if lines else "exit {}".format(r.returncode)
    return json.loads(r.stdout.strip().splitlines()[-1]), None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--hw", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--markdown", default=None)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args.child, args.models, args.dtypes, args.batch, args.hw, args.threads, args.steps,
                     args.warmup)
    import harness
    import ampjit
    import torch
    lines = ["CPU: {} | ampjit kernels: {}".format(" ".join(harness.cpu_description()),
                                                   ampjit._C._cpu_description()),
             "torch {} | batch {} | image {}x{} | threads {} | median of {} repeats of the median of {} steps"
             .format(torch.__version__, args.batch, args.hw, args.hw, args.threads, args.repeats, args.steps),
             "",
             "| model | dtype | ampjit ms/step | torch ms/step | torch/ampjit | ampjit peak MB | torch peak MB |",
             "|---|---|---|---|---|---|---|"]
    for line in lines:
        print(line)
    for name in args.models.split(","):
        for dtype in args.dtypes.split(","):
            runs = {"ampjit": [], "torch": []}
            errors = {"ampjit": None, "torch": None}
            for r in range(args.repeats):
                for lib_name in (("ampjit", "torch") if r % 2 == 0 else ("torch", "ampjit")):
                    res, err = run_child(lib_name, name, dtype, args)
                    if res:
                        runs[lib_name].append(res)
                    else:
                        errors[lib_name] = err

            def summary(lib_name):
                if not runs[lib_name]:
                    return None, errors[lib_name]
                return {"ms": statistics.median(x["ms"] for x in runs[lib_name]),
                        "peak_mb": max(x["peak_mb"] for x in runs[lib_name])}, None
            (a, a_err), (t, t_err) = summary("ampjit"), summary("torch")
            if a and t:
                row = "| {} | {} | {:.1f} | {:.1f} | {:.2f} | {:.0f} | {:.0f} |".format(
                    name, dtype, a["ms"], t["ms"], t["ms"] / a["ms"], a["peak_mb"], t["peak_mb"])
            else:
                row = "| {} | {} | {} | {} | - | {} | {} |".format(
                    name, dtype, "{:.1f}".format(a["ms"]) if a else "fails: " + a_err,
                    "{:.1f}".format(t["ms"]) if t else "fails: " + t_err,
                    "{:.0f}".format(a["peak_mb"]) if a else "-", "{:.0f}".format(t["peak_mb"]) if t else "-")
            print(row, flush=True)
            lines.append(row)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
