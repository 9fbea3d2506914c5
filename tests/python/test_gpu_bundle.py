"""The GPU bundle's driver (scripts/gpu/gpu_run.py) on fake programs: what it will make of the GPU
run's output, checked here since the GPU run happens once, on a machine with a budget of minutes.
The rehearsal (scripts/gpu-bundle.sh --rehearse, a CI step) runs the real bundle without a GPU."""
import importlib.util
import json
import os
import shutil
import stat
import textwrap

import pytest

DRIVER = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu", "gpu_run.py")

# A gtest binary that crashes after its first test: every test but the one that failed alone must
# come out passed after the isolated reruns, and the crash must still count as a failure.
FAKE_GTEST = r"""#!/bin/sh
case "$*" in
  *--gtest_list_tests*)
    printf 'Suite.\n  A\n  B\n  C\nP/Param.\n  X/0  # GetParam() = 1\n'; exit 0 ;;
  *--gtest_filter=Suite.B*) printf '[ RUN      ] Suite.B\n[  FAILED  ] Suite.B (0 ms)\n'; exit 1 ;;
  *--gtest_filter=*) name=${*##*--gtest_filter=}
    printf '[ RUN      ] %s\n[       OK ] %s (1 ms)\n' "$name" "$name"; exit 0 ;;
esac
printf '[ RUN      ] Suite.A\n[       OK ] Suite.A (1 ms)\n[ RUN      ] Suite.B\n'
kill -SEGV $$
"""

GEMM_OUTPUT = """NVIDIA H100 80GB HBM3, median of 20 repetitions (after 3 warm-up), TFLOP/s
dtype          n  cuBLAS direct      ampjit mm  ampjit/direct   max rel diff
float16     4096          600.5          590.1          0.983       0.00e+00
bfloat16    8192          700.0          699.0          0.999       1.00e-03
"""


@pytest.fixture
def bundle(tmp_path):
    """A bundle folder holding the driver, a manifest, and fake programs in bin/."""
    shutil.copy(DRIVER, tmp_path / "gpu_run.py")
    (tmp_path / "bin").mkdir()
    for name, text in (("fake_gtest", FAKE_GTEST),
                       ("bench_cuda_gemm", "#!/bin/sh\ncat <<'EOF'\n" + GEMM_OUTPUT + "EOF\n")):
        p = tmp_path / "bin" / name
        p.write_text(text)
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    manifest = {"commit": "abc", "built": "today", "cuda_architectures": "sm_90",
                "cpp_suites": [{"name": "fake_gtest", "argv": ["bin/fake_gtest"], "kind": "gtest"}],
                "python_tests": [], "external_libs": []}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    spec = importlib.util.spec_from_file_location("gpu_run_under_test", tmp_path / "gpu_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "out"
    out.mkdir()
    return module, module.Runner(str(out), rehearse=True)


def test_a_crash_reruns_each_unfinished_test_alone(bundle):
    _, runner = bundle
    runner.gpu = True
    result = runner.cpp_cuda("cpp_cuda")
    suite = result["suites"]["fake_gtest"]
    assert suite["tests"] == 4
    assert suite["exit"] != 0 and suite["first_run_failed"] == 3
    assert suite["passed_alone"] == ["P/Param.X/0", "Suite.C"]
    assert (suite["passed"], suite["failed"], suite["skipped"]) == (3, 1, 0)
    assert suite["failed_tests"] == ["Suite.B"]
    assert result["status"] == "failed"
    assert result["totals"] == {"tests": 4, "passed": 3, "failed": 1, "skipped": 0}


def test_gtest_output_parsing(bundle):
    module, _ = bundle
    assert module.gtest_names("S.\n  a\n  b  # GetParam() = 2\nP/T.\n  c/1\n") == ["S.a", "S.b", "P/T.c/1"]
    text = "[       OK ] S.a (3 ms)\n[  SKIPPED ] S.b (0 ms)\n[  FAILED  ] P/T.c/1 (1 ms)\n" \
           "[  FAILED  ] 1 test, listed below:\n[  FAILED  ] P/T.c/1\n"
    assert module.gtest_results(text) == {"S.a": "passed", "S.b": "skipped", "P/T.c/1": "failed"}


def test_status_without_and_with_a_gpu(bundle):
    _, runner = bundle
    all_skipped = {"tests": 3, "passed": 0, "failed": 0, "skipped": 3}
    runner.gpu = False
    assert runner.status(False, all_skipped) == "skipped: no GPU"
    assert runner.status(False, {"tests": 3, "passed": 1, "failed": 0, "skipped": 2}) == "skipped: no GPU"
    runner.gpu = True  # a GPU present and nothing run: a failure, never a pass
    assert runner.status(False, all_skipped) == "failed"
    assert runner.status(False, {"tests": 3, "passed": 3, "failed": 0, "skipped": 0}) == "passed"
    assert runner.status(True, {"tests": 3, "passed": 3, "failed": 0, "skipped": 0}) == "failed"


def test_gemm_table_and_report(bundle):
    module, runner = bundle
    gemm = runner.bench_gemm("bench_gemm")
    assert gemm["status"] == "passed"
    assert gemm["rows"][1] == {"dtype": "bfloat16", "n": 8192, "cublas_tflops": 700.0,
                               "ampjit_tflops": 699.0, "ampjit_over_direct": 0.999, "max_rel_diff": 1e-3}
    summary = {"bundle": {"commit": "abc", "built": "today", "cuda_architectures": "sm_90"},
               "device": {"name": "NVIDIA H100"}, "seconds": 1.0,
               "steps": {"bench_gemm": dict(gemm, seconds=0.1),
                         "bench_cuda": {"status": "passed", "seconds": 1,
                                        "rows": [{"label": "200 adds, traced", "value": 4.0, "unit": "us/op"}]},
                         "torch_peer": {"status": "passed", "seconds": 1, "version": "2.11.0",
                                        "gemm": [{"dtype": "bfloat16", "n": 8192, "tflops": 720.0}],
                                        "rows": [{"label": "200 adds, eager", "value": 6.0, "unit": "us/op"},
                                                 {"label": "200 adds, traced", "value": 5.0, "unit": "us/op"}]}}}
    text = module.report(summary)
    assert "| bfloat16 | 8192 | 700.0 | 699.0 | 720.0 | 0.999 | 0.971 | 1.00e-03 |" in text
    assert "| float16 | 4096 | 600.5 | 590.1 | - | 0.983 | - | 0.00e+00 |" in text
    assert "| 200 adds, traced | 4.000 | 5.000 | 1.25 |" in text
    assert "Traced 200-add chain: ampjit 4.00 µs/op, torch eager 6.00 µs/op" in text


def test_a_timed_out_program_is_killed_and_reported(bundle, tmp_path):
    module, runner = bundle
    rc, secs, timed_out = runner.run("slow", ["sh", "-c", "sleep 30"], budget=1)
    assert timed_out and secs < 15
    assert "timed out after 1 s: killed" in (tmp_path / "out" / "slow.log").read_text()
    assert runner.bench_status(rc, timed_out, []) == "failed"
    assert runner.bench_status(77, False, []) == "skipped: no GPU"


def test_the_library_audit_flags_a_dependency_outside_the_bundle(bundle, tmp_path):
    _, runner = bundle
    # /bin/sh needs the C library alone: clean. Debian's python3.11 also needs libz and libexpat,
    # which a bundle must carry: with lib/ empty, both are flagged as resolved outside it.
    shutil.copy("/bin/sh", tmp_path / "bin" / "sh_copy")
    audit = runner.audit_libraries("probe")
    assert audit == {"files": 1, "missing": [], "outside": []}
    shutil.copy("/usr/bin/python3.11", tmp_path / "bin" / "python_copy")
    audit = runner.audit_libraries("probe")
    assert {line.split(" => ")[0] for line in audit["outside"]} >= {"libz.so.1", "libexpat.so.1"}, audit
    assert all(line.endswith("(needed by bin/python_copy)") for line in audit["outside"])
