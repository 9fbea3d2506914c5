"""Stages the GPU bundle's payload from a CUDA build (called by scripts/gpu-bundle.sh).

Usage: /usr/bin/python3 scripts/gpu/make_bundle.py BUILD_DIR STAGE_DIR

The payload holds what the GPU machine lacks (see gpu_run.py for what runs there):
  bin/        the C++ binaries `ctest -L cuda` runs (read from ctest's own test list) and bench_cuda_gemm
  lib/        every shared library they, the module and the interpreter load, but the C library's
              objects and the CUDA libraries the GPU machine has (gpu_run.EXTERNAL_LIB); libcudart is
              carried (small, and it fixes the runtime version the code was built against)
  python/     Debian's Python 3.11: the interpreter and its standard library (the GPU machine's
              Python 3.12 cannot load a module built for 3.11, and Boost.Python has no 3.12 build here)
  site/       the ampjit package with its _C module, and the Debian packages the tests import
              (numpy, pytest and theirs), found by importing them, not listed by hand
  tests/, bench/  the GPU test files with their helpers (PyTorch 1.13.1's CUDA autocast cases with
              their shims and upstream files), and bench_cuda.py
  gpu_run.py, manifest.json
Every ELF file loses its RPATH/RUNPATH, so nothing reaches back into the build tree: libraries
resolve through LD_LIBRARY_PATH to lib/ alone (the probe step audits it).
"""
import datetime
import json
import os
import re
import shutil
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import gpu_run  # noqa: E402  (one definition of the system and external library sets, and elf_files)

PYTHON_TESTS = ["python/test_cuda.py", "conformance/test_cuda_matrix.py", "pytorch/test_pytorch_cuda.py"]
DIST_PACKAGES = "/usr/lib/python3/dist-packages"
STDLIB = "/usr/lib/python3.11"
# Parts of the standard library no test or benchmark uses (and that would load libraries such as
# Tk or readline): left out to keep the bundle small.
STDLIB_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data",
               "config-3.11-x86_64-linux-gnu", "__pycache__", "site-packages", "dist-packages"}
DYNLOAD_SKIP = re.compile(r"^(_tkinter|_curses|_curses_panel|_dbm|_gdbm|readline|_sqlite3)\.")
# Packages that the GPU tests' collection may import but that must never travel (the oracle).
NEVER_CARRY = {"torch", "torchvision", "caffe2", "functorch"}


def main(build, stage):
    build, stage = os.path.abspath(build), os.path.abspath(stage)
    if os.path.exists(stage):
        shutil.rmtree(stage)
    for d in ("bin", "lib", "site", "tests", "bench", "python/bin", "python/lib"):
        os.makedirs(os.path.join(stage, d))

    suites = cuda_suites(build)
    for s in suites:
        shutil.copy2(s.pop("exe"), os.path.join(stage, "bin"))
    gemm = os.path.join(build, "bench", "bench_cuda_gemm")
    need(gemm, "bench_cuda_gemm")
    shutil.copy2(gemm, os.path.join(stage, "bin"))

    package = os.path.join(build, "python", "ampjit")
    need(package, "the Python package (build with AMPJIT_PYTHON=ON)")
    shutil.copytree(package, os.path.join(stage, "site", "ampjit"), symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))
    copy_python(stage)
    for top in imported_packages(build):
        src = os.path.join(DIST_PACKAGES, top)
        dst = os.path.join(stage, "site", top)
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "tests"))
        else:
            shutil.copy2(src, dst)
    for rel in PYTHON_TESTS:  # each test file with the non-test modules beside it (conftest, helpers)
        src_dir, dst_dir = os.path.join(ROOT, "tests", os.path.dirname(rel)), os.path.join(stage, "tests", os.path.dirname(rel))
        os.makedirs(dst_dir, exist_ok=True)
        for f in os.listdir(src_dir):
            if f.endswith(".py") and (not f.startswith("test_") or f == os.path.basename(rel)):
                shutil.copy2(os.path.join(src_dir, f), dst_dir)
    # PyTorch 1.13.1's CUDA autocast cases: their shims, and the upstream files (fetched here: the GPU
    # machine reaches no network) as tests/pytorch/upstream_src, which tests/pytorch/conftest.py uses.
    shutil.copytree(os.path.join(ROOT, "tests", "pytorch", "shims"), os.path.join(stage, "tests", "pytorch", "shims"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    fetched = subprocess.run(["bash", os.path.join(ROOT, "scripts", "fetch-pytorch-tests.sh")], capture_output=True,
                             text=True, check=True).stdout.strip().splitlines()[-1]
    shutil.copytree(fetched, os.path.join(stage, "tests", "pytorch", "upstream_src"))
    shutil.copy2(os.path.join(ROOT, "bench", "bench_cuda.py"), os.path.join(stage, "bench"))
    shutil.copy2(os.path.join(ROOT, "scripts", "gpu", "gpu_run.py"), stage)

    external = carry_libraries(stage)
    for path in gpu_run.elf_files(stage):
        os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
    script = os.path.join(os.path.dirname(stage), "remove_rpath.cmake")
    with open(script, "w") as f:
        f.writelines('file(RPATH_REMOVE FILE "{}")\n'.format(p) for p in gpu_run.elf_files(stage))
    subprocess.run(["cmake", "-P", script], check=True, stdout=subprocess.DEVNULL)
    os.remove(script)

    manifest = {"commit": git("rev-parse", "--short=12", "HEAD") + ("+dirty" if git("status", "--porcelain", "-uno") else ""),
                "built": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "cuda_architectures": cuda_architectures(build),
                "cpp_suites": suites, "python_tests": PYTHON_TESTS, "external_libs": sorted(external)}
    with open(os.path.join(stage, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("gpu-bundle: {} C++ suites ({}), {} Python test files, {} external libraries ({})".format(
        len(suites), ", ".join(s["name"] for s in suites), len(PYTHON_TESTS), len(external),
        ", ".join(sorted(external))))


def need(path, what):
    if not os.path.exists(path):
        sys.exit("gpu-bundle: {} is missing from the build: {} (build with CUDA first: scripts/build.sh)".format(what, path))


def cuda_suites(build):
    """The binaries behind `ctest -L cuda`: one entry per executable, gtest binaries run whole."""
    out = subprocess.run(["ctest", "--test-dir", build, "-N", "-L", "cuda", "--show-only=json-v1"],
                         capture_output=True, text=True, check=True).stdout
    suites = {}
    for test in json.loads(out)["tests"]:
        command = test.get("command") or []
        exe = next((c for c in command if os.path.isabs(c) and c.startswith(build + os.sep) and is_elf(c)), None)
        if exe is None:
            sys.exit("gpu-bundle: the cuda test {} runs no binary of the build: {}".format(test["name"], command))
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        gtest = any(c.startswith("--gtest_filter=") for c in command)
        s = suites.setdefault(exe, {"name": os.path.basename(exe), "exe": exe,
                                    "argv": ["bin/" + os.path.basename(exe)],
                                    "kind": "gtest" if gtest else "plain"})
        if not gtest and "SKIP_RETURN_CODE" in props:
            s["skip_code"] = int(props["SKIP_RETURN_CODE"])
    if not suites:
        sys.exit("gpu-bundle: ctest lists no test labelled cuda in {} (is CUDA on in this build?)".format(build))
    return sorted(suites.values(), key=lambda s: (s["kind"] != "plain", s["name"]))


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def copy_python(stage):
    shutil.copy2("/usr/bin/python3.11", os.path.join(stage, "python", "bin", "python3.11"))
    os.symlink("python3.11", os.path.join(stage, "python", "bin", "python3"))
    dst = os.path.join(stage, "python", "lib", "python3.11")

    def ignore(d, names):
        skip = set(n for n in names if n in STDLIB_SKIP)
        if os.path.basename(d) == "lib-dynload":
            skip |= set(n for n in names if DYNLOAD_SKIP.match(n))
        return skip
    shutil.copytree(STDLIB, dst, symlinks=False, ignore=ignore, ignore_dangling_symlinks=True)


def imported_packages(build):
    """The top-level dist-packages the GPU tests and bench_cuda.py import, found by importing:
    the Python test files are collected and the modules they use at run time imported."""
    probe = r"""
import os, sys, pytest
rc = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"] + sys.argv[1:])
import numpy, numpy.testing, xml.etree.ElementTree
import _pytest.junitxml, _pytest.skipping, _pytest.terminal
tops = set()
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None) or ""
    if f.startswith(%r + "/"):
        tops.add(f[len(%r) + 1:].split("/")[0])
print("TOPS", " ".join(sorted(tops)))
sys.exit(0 if rc in (0, 5) else rc)
""" % (DIST_PACKAGES, DIST_PACKAGES)
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run(["/usr/bin/python3", "-c", probe] + PYTHON_TESTS, capture_output=True, text=True,
                       env=env, cwd=os.path.join(ROOT, "tests"))
    line = next((l for l in r.stdout.splitlines() if l.startswith("TOPS")), None)
    if r.returncode != 0 or line is None:
        sys.exit("gpu-bundle: collecting the GPU tests failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    tops = [t[:-3] + ".py" if t.endswith(".py") else t for t in line.split()[1:]]
    return [t for t in tops if t.split(".")[0] not in NEVER_CARRY]


def carry_libraries(stage):
    """Copies every shared library the payload's ELF files load into lib/, but the C library's
    objects and the external CUDA libraries; returns the external ones' names."""
    external, carried = set(), {}
    pending = list(gpu_run.elf_files(stage))
    seen = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (\S+)", line)
            if not m:
                continue
            name, where = m.groups()
            if where == "not":
                sys.exit("gpu-bundle: {} needs {}, which is not found here".format(path, name))
            if gpu_run.SYSTEM_LIB.match(name):
                continue
            if gpu_run.EXTERNAL_LIB.match(name):
                external.add(name)
                continue
            if name not in carried and not os.path.realpath(where).startswith(stage + os.sep):
                dst = os.path.join(stage, "lib", name)
                shutil.copy2(os.path.realpath(where), dst)
                carried[name] = dst
                pending.append(dst)
    return external


def cuda_architectures(build):
    """The machine code the .cu files were compiled to, as nvcc was told (build.ninja's flags)."""
    with open(os.path.join(build, "build.ninja")) as f:
        archs = set(re.findall(r"code=\[compute_\d+a?,(sm_\d+a?)\]", f.read()))
    return " ".join(sorted(archs)) or "none"


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
