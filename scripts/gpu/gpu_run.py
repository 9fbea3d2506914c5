"""The GPU check, run inside an unpacked GPU bundle (scripts/gpu-bundle.sh builds it).

Usage: python3 gpu_run.py OUTDIR [--rehearse]

Runs the steps below, each under its own time budget (the whole run stays under 8 minutes), and
writes one log per step, summary.json and report.md into OUTDIR (eight files: what the device tool
brings back). The bundle's own interpreter, libraries and tests are used for every step but the
last, which runs the GPU machine's own PyTorch as the peer.

1. probe: nvidia-smi (GPU, driver, compute capability, free memory), the OS and C library, an
   audit of every shared library the bundle's programs load (each must resolve inside the bundle,
   to the C library, or to the CUDA libraries the GPU machine provides: never to a path the bundle
   does not control), the Python module's import, and cuda_probe_test.
2. cpp_cuda: the C++ suites `ctest -L cuda` runs, one process per binary; after a crash or a
   failure, each failed or unfinished test runs again alone, so one sticky CUDA error does not
   hide the rest (the summary keeps both counts).
3. python_gpu: tests/python/test_cuda.py, tests/conformance/test_cuda_matrix.py and PyTorch
   1.13.1's 38 CUDA autocast cases (tests/pytorch/test_pytorch_cuda.py) under pytest.
4. bench_gemm, bench_cuda: bench_cuda_gemm (ampjit mm next to cublasGemmEx) and bench_cuda.py.
5. torch_peer: bench_cuda.py --impl torch under the machine's python3 (GEMM, chain, MLP).

Without a GPU the GPU parts report "skipped: no GPU" and everything else still runs: every binary
and the module are loaded, and the CPU half of the Python tests passes. The exit status is 1 when a
step failed (a test failed, a step ran over its budget, a library resolved outside the bundle);
--rehearse (scripts/gpu-bundle.sh --rehearse) only marks the summary and report as a rehearsal.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

BUNDLE = os.path.dirname(os.path.abspath(__file__))
TOTAL_BUDGET_S = 470  # under 8 minutes, with room for unpacking
BUDGETS_S = {"probe": 40, "cpp_cuda": 150, "python_gpu": 120, "bench_gemm": 45, "bench_cuda": 60,
             "torch_peer": 75}
# Resolved outside the bundle and still fine: the C library's own objects (every Linux has them).
SYSTEM_LIB = re.compile(r"^(linux-vdso|ld-linux-x86-64|libc|libm|libpthread|libdl|librt|libutil|"
                        r"libresolv|libmvec)\.so")
# Not carried, found on the GPU machine (find_external_dirs): the driver and CUDA's math libraries,
# hundreds of MB each, which the machine's CUDA toolkit and PyTorch's nvidia-* wheels both provide.
EXTERNAL_LIB = re.compile(r"^(libcuda|libnvidia-.*|libcublas|libcublasLt|libcufft|libcurand|libcusolver|"
                          r"libcusparse|libnvJitLink)\.so")
MAX_LOG_BYTES = 15 << 20  # the device tool brings back files up to 16 MiB


class Runner:
    def __init__(self, out, rehearse):
        self.out, self.rehearse = out, rehearse
        self.t0 = time.monotonic()
        with open(os.path.join(BUNDLE, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.tmp = os.path.join(BUNDLE, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        self.external_dirs = find_external_dirs(self.manifest["external_libs"])
        self.env = bundle_env(self.external_dirs)
        self.summary = {"bundle": {k: self.manifest[k] for k in ("commit", "built", "cuda_architectures")},
                        "rehearsal": rehearse, "steps": {}}
        self.gpu = False

    def remaining(self, step):
        left = TOTAL_BUDGET_S - (time.monotonic() - self.t0)
        return max(5, min(BUDGETS_S[step], left))

    def log_path(self, step):
        return os.path.join(self.out, step + ".log")

    def run(self, step, argv, budget, env=None, cwd=None):
        """Runs argv with its output appended to the step's log; returns (rc, seconds, timed_out)."""
        log = self.log_path(step)
        with open(log, "a") as f:
            f.write("$ {}\n".format(" ".join(argv)))
            f.flush()
            t = time.monotonic()
            try:
                p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, cwd=cwd or BUNDLE,
                                     env=env or self.env, start_new_session=True)
            except OSError as e:
                f.write("cannot start: {}\n".format(e))
                return 127, 0.0, False
            timed_out = False
            try:
                rc = p.wait(timeout=budget)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(p)
                rc = p.wait()
                f.write("\n[gpu_run] timed out after {:.0f} s: killed\n".format(budget))
            secs = time.monotonic() - t
            f.write("[gpu_run] exit {} after {:.1f} s\n\n".format(rc, secs))
        return rc, secs, timed_out

    def step(self, name, fn):
        t = time.monotonic()
        try:
            result = fn(name)
        except Exception as e:  # a bug in this script must not lose the other steps
            with open(self.log_path(name), "a") as f:
                f.write("[gpu_run] step raised {}: {}\n".format(type(e).__name__, e))
            result = {"status": "failed", "error": "{}: {}".format(type(e).__name__, e)}
        result["seconds"] = round(time.monotonic() - t, 1)
        result["log"] = name + ".log"
        self.summary["steps"][name] = result
        print("{:<11} {:<24} {:6.1f} s".format(name, result["status"], result["seconds"]), flush=True)

    # ---- 1. probe -------------------------------------------------------------------------------
    def probe(self, step):
        budget = self.remaining(step)
        device = {}
        smi = shutil.which("nvidia-smi")
        if smi:
            self.run(step, [smi], 15)
            q = subprocess.run([smi, "--query-gpu=name,driver_version,compute_cap,memory.total,memory.free",
                                "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=15)
            first = q.stdout.strip().splitlines()[:1]
            if q.returncode == 0 and first:
                keys = ("name", "driver", "compute_capability", "memory_total_mib", "memory_free_mib")
                device = dict(zip(keys, (v.strip() for v in first[0].split(","))))
        else:
            device["nvidia_smi"] = "not found"
            with open(self.log_path(step), "a") as f:
                f.write("nvidia-smi: not found on PATH\n\n")
        device["os"] = os_name()
        device["libc"] = subprocess.run(["ldd", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
        device["external_lib_dirs"] = self.external_dirs
        device["libcuda"] = find_external_dirs(["libcuda.so.1"]) or "not found (cudart will say why)"
        audit = self.audit_libraries(step)
        rc, _, _ = self.run(step, [self.python(), "-c", IMPORT_CHECK], 60)
        imports_ok = rc == 0
        rc_probe, _, _ = self.run(step, ["bin/cuda_probe_test"], budget)
        self.gpu = rc_probe == 0
        device["gpu"] = self.gpu
        self.summary["device"] = device
        ok = imports_ok and not audit["missing"] and not audit["outside"] and rc_probe in (0, 77)
        return {"status": "passed" if ok else "failed", "audit": audit, "python_imports": imports_ok,
                "cuda_probe_exit": rc_probe}

    def python(self):
        return os.path.join(BUNDLE, "python", "bin", "python3.11")

    def audit_libraries(self, step):
        """ldd over every ELF file of the bundle: each dependency resolves inside it, to the C
        library, or to one of the external CUDA libraries; none is missing."""
        missing, outside, checked = set(), set(), 0
        with open(self.log_path(step), "a") as log:
            log.write("$ ldd audit of the bundle's ELF files\n")
            for path in elf_files(BUNDLE):
                checked += 1
                out = subprocess.run(["ldd", path], capture_output=True, text=True, env=self.env).stdout
                rel = os.path.relpath(path, BUNDLE)
                for line in out.splitlines():
                    m = re.match(r"\s*(\S+) => (.*?)(?: \(0x[0-9a-f]+\))?$", line)
                    if not m:
                        continue
                    name, where = m.groups()
                    if where == "not found":
                        missing.add("{} (needed by {})".format(name, rel))
                    elif not (os.path.realpath(where).startswith(BUNDLE + os.sep) or SYSTEM_LIB.match(name)
                              or name in self.manifest["external_libs"]):
                        outside.add("{} => {} (needed by {})".format(name, where, rel))
            for line in sorted(missing):
                log.write("missing: {}\n".format(line))
            for line in sorted(outside):
                log.write("outside the bundle: {}\n".format(line))
            log.write("[gpu_run] {} files checked, {} missing, {} outside\n\n".format(
                checked, len(missing), len(outside)))
        return {"files": checked, "missing": sorted(missing), "outside": sorted(outside)}

    # ---- 2. C++ CUDA suites ---------------------------------------------------------------------
    def cpp_cuda(self, step):
        suites = {}
        for suite in self.manifest["cpp_suites"]:
            budget = self.remaining(step)
            if suite["kind"] == "gtest":
                suites[suite["name"]] = self.gtest_suite(step, suite, budget)
            else:
                rc, _, timed_out = self.run(step, suite["argv"], budget)
                status = "passed" if rc == 0 else "skipped" if rc == suite.get("skip_code") else "failed"
                suites[suite["name"]] = {"tests": 1, "passed": int(status == "passed"),
                                         "skipped": int(status == "skipped"), "failed": int(status == "failed"),
                                         "timed_out": timed_out}
        totals = {k: sum(s[k] for s in suites.values()) for k in ("tests", "passed", "failed", "skipped")}
        failed = totals["failed"] > 0 or any(s.get("timed_out") or s.get("not_run") for s in suites.values())
        return {"status": self.status(failed, totals), "totals": totals, "suites": suites}

    def gtest_suite(self, step, suite, budget):
        t_end = time.monotonic() + budget
        listing = subprocess.run(suite["argv"] + ["--gtest_list_tests"], capture_output=True, text=True,
                                 env=self.env, cwd=BUNDLE, timeout=60)
        names = gtest_names(listing.stdout)
        if listing.returncode != 0 or not names:
            with open(self.log_path(step), "a") as f:
                f.write("cannot list {}: exit {}\n{}\n".format(suite["name"], listing.returncode,
                                                                 listing.stdout + listing.stderr))
            return {"tests": 1, "passed": 0, "skipped": 0, "failed": 1, "error": "cannot list tests"}
        log = self.log_path(step)
        start = os.path.getsize(log) if os.path.exists(log) else 0
        rc, _, timed_out = self.run(step, suite["argv"] + ["--gtest_color=no"], budget)
        results = gtest_results(read_from(log, start))
        result = {"tests": len(names), "exit": rc, "timed_out": timed_out}
        # After a crash or failures, every test without a pass runs again alone.
        again = [n for n in names if results.get(n) not in ("passed", "skipped")]
        if again and rc != 0:
            result["first_run_failed"] = len(again)
            isolated = {}
            for n in again:
                left = t_end - time.monotonic()
                if left < 3:
                    break
                pos = os.path.getsize(log)
                self.run(step, suite["argv"] + ["--gtest_color=no", "--gtest_filter=" + n], min(left, 60))
                isolated[n] = gtest_results(read_from(log, pos)).get(n, "failed")
            results.update(isolated)
            result["passed_alone"] = sorted(n for n, s in isolated.items() if s == "passed")
        statuses = [results.get(n, "not run") for n in names]
        result.update(passed=statuses.count("passed"), skipped=statuses.count("skipped"),
                      failed=len(statuses) - statuses.count("passed") - statuses.count("skipped"),
                      failed_tests=[n for n, s in zip(names, statuses) if s not in ("passed", "skipped")][:200])
        result["not_run"] = statuses.count("not run")
        return result

    def status(self, failed, totals):
        if failed:
            return "failed"
        if totals["passed"] == 0 or (not self.gpu and totals["skipped"]):
            return "skipped: no GPU" if not self.gpu else "failed"
        return "passed"

    # ---- 3. Python GPU tests --------------------------------------------------------------------
    def python_gpu(self, step):
        junit = os.path.join(self.tmp, "python_gpu.xml")
        files = self.manifest["python_tests"]
        rc, _, timed_out = self.run(step, [self.python(), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                                           "--junitxml=" + junit] + files, self.remaining(step),
                                    cwd=os.path.join(BUNDLE, "tests"))
        per_file, totals = {}, {"tests": 0, "passed": 0, "failed": 0, "skipped": 0}
        if os.path.exists(junit):
            for case in ET.parse(junit).getroot().iter("testcase"):
                f = case.get("classname", "").split(".")[0] + ".py"
                c = per_file.setdefault(f, {"tests": 0, "passed": 0, "failed": 0, "skipped": 0})
                kind = ("failed" if case.find("failure") is not None or case.find("error") is not None
                        else "skipped" if case.find("skipped") is not None else "passed")
                for d in (c, totals):
                    d["tests"] += 1
                    d[kind] += 1
        failed = timed_out or rc not in (0,) or totals["failed"] > 0 or totals["tests"] == 0
        return {"status": self.status(failed, totals), "exit": rc, "timed_out": timed_out,
                "totals": totals, "files": per_file}

    # ---- 4. benchmarks --------------------------------------------------------------------------
    def bench_gemm(self, step):
        log = self.log_path(step)
        rc, _, timed_out = self.run(step, ["bin/bench_cuda_gemm"], self.remaining(step))
        rows = []
        for line in read_from(log, 0).splitlines():
            m = re.match(r"^(float16|bfloat16|float32)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", line)
            if m:
                rows.append({"dtype": m[1], "n": int(m[2]), "cublas_tflops": float(m[3]),
                             "ampjit_tflops": float(m[4]), "ampjit_over_direct": float(m[5]),
                             "max_rel_diff": float(m[6])})
        return {"status": self.bench_status(rc, timed_out, rows), "exit": rc, "rows": rows}

    def bench_cuda(self, step):
        js = os.path.join(self.tmp, "bench_ampjit.json")
        rc, _, timed_out = self.run(step, [self.python(), "bench/bench_cuda.py", "--impl", "ampjit",
                                           "--json", js], self.remaining(step))
        data = load_json(js).get("ampjit", {}) if rc == 0 else {}
        return {"status": self.bench_status(rc, timed_out, data.get("rows")), "exit": rc,
                "rows": data.get("rows", [])}

    def torch_peer(self, step):
        py = shutil.which("python3", path=os.environ.get("PATH", os.defpath))
        if not py:
            return {"status": "skipped: no python3 with torch", "exit": None}
        js = os.path.join(self.tmp, "bench_torch.json")
        env = caller_env()
        rc, _, timed_out = self.run(step, [py, "bench/bench_cuda.py", "--impl", "torch", "--json", js],
                                    self.remaining(step), env=env)
        data = load_json(js).get("torch", {}) if rc == 0 else {}
        return {"status": self.bench_status(rc, timed_out, data.get("rows")), "exit": rc, "python": py,
                "version": data.get("version"), "device": data.get("device"),
                "rows": data.get("rows", []), "gemm": data.get("gemm", [])}

    def bench_status(self, rc, timed_out, rows):
        if rc == 77 and not timed_out:
            return "skipped: no GPU"
        return "passed" if rc == 0 and rows and not timed_out else "failed"

    # ---- the run --------------------------------------------------------------------------------
    def main(self):
        for name in ("probe", "cpp_cuda", "python_gpu", "bench_gemm", "bench_cuda", "torch_peer"):
            self.step(name, getattr(self, name))
        self.summary["seconds"] = round(time.monotonic() - self.t0, 1)
        bad = [n for n, s in self.summary["steps"].items() if s["status"] == "failed"]
        self.summary["ok"] = not bad
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump(self.summary, f, indent=1)
        with open(os.path.join(self.out, "report.md"), "w") as f:
            f.write(report(self.summary))
        for name in self.summary["steps"]:
            truncate(self.log_path(name))
        print("summary: {} ({} s){}".format("ok" if not bad else "FAILED: " + ", ".join(bad),
                                            self.summary["seconds"], "" if self.gpu else "; no GPU"))
        return 0 if not bad else 1


IMPORT_CHECK = r"""
import os, sys
bundle = os.environ["AMPJIT_BUNDLE"]
import numpy, pytest, ampjit
for m in (numpy, pytest, ampjit):
    assert os.path.realpath(m.__file__).startswith(bundle + os.sep), (m.__name__, m.__file__)
assert not any(p.startswith("/usr/lib/python3") for p in sys.path), sys.path
print("python", sys.version.split()[0], "numpy", numpy.__version__, "pytest", pytest.__version__)
print("ampjit.cuda.is_available():", ampjit.cuda.is_available(), ampjit._C._cuda_unavailable_reason())
"""


def caller_env():
    """The environment run.sh was called with (it sets the bundle's Python and libraries for this
    driver and keeps the caller's values under AMPJIT_CALLER_*): the peer step's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AMPJIT_", "PYTHON"))}
    env.pop("LD_LIBRARY_PATH", None)
    for key in ("LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME"):
        if os.environ.get("AMPJIT_CALLER_" + key):
            env[key] = os.environ["AMPJIT_CALLER_" + key]
    env["PYTHONUNBUFFERED"] = "1"
    return env


def bundle_env(external_dirs):
    """The environment of every step but the peer: of the caller's, only PATH, HOME and the library
    path (after the bundle's lib/ and the external CUDA folders: it may lead to the driver)."""
    py = os.path.join(BUNDLE, "python")
    caller_libs = [d for d in os.environ.get("AMPJIT_CALLER_LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    return {"PATH": os.path.join(py, "bin") + os.pathsep + os.environ.get("PATH", os.defpath),
            "HOME": os.environ.get("HOME", BUNDLE), "LANG": "C.UTF-8",
            "LD_LIBRARY_PATH": os.pathsep.join([os.path.join(BUNDLE, "lib")] + external_dirs + caller_libs),
            "PYTHONHOME": py, "PYTHONPATH": os.path.join(BUNDLE, "site"), "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "AMPJIT_BUNDLE": BUNDLE,
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(os.cpu_count() or 1))}


def find_external_dirs(sonames):
    """Folders holding the CUDA libraries the bundle does not carry (cuBLAS: hundreds of MB), from
    the dynamic loader's cache, the CUDA toolkit, or the nvidia-* wheels next to PyTorch."""
    candidates = []
    try:
        ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
        cache = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
        candidates += [os.path.dirname(p) for p in re.findall(r"=> (\S+)", cache)
                       if os.path.basename(p) in sonames]
    except OSError:
        pass
    for pattern in ("/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/x86_64-linux-gnu",
                    "/usr/lib/wsl/lib", "/usr/local/cuda/lib64", "/usr/local/cuda/targets/*/lib", "/usr/local/cuda-*/lib64",
                    "/usr/local/cuda-*/targets/*/lib", "/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib",
                    "/opt/*/lib/python3*/site-packages/nvidia/*/lib",
                    "/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
                    "/usr/lib/python3/dist-packages/nvidia/*/lib"):
        candidates += sorted(glob.glob(pattern))
    dirs = []
    for soname in sonames:
        for d in candidates:
            if os.path.exists(os.path.join(d, soname)):
                if d not in dirs:
                    dirs.append(d)
                break
    return dirs


def elf_files(root):
    for d, subdirs, files in os.walk(root):
        subdirs[:] = [s for s in subdirs if s != "tmp"]
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    yield p


def gtest_names(listing):
    names, suite = [], None
    for line in listing.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif suite:
            names.append(suite + line.split("#")[0].strip())
    return names


def gtest_results(text):
    results = {}
    for m in re.finditer(r"^\[ +(OK|FAILED|SKIPPED) +\] (\S+\.\S+?)(?: \(\d+ ms\))?$", text, re.M):
        results.setdefault(m[2], {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[m[1]])
    return results


def read_from(path, pos):
    with open(path, errors="replace") as f:
        f.seek(pos)
        return f.read()


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def kill_group(p):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            pass


def truncate(path):
    """Keeps a log under the device tool's file size limit: its head and its tail."""
    if os.path.exists(path) and os.path.getsize(path) > MAX_LOG_BYTES:
        with open(path, "rb") as f:
            head = f.read(MAX_LOG_BYTES // 4)
            f.seek(-(MAX_LOG_BYTES // 2), os.SEEK_END)
            tail = f.read()
        with open(path, "wb") as f:
            f.write(head + b"\n[gpu_run] ... log cut to its head and tail ...\n" + tail)


def os_name():
    try:
        with open("/etc/os-release") as f:
            return re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)[1]
    except (OSError, TypeError):
        return "unknown"


def report(s):
    """report.md: the tables docs/gpu.md keeps, from summary.json."""
    d, st = s.get("device", {}), s["steps"]
    lines = ["# GPU check: {}".format(d.get("name", "no GPU")), "",
             "- bundle: commit {}, built {}, CUDA architectures {}".format(
                 s["bundle"]["commit"], s["bundle"]["built"], s["bundle"]["cuda_architectures"]),
             "- device: {} · driver {} · compute capability {} · {} MiB free of {}".format(
                 d.get("name", "-"), d.get("driver", "-"), d.get("compute_capability", "-"),
                 d.get("memory_free_mib", "-"), d.get("memory_total_mib", "-")),
             "- machine: {} · {}".format(d.get("os", "-"), d.get("libc", "-")),
             "- run: {} s{}".format(s.get("seconds"), " (rehearsal)" if s.get("rehearsal") else ""), "",
             "| step | status | tests | passed | failed | skipped | s |", "|---|---|---|---|---|---|---|"]
    for name, r in st.items():
        t = r.get("totals", {})
        lines.append("| {} | {} | {} | {} | {} | {} | {} |".format(
            name, r["status"], t.get("tests", ""), t.get("passed", ""), t.get("failed", ""),
            t.get("skipped", ""), r.get("seconds")))
    failed = [n for r in (st.get("cpp_cuda", {}).get("suites", {}) or {}).values()
              for n in r.get("failed_tests", [])]
    if failed:
        lines += ["", "Failed C++ tests ({}): {}".format(len(failed), ", ".join(failed[:40]))]
    gemm, peer = st.get("bench_gemm", {}).get("rows", []), st.get("torch_peer", {})
    torch_gemm = {(g["dtype"], g["n"]): g["tflops"] for g in peer.get("gemm", [])}
    if gemm:
        lines += ["", "GEMM, TFLOP/s (median of 20; goal: ampjit >= 95% of cuBLAS direct and >= torch.mm)", "",
                  "| dtype | n | cuBLAS direct | ampjit mm | torch {} mm | ampjit/direct | ampjit/torch | max rel diff |".format(
                      peer.get("version") or ""),
                  "|---|---|---|---|---|---|---|---|"]
        for g in gemm:
            t = torch_gemm.get((g["dtype"], g["n"]))
            lines.append("| {} | {} | {:.1f} | {:.1f} | {} | {:.3f} | {} | {:.2e} |".format(
                g["dtype"], g["n"], g["cublas_tflops"], g["ampjit_tflops"],
                "{:.1f}".format(t) if t else "-", g["ampjit_over_direct"],
                "{:.3f}".format(g["ampjit_tflops"] / t) if t else "-", g["max_rel_diff"]))
    ours = {r["label"]: r["value"] for r in st.get("bench_cuda", {}).get("rows", [])}
    theirs = {r["label"]: r["value"] for r in peer.get("rows", [])}
    if ours:
        lines += ["", "Chain and MLP (µs per op, ms per forward; ratio = torch / ampjit, > 1: ampjit faster)", "",
                  "| case | ampjit | torch | ratio |", "|---|---|---|---|"]
        for label, v in ours.items():
            t = theirs.get(label)
            lines.append("| {} | {:.3f} | {} | {} |".format(label, v, "{:.3f}".format(t) if t else "-",
                                                            "{:.2f}".format(t / v) if t else "-"))
        if "200 adds, traced" in ours and "200 adds, eager" in theirs:
            lines.append("")
            lines.append("Traced 200-add chain: ampjit {:.2f} µs/op, torch eager {:.2f} µs/op (goal: at most "
                         "torch eager's)".format(ours["200 adds, traced"], theirs["200 adds, eager"]))
    return "\n".join(lines) + "\n"


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    out = os.path.abspath(argv[0])
    os.makedirs(out, exist_ok=True)
    for f in glob.glob(os.path.join(out, "*.log")):
        os.remove(f)
    return Runner(out, "--rehearse" in argv[1:]).main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
