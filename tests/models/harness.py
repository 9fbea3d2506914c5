"""The model harness (issue 15): torchvision 0.14's classification models, their source unchanged,
and the two sequence models of text_models.py (nn.Embedding + nn.TransformerEncoder; an nn.LSTM
tagger), built twice, with ampjit as `torch` (tvload.py) and with torch 1.13 itself, with the same
weights (torch's, copied through NumPy; weights torchvision initializes to zero get small random
values first, so that no output is identically zero), run in six variants, and compared.

Variants: eager, jit.script and jit.trace, each in float32 and under CPU autocast (bfloat16): the
scripted model is called under eager autocast, and the trace is taken under autocast with
cache_enabled=False. Each cell compares the output dtype and values with torch's same variant:
float32 within 1e-4 of the output's largest magnitude; bfloat16 within 5e-2 of it (bfloat16 keeps
8 significant bits, so each rounding moves a value by up to 2^-9 of itself; ampjit and torch round
at different places -- torch's oneDNN kernels accumulate in bfloat16 blocks, ampjit computes in
float32 and rounds each op's result -- and over tens of layers the two drift by a few parts in a
hundred of the output's range, which this bound allows and a wrong op exceeds). Where torch 1.13
itself fails a bfloat16 cell for want of a mixed-dtype kernel (its eager LayerNorm under CPU
autocast: "expected scalar type BFloat16 but found Float", in convnext, vit, swin and the
transformer), ampjit computes it as torch 2 does and the cell compares with the model run in float64
instead, within the bfloat16 bound (its dtype is not compared). Each passing cell also records one
forward's time, ampjit and torch (median of three after a warm-up; one thread).

    python3 tests/models/harness.py [--models resnet18,...] [--no-timing] [--markdown docs/models.md]

prints the table (and writes it as Markdown). tests/models/test_models.py runs a fast subset in CI.
"""
import argparse
import collections
import contextlib
import importlib
import os
import platform
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tvload  # noqa: E402

# (builder, torchvision module, input height/width, builder kwargs)
MODELS = [
    ("alexnet", "alexnet", 64, {}),
    ("vgg11", "vgg", 32, {}),
    ("resnet18", "resnet", 32, {}),
    ("resnet50", "resnet", 32, {}),
    ("resnext50_32x4d", "resnet", 32, {}),
    ("wide_resnet50_2", "resnet", 32, {}),
    ("squeezenet1_0", "squeezenet", 48, {}),
    ("squeezenet1_1", "squeezenet", 48, {}),
    ("densenet121", "densenet", 32, {}),
    ("inception_v3", "inception", 80, {"aux_logits": False, "init_weights": False}),
    ("googlenet", "googlenet", 32, {"aux_logits": False, "init_weights": False}),
    ("shufflenet_v2_x0_5", "shufflenetv2", 32, {}),
    ("mobilenet_v2", "mobilenetv2", 32, {}),
    ("mobilenet_v3_small", "mobilenetv3", 32, {}),
    ("mobilenet_v3_large", "mobilenetv3", 32, {}),
    ("mnasnet0_5", "mnasnet", 32, {}),
    ("efficientnet_b0", "efficientnet", 32, {}),
    ("efficientnet_v2_s", "efficientnet", 32, {}),
    ("regnet_x_400mf", "regnet", 32, {}),
    ("regnet_y_400mf", "regnet", 32, {}),
    ("convnext_tiny", "convnext", 32, {}),
    ("vit_b_16", "vision_transformer", 32, {"image_size": 32}),
    ("swin_t", "swin_transformer", 32, {}),
    ("maxvit_t", "maxvit", 224, {}),  # its partitions need 7 | size / 32
    # The sequence models of text_models.py (token ids of shape TEXT_INPUT in, not images).
    ("transformer_text", None, 0, {}),
    ("lstm_tagger", None, 0, {}),
]
TEXT_INPUT = (2, 12)
# The CI subset: small, and between them most layer kinds and script features (googlenet: NamedTuple
# returns; densenet: ModuleDict iteration and method overloads; the sequence models: attention and
# the LSTM).
FAST = ["resnet18", "mobilenet_v2", "googlenet", "densenet121", "transformer_text", "lstm_tagger"]
VARIANTS = ["eager", "eager_bf16", "script", "script_bf16", "trace", "trace_bf16"]
TOLERANCE = {"float32": 1e-4, "bfloat16": 5e-2}


class Cell:
    def __init__(self, ok, message="", err=None, bound=None, ms=None, torch_ms=None, reference=None):
        self.ok, self.message, self.err, self.bound = ok, message, err, bound
        self.ms, self.torch_ms, self.reference = ms, torch_ms, reference

    def text(self):
        if self.ok:
            speed = " {:.2f}x".format(self.torch_ms / self.ms) if self.ms and self.torch_ms else ""
            ref = " (vs float64: torch 1.13 fails)" if self.reference else ""
            return "ok {:.1e}{}{}".format(self.err, speed, ref)
        return "FAIL " + self.message


def _first_line(e):
    text = str(e).strip().splitlines()
    return "{}: {}".format(type(e).__name__, text[0] if text else "")[:140]


def _build(lib, name):
    """The model `name` of `lib` ("ampjit" or "torch"), in eval mode."""
    module_name, hw, kwargs = next((m, h, k) for n, m, h, k in MODELS if n == name)
    if module_name is None:
        path = os.path.join(HERE, "text_models.py")
        mod = tvload.load_as_ampjit(path, "ampjit_text_models") if lib == "ampjit" else \
            importlib.import_module("text_models")
        return getattr(mod, name)().eval(), hw
    if lib == "ampjit":
        tvload.install()
        mod = importlib.import_module(tvload.PACKAGE + ".models." + module_name)
    else:
        mod = importlib.import_module("torchvision.models." + module_name)
    return getattr(mod, name)(**kwargs).eval(), hw


def _no_zero_weights(model, torch):
    """Weights that torchvision initializes to zero (vit_b_16's head) would make every output 0 and
    every comparison vacuous: they get N(0, 0.02) values, the same for both libraries (they are
    copied after)."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


def _copy_weights(src, dst, ampjit):
    """torch's state dict into the ampjit model, through NumPy, with its per-module versions (some
    models convert old layouts by version in _load_from_state_dict)."""
    theirs = src.state_dict()
    state = collections.OrderedDict((k, ampjit.from_numpy(v.detach().numpy().copy())) for k, v in theirs.items())
    state._metadata = getattr(theirs, "_metadata", None)
    dst.load_state_dict(state)


def _variant(lib, model, x, variant):
    """Runs one variant; returns (output, callable for timing)."""
    if variant.startswith("eager"):
        fn = model
    elif variant.startswith("script"):
        fn = lib.jit.script(model)
    else:
        if variant.endswith("bf16"):
            with lib.autocast("cpu", cache_enabled=False):
                fn = lib.jit.trace(model, (x,), check_trace=False)
        else:
            fn = lib.jit.trace(model, (x,), check_trace=False)
    amp = variant.endswith("bf16") and not variant.startswith("trace")

    def call():
        with lib.autocast("cpu") if amp else contextlib.nullcontext():
            with lib.no_grad():
                return fn(x)

    return call(), call


def _output(out):
    if isinstance(out, (tuple, list)):
        out = out[0]
    if hasattr(out, "logits"):
        out = out.logits
    return out


def _time(call):
    call()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return sorted(times)[1] * 1e3


def run_cell(name, variant, torch, timing=True):
    import ampjit
    try:
        tmodel, hw = _build("torch", name)
        _no_zero_weights(tmodel, torch)
    except Exception as e:  # noqa: BLE001 (the table records any failure)
        return Cell(False, "torch: " + _first_line(e))
    rng = np.random.default_rng(0)
    if hw == 0:  # a text model: token ids
        import text_models
        x = rng.integers(0, text_models.VOCAB, TEXT_INPUT).astype(np.int64)
    else:
        x = rng.standard_normal((1, 3, hw, hw)).astype(np.float32)
    reference = None  # why the float64 reference replaces torch's cell, when it does
    try:
        tout, tcall = _variant(torch, tmodel, torch.from_numpy(x), variant)
        tout = _output(tout)
    except Exception as e:  # noqa: BLE001
        if not (variant.endswith("bf16") and "expected scalar type BFloat16 but found Float" in str(e)):
            return Cell(False, "torch 1.13 fails: " + _first_line(e))
        # torch 1.13's eager LayerNorm lacks the mixed-dtype kernel torch 2 has: compare with the
        # model in float64 instead (issue 15, item 3), values only.
        reference = "float64 reference: torch 1.13 fails ({})".format(_first_line(e))
        tcall = None
        with torch.no_grad():
            xd = torch.from_numpy(x if hw == 0 else x.astype(np.float64))
            tout = _output(tmodel.double()(xd))
    try:
        amodel, _ = _build("ampjit", name)
        _copy_weights(tmodel, amodel, ampjit)
        aout, acall = _variant(ampjit, amodel, ampjit.from_numpy(x), variant)
        aout = _output(aout)
    except Exception as e:  # noqa: BLE001
        if os.environ.get("AMPJIT_HARNESS_TRACEBACK"):
            traceback.print_exc()
        return Cell(False, _first_line(e))
    tdtype, adtype = str(tout.dtype).replace("torch.", ""), repr(aout.dtype).replace("torch.", "")
    if reference is not None:
        tdtype = "bfloat16"  # the bound of the variant; the dtype is not compared
    elif tdtype != adtype:
        return Cell(False, "dtype {} where torch gives {}".format(adtype, tdtype))
    want = tout.detach().float().numpy().astype(np.float64)
    got = aout.float().numpy().astype(np.float64)
    if got.shape != want.shape:
        return Cell(False, "shape {} where torch gives {}".format(got.shape, want.shape))
    scale = max(np.abs(want).max(), 1e-12)
    err = float(np.abs(got - want).max() / scale)
    bound = TOLERANCE[tdtype] if tdtype in TOLERANCE else 0.0
    if not err <= bound:
        return Cell(False, "values differ: {:.2e} of the output's range (bound {:.0e})".format(err, bound), err)
    if not timing or tcall is None:
        return Cell(True, err=err, bound=bound, reference=reference)
    return Cell(True, err=err, bound=bound, ms=_time(acall), torch_ms=_time(tcall))


def cpu_description():
    model, flags = platform.processor(), ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model.strip("x86_64"):
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    flags = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16") if f in have)
                    break
    except OSError:
        pass
    return model, flags


def markdown(results, names):
    model, flags = cpu_description()
    lines = ["# Models: torchvision 0.14 under ampjit and torch 1.13", "",
             "Generated by `python3 tests/models/harness.py --markdown docs/models.md` (see its docstring "
             "for the variants and tolerances). CPU: {} ({}); one thread.".format(model, flags), "",
             "Each cell: `ok`, the largest difference from torch's output as a fraction of its range, and "
             "torch time / ampjit time for one forward (> 1: ampjit faster); or why it fails.", "",
             "| model | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    passed = 0
    for name in names:
        row = []
        for v in VARIANTS:
            c = results[(name, v)]
            passed += c.ok
            row.append(c.text().replace("|", "\\|"))
        lines.append("| {} | {} |".format(name, " | ".join(row)))
    lines += ["", "{} of {} cells pass.".format(passed, len(names) * len(VARIANTS)), ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(n for n, _, _, _ in MODELS))
    ap.add_argument("--markdown")
    ap.add_argument("--no-timing", action="store_true", help="correctness only (no forward timings)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    names = [n for n in args.models.split(",") if n]
    results = {}
    for name in names:
        for v in VARIANTS:
            results[(name, v)] = c = run_cell(name, v, torch, timing=not args.no_timing)
            print("{:20s} {:12s} {}".format(name, v, c.text()), flush=True)
    text = markdown(results, names)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
