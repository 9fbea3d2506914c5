"""Soak tests: a long-running process stays flat (Note [Long-lived caches] in runtime/caches.h).

Each scenario runs in a child process: a warm-up, then many more iterations, with the process's
resident memory read (after gc and malloc_trim) before and after them and every registered cache's
size compared (a second window when the first grew, so that allocator arenas settling once are not
taken for a leak, which grows in both). Growth must stay under BOUND_MB; a process-wide cache must not grow at all, except
the symbol table by a few names and the per-thread autocast cache (cleared at region exit). The
iteration counts keep each scenario to a few seconds.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import ampjit as torch

BOUND_MB = 1.0

PRELUDE = textwrap.dedent('''
    import ctypes, gc, io, sys, warnings
    import ampjit as torch
    warnings.simplefilter("ignore")
    _libc = ctypes.CDLL("libc.so.6")

    def rss_mb():
        gc.collect()
        _libc.malloc_trim(0)
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 1e6

    def caches():
        return {name: size for name, size, _ in torch._C._caches()}

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 16)
            self.r = torch.nn.ReLU()
            self.b = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.b(self.r(self.a(x)))

    x = torch.randn(2, 8)
    archive = io.BytesIO()
    torch.jit.save(torch.jit.script(Net()), archive)
    archive = archive.getvalue()

    def soak(step, warmup, n, bound):
        # A second window is measured when the first grew: allocator arenas may still settle in the
        # first, while a leak grows in both.
        for _ in range(warmup):
            step()
        for window in range(2):
            before, c0 = rss_mb(), caches()
            for _ in range(n):
                step()
            after, c1 = rss_mb(), caches()
            if after - before < bound:
                break
        grown = {k: c1[k] - c0.get(k, 0) for k in c1 if c1[k] != c0.get(k, 0)}
        print("GROWTH", after - before)
        print("CACHES", grown)
''')

SCENARIOS = {
    "load_and_run": ("torch.jit.load(io.BytesIO(archive))(x)", 1500),
    "script_and_run": ("torch.jit.script(Net())(x)", 300),
    "script_a_new_function": (
        "import types\n"
        "def f(x):\n    return torch.nn.functional.relu(x) * 2\n"
        "def step():\n    torch.jit.script(types.FunctionType(f.__code__, f.__globals__))(x)", 300),
    "trace_and_run": ("torch.jit.trace(Net(), x)(x)", 300),
    "freeze": ("torch.jit.freeze(torch.jit.script(Net().eval()))(x)", 200),
    "save": ("torch.jit.save(torch.jit.script(Net()), io.BytesIO())", 300),
    "training_step_under_autocast": (
        "net = Net()\n"
        "opt = torch.optim.SGD(net.parameters(), lr=0.01)\n"
        "def step():\n"
        "    with torch.autocast('cpu'):\n"
        "        loss = net(x).float().pow(2).mean()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()", 1000),
    "failing_compile": (
        "import types\n"
        "def bad(x):\n    return x + undefined_name\n"
        "def step():\n"
        "    try:\n"
        "        torch.jit.script(types.FunctionType(bad.__code__, bad.__globals__))\n"
        "    except RuntimeError:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('compiled')", 500),
    "failing_backward": (
        "def step():\n"
        "    w = torch.randn(4, requires_grad=True)\n"
        "    y = (w * w).sum()\n"
        "    y.backward()\n"
        "    try:\n"
        "        y.backward()\n"
        "    except RuntimeError:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('second backward ran')", 2000),
    "hostile_archive": (
        "bad = archive[:len(archive) // 2] + b'\\x00' * 64 + archive[len(archive) // 2 + 64:]\n"
        "def step():\n"
        "    try:\n"
        "        torch.jit.load(io.BytesIO(bad))(x)\n"
        "    except RuntimeError:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('loaded')", 1000),
}

# Caches that may change size over a scenario: the per-thread autocast casts (cleared when the
# region exits, so normally back to 0) and a few interned names.
ALLOWED_GROWTH = {"symbols": 16, "autocast weight casts": 0}


def run_scenario(body, n, folder):
    if "def step" not in body:
        body = "def step():\n    " + body
    script = folder / "soak.py"  # a file: script reads the classes' source from it
    script.write_text(PRELUDE + body + "\nsoak(step, {}, {}, {})\n".format(max(n // 5, 20), n, BOUND_MB))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    growth = caches = None
    for line in out.stdout.splitlines():
        if line.startswith("GROWTH "):
            growth = float(line.split()[1])
        elif line.startswith("CACHES "):
            caches = eval(line[len("CACHES "):])  # a dict literal this test printed
    return growth, caches


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_memory_stays_flat(name, tmp_path):
    body, n = SCENARIOS[name]
    growth, caches = run_scenario(body, n, tmp_path)
    assert growth < BOUND_MB, "{}: resident memory grew {:.2f} MB over {} iterations".format(
        name, growth, n)
    for cache, grown in caches.items():
        assert grown <= ALLOWED_GROWTH.get(cache, 0), "{}: the cache '{}' grew by {}".format(
            name, cache, grown)


def test_every_cache_is_registered_with_its_bound_and_can_be_emptied():
    names = {c[0] for c in torch._C._caches()}
    assert {"library functions", "cpu large buffers", "autocast weight casts", "symbols",
            "warnings shown once"} <= names
    for name, size, bound in torch._C._caches():
        assert bound and size >= 0
    torch.jit.script(uses_a_functional)(torch.randn(3))  # compiles F.relu into the library cache
    assert dict((c[0], c[1]) for c in torch._C._caches())["library functions"] > 0
    torch.jit._state._clear_class_state()
    assert dict((c[0], c[1]) for c in torch._C._caches())["library functions"] == 0
    torch.cpu.empty_cache()
    assert dict((c[0], c[1]) for c in torch._C._caches())["cpu large buffers"] == 0
    with pytest.raises(ValueError, match="no cache is named 'nope'"):
        torch._C._empty_caches("nope")


def uses_a_functional(x):
    return torch.nn.functional.relu(x)
