"""Includes only go down the pipeline (run by scripts/lint.sh on every CI run).

The folders are layers, lowest first:

    runtime -> kernels -> tracer -> interop -> script -> serialization -> frontend -> tools

A file may include files of its own layer and of the layers before it, never of a later one. Inside
kernels/, the shared files at its top (the *_meta.h checks, the helpers every backend uses) include
neither backend, and neither backend includes the other: kernels/cpu/ and kernels/cuda/ see
kernels/ and runtime/ alone. Tests and benchmarks may include anything.

Usage: /usr/bin/python3 scripts/check_layers.py [ROOT]     exit 1 and one line per violation.
"""
import os
import re
import subprocess
import sys

LAYERS = ["runtime", "kernels", "tracer", "interop", "script", "serialization", "frontend", "tools"]
BACKENDS = ("kernels/cpu", "kernels/cuda")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    top = path.split("/", 1)[0]
    return LAYERS.index(top) if top in LAYERS else None


def backend_of(path):
    return next((b for b in BACKENDS if path.startswith(b + "/")), None)


def violations(root):
    files = subprocess.run(["git", "-C", root, "ls-files", "*.h", "*.cpp", "*.cu", "*.cuh"],
                           capture_output=True, text=True, check=True).stdout.split()
    found = []
    for path in files:
        here = layer_of(path)
        if here is None:
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            target = m[1]
            line = text.count("\n", 0, m.start()) + 1
            there = layer_of(target)
            if there is None:
                continue
            if there > here:
                found.append("{}:{}: includes {} ({} is after {} in {})".format(
                    path, line, target, LAYERS[there], LAYERS[here], " -> ".join(LAYERS)))
            elif here == there == LAYERS.index("kernels"):
                mine, theirs = backend_of(path), backend_of(target)
                if theirs and theirs != mine:
                    found.append("{}:{}: includes {} ({} sees kernels/ and runtime/ only)".format(
                        path, line, target, mine or "the shared kernels/ code"))
    return found


def main(argv):
    root = argv[0] if argv else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print("check_layers: {} include(s) go up the pipeline".format(len(found)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
