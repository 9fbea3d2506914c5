"""scripts/check_layers.py: includes go down the pipeline, and the kernel backends see only the
shared kernels/ code. Checked on small trees made here (the real tree is checked by lint.sh)."""
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_layers.py")


def tree(tmp_path, files):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for path, text in files.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    return subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True)


def test_includes_down_the_pipeline_pass(tmp_path):
    r = tree(tmp_path, {"script/a.cpp": '#include "runtime/x.h"\n#include "tracer/t.h"\n',
                        "kernels/cpu/k.cpp": '#include "kernels/operands.h"\n#include "runtime/x.h"\n',
                        "tests/t.cpp": '#include "tools/anything.h"\n'})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("path, text, why", [
    ("runtime/interpreter.h", '#include "interop/semantics.h"\n',
     "runtime/interpreter.h:1: includes interop/semantics.h (interop is after runtime in"),
    ("tracer/tracer.cpp", '// x\n#include "script/compiler.h"\n',
     "tracer/tracer.cpp:2: includes script/compiler.h (script is after tracer in"),
    ("kernels/cuda/ops.cpp", '#include "kernels/cpu/elementwise.h"\n',
     "kernels/cuda/ops.cpp:1: includes kernels/cpu/elementwise.h (kernels/cuda sees kernels/ and "
     "runtime/ only)"),
    ("kernels/linalg_meta.h", '#include "kernels/cpu/onednn.h"\n',
     "kernels/linalg_meta.h:1: includes kernels/cpu/onednn.h (the shared kernels/ code sees"),
])
def test_an_include_that_goes_up_is_named_with_its_line(tmp_path, path, text, why):
    r = tree(tmp_path, {path: text})
    assert r.returncode == 1
    assert r.stdout.startswith(why), r.stdout
    assert "check_layers: 1 include(s) go up the pipeline" in r.stderr
