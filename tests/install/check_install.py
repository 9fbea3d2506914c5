"""The installed C++ runtime (Note [Installed ampjit]): installs the build into a fresh prefix, builds
examples/cpp against it with find_package(ampjit), and runs it on checkpoints written by ampjit's
torch.save and, where PyTorch is installed, by torch 1.13's, and on TorchScript modules that ampjit
and torch 1.13 scripted, traced and saved; its float32 and autocast outputs must be the Python
computation's.
Usage: check_install.py BUILD_DIR SOURCE_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit("check_install: {} failed ({}):\n{}\n{}".format(" ".join(cmd), done.returncode,
                                                                done.stdout, done.stderr))
    return done.stdout


def parse(out):
    lines = {}
    for line in out.strip().splitlines():
        dtype, *values = line.split()
        lines.setdefault(dtype, np.array([float(v) for v in values]))
    return lines


SCRIPTED_SOURCE = """
import torch


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3, padding=1), torch.nn.BatchNorm2d(6),
                                            torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        y = self.features(x)
        return self.head(torch.flatten(y, 1)), y.mean()
"""


def _import(work, name, source):
    import importlib.util
    src = os.path.join(work, name + ".py")
    with open(src, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_torchscript(example, work):
    """run_torchscript on a small CNN that ampjit scripted and traced and saved, against ampjit's
    outputs, and on the same CNN scripted and traced by torch 1.13, against torch's: float32 and
    under autocast."""
    import ampjit
    exe = os.path.join(example, "run_torchscript")
    amod = _import(work, "small_net_a", SCRIPTED_SOURCE.replace("import torch\n", "import ampjit as torch\n", 1))
    ampjit.manual_seed(0)
    anet = amod.SmallNet().eval()
    ax = ampjit.randn(2, 3, 8, 8)
    a_input = os.path.join(work, "a_input.pt")
    ampjit.save(ax, a_input)
    for kind, compiled in (("scripted", ampjit.jit.script(anet)), ("traced", ampjit.jit.trace(anet, ax))):
        path = os.path.join(work, "ampjit_" + kind + ".pt")
        compiled.save(path)
        out = run([exe, path, a_input]).strip().splitlines()
        want32 = [t.detach().numpy().ravel() for t in compiled(ax)]
        with ampjit.autocast("cpu"):
            want16 = [t.detach().float().numpy().ravel() for t in compiled(ax)]
        rows = [np.array([float(v) for v in line.split()[1:]]) for line in out[:-1]]
        for got, want in zip(rows, want32 + want16):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        print("check_install: ampjit's {} module runs from C++ with ampjit's outputs".format(kind))
    try:
        import torch
    except ImportError:
        print("check_install: PyTorch is not installed: torch's TorchScript modules are not checked")
        return
    mod = _import(work, "small_net", SCRIPTED_SOURCE)
    torch.manual_seed(0)
    net = mod.SmallNet().eval()
    x = torch.randn(2, 3, 8, 8)
    input_path = os.path.join(work, "input.pt")
    torch.save(x, input_path)
    for kind, compiled in (("scripted", torch.jit.script(net)), ("traced", torch.jit.trace(net, x))):
        path = os.path.join(work, kind + ".pt")
        compiled.save(path)
        out = run([exe, path, input_path]).strip().splitlines()
        with torch.no_grad():
            want32 = [t.detach().numpy().ravel() for t in compiled(x)]
            with torch.autocast("cpu"):
                want16 = [t.detach().float().numpy().ravel() for t in compiled(x)]
        rows = [(line.split()[0], np.array([float(v) for v in line.split()[1:]])) for line in out[:-1]]
        assert [r[0] for r in rows] == ["float32", "float32", "bfloat16", "bfloat16"], out
        for (_, got), want in zip(rows[:2], want32):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        for (_, got), want in zip(rows[2:], want16):
            np.testing.assert_allclose(got, want, rtol=5e-2, atol=5e-2 * float(np.abs(want).max()))
        count = sum(p.numel() for p in net.parameters())
        assert out[-1] == "parameters {}".format(count), out[-1]
        print("check_install: torch's {} module runs from C++ with torch's outputs".format(kind))


def main():
    build, source = map(os.path.abspath, sys.argv[1:3])
    sys.path.insert(0, os.path.join(build, "python"))
    import ampjit
    work = tempfile.mkdtemp(prefix="ampjit-install-")
    try:
        prefix = os.path.join(work, "prefix")
        run(["cmake", "--install", build, "--prefix", prefix])
        for must in ("lib/cmake/ampjit/ampjitConfig.cmake", "include/ampjit/runtime/ops.h",
                     "include/ampjit/serialization/load.h",
                     "include/ampjit/serialization/jit_load.h", "include/ampjit/runtime/ops/all_ops.def"):
            if not os.path.exists(os.path.join(prefix, must)):
                sys.exit("check_install: the install lacks " + must)
        example = os.path.join(work, "example")
        run(["cmake", "-S", os.path.join(source, "examples", "cpp"), "-B", example, "-G", "Ninja",
             "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"])
        run(["cmake", "--build", example])
        exe = os.path.join(example, "linear_from_checkpoint")

        ampjit.manual_seed(0)
        ckpt = {"weight": ampjit.randn(3, 5), "bias": ampjit.randn(3), "input": ampjit.randn(2, 5)}
        writers = [("ampjit", ampjit, ckpt)]
        try:
            import torch
            writers.append(("torch", torch, {k: torch.from_numpy(v.numpy().copy()) for k, v in ckpt.items()}))
        except ImportError:
            print("check_install: PyTorch is not installed: only ampjit's checkpoint is checked")
        f = ampjit.nn.functional
        want32 = f.linear(ckpt["input"], ckpt["weight"], ckpt["bias"]).detach().numpy().ravel()
        with ampjit.autocast("cpu"):
            want16 = f.linear(ckpt["input"], ckpt["weight"], ckpt["bias"]).detach().float().numpy().ravel()
        for name, lib, obj in writers:
            path = os.path.join(work, name + "_checkpoint.pt")
            lib.save(obj, path)
            got = parse(run([exe, path]))
            np.testing.assert_allclose(got["float32"], want32, rtol=1e-6, atol=1e-6)
            np.testing.assert_array_equal(got["bfloat16"], want16)  # the same kernels, bit for bit
            print("check_install: {}'s checkpoint: float32 and bfloat16 outputs match".format(name))
        check_torchscript(example, work)
        bad = os.path.join(work, "bad.pt")
        with open(bad, "wb") as out:
            out.write(b"not a zip")
        done = subprocess.run([exe, bad], capture_output=True, text=True)
        assert done.returncode == 1 and "cannot open as a zip archive" in done.stderr, done.stderr
        print("check_install: ok")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
