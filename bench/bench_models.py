"""Model speed, ampjit next to torch 1.13 in one run (issue 16).

The models of tests/models/ that matter for speed (torchvision 0.14's source, unchanged, with ampjit
installed as `torch`; the same weights in both libraries) at batch 1 and 8, with 1 and 2 threads, in
four variants -- eager, jit.script, jit.trace, jit.freeze of the scripted model -- each in float32 and
under CPU autocast (bfloat16: eager and scripted models called under torch.autocast("cpu"), the trace
taken under it with cache_enabled=False). Each cell times one forward under no_grad: a warm-up call,
then --rounds rounds that alternate which library goes first, each library's timed call right after
an untimed one of its own (time_pair), the median of each side. The ratio is
torch's time over ampjit's (> 1: ampjit is faster). A cell one library cannot run says why (where
only torch fails, as torch 1.13's LayerNorm under autocast does, ampjit's time is still given).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_models.py [--models resnet18,vit_b_16]
        [--batches 1,8] [--threads 1,2] [--variants eager,script,trace,frozen] [--dtypes f32,bf16]
        [--hw 64] [--rounds 5] [--channels-last] [--markdown docs/performance.md]

The per-op, per-node, compile-time and GEMM figures are bench_python_eager.py, bench_script.py
and build/bench/bench_gemm; docs/performance.md records all of them with the CPU they ran on.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))

import harness  # noqa: E402

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "convnext_tiny", "vit_b_16",
          "transformer_text", "lstm_tagger"]
VARIANTS = ["eager", "script", "trace", "frozen", "optimized"]


def make_input(lib, name, hw, batch, channels_last=False):
    if name in ("transformer_text", "lstm_tagger"):
        n = harness.TEXT_INPUT[1]
        return (lib.arange(batch * n) * 7 % 100).reshape(batch, n)
    x = lib.ones(batch, 3, hw, hw) * 0.5
    return x.contiguous(memory_format=lib.channels_last) if channels_last else x


def prepare(lib, model, x, variant, bf16):
    """The callable one cell times (building it is not timed)."""
    if variant == "eager":
        fn = model
    elif variant == "script":
        fn = lib.jit.script(model)
    elif variant == "frozen":
        fn = lib.jit.freeze(lib.jit.script(model))
    elif variant == "optimized":
        fn = lib.jit.optimize_for_inference(lib.jit.script(model))
    else:
        with lib.autocast("cpu", cache_enabled=False) if bf16 else contextlib.nullcontext():
            fn = lib.jit.trace(model, (x,), check_trace=False)
    amp = bf16 and variant != "trace"

    def call():
        with lib.autocast("cpu") if amp else contextlib.nullcontext():
            with lib.no_grad():
                return fn(x)
    return call


def time_pair(calls, rounds):
    """Median seconds of each callable over `rounds` rounds that alternate which library goes first.
    In each round a library's call is timed right after an untimed one: the first call after the
    other library ran pays for waking this one's worker threads (and for the other's threads still
    spinning on the second core), which at 2 threads on 2 cores made some cells of either library
    2 to 30 times slower than the same model called in a loop -- the case this measures."""
    for c in calls:
        c()
    times = [[] for _ in calls]
    for r in range(rounds):
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            calls[i]()
            t0 = time.perf_counter()
            calls[i]()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--hw", type=int, default=0, help="image size for the vision models (0: the harness's)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--markdown", default=None, help="write the table to this file")
    p.add_argument("--channels-last", action="store_true",
                   help="vision models and inputs in torch.channels_last (both libraries)")
    args = p.parse_args(argv)
    import ampjit
    import torch
    libs = {"ampjit": ampjit, "torch": torch}
    print("CPU: {} | ampjit kernels: {}".format(" ".join(harness.cpu_description()), ampjit._C._cpu_description()))
    print("torch {} | rounds {}{}".format(torch.__version__, args.rounds,
                                          " | channels_last" if args.channels_last else ""))
    rows = []
    header = "| model | batch | threads | variant | dtype | ampjit ms | torch ms | torch/ampjit |"
    print(header)
    for name in args.models.split(","):
        built = {}
        for lib_name in ("torch", "ampjit"):
            built[lib_name] = harness._build(lib_name, name)
        harness._no_zero_weights(built["torch"][0], torch)
        harness._copy_weights(built["torch"][0], built["ampjit"][0], ampjit)
        vision = name not in ("transformer_text", "lstm_tagger")
        if args.channels_last and vision:
            for lib_name, lib in libs.items():
                built[lib_name][0].to(memory_format=lib.channels_last)
        hw = args.hw or built["torch"][1]
        if name == "vit_b_16":
            hw = built["torch"][1]  # the model is built for its image size
        for batch in map(int, args.batches.split(",")):
            for threads in map(int, args.threads.split(",")):
                for lib in libs.values():
                    lib.set_num_threads(threads)
                for variant in args.variants.split(","):
                    for dt in args.dtypes.split(","):
                        bf16 = dt == "bf16"
                        calls, why = [], None
                        for lib_name in ("ampjit", "torch"):
                            lib = libs[lib_name]
                            model = built[lib_name][0]
                            x = make_input(lib, name, hw, batch, args.channels_last and vision)
                            try:
                                call = prepare(lib, model, x, variant, bf16)
                                call()
                                calls.append(call)
                            except Exception as e:  # noqa: BLE001 -- a cell that cannot run says why
                                why = "{}: {}".format(lib_name, str(e).splitlines()[0][:80])
                                break
                        if why and calls:  # torch cannot run it: ampjit's time alone
                            ta = time_pair(calls, args.rounds)[0]
                            row = "| {} | {} | {} | {} | {} | {:.2f} | — | {} |".format(
                                name, batch, threads, variant, dt, ta * 1e3, why)
                        elif why:
                            row = "| {} | {} | {} | {} | {} | — | — | {} |".format(
                                name, batch, threads, variant, dt, why)
                        else:
                            ta, tt = time_pair(calls, args.rounds)
                            row = "| {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:.2f} |".format(
                                name, batch, threads, variant, dt, ta * 1e3, tt * 1e3, tt / ta)
                        print(row, flush=True)
                        rows.append(row)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
