"""The installed C++ runtime (Note [Installed ampjit]): installs the build into a fresh prefix, builds
examples/cpp against it with find_package(ampjit), and runs it on checkpoints written by ampjit's
torch.save and, where PyTorch is installed, by torch 1.13's; its float32 and autocast outputs must
be the Python computation's. Usage: check_install.py BUILD_DIR SOURCE_DIR"""
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


def main():
    build, source = map(os.path.abspath, sys.argv[1:3])
    sys.path.insert(0, os.path.join(build, "python"))
    import ampjit
    work = tempfile.mkdtemp(prefix="ampjit-install-")
    try:
        prefix = os.path.join(work, "prefix")
        run(["cmake", "--install", build, "--prefix", prefix])
        for must in ("lib/cmake/ampjit/ampjitConfig.cmake", "include/ampjit/runtime/ops.h",
                     "include/ampjit/serialization/load.h", "include/ampjit/runtime/ops/all_ops.def"):
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
        want32 = f.linear(ckpt["input"], ckpt["weight"], ckpt["bias"]).numpy().ravel()
        with ampjit.autocast("cpu"):
            want16 = f.linear(ckpt["input"], ckpt["weight"], ckpt["bias"]).float().numpy().ravel()
        for name, lib, obj in writers:
            path = os.path.join(work, name + "_checkpoint.pt")
            lib.save(obj, path)
            got = parse(run([exe, path]))
            np.testing.assert_allclose(got["float32"], want32, rtol=1e-6, atol=1e-6)
            np.testing.assert_array_equal(got["bfloat16"], want16)  # the same kernels, bit for bit
            print("check_install: {}'s checkpoint: float32 and bfloat16 outputs match".format(name))
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
