"""The upstream files for tests/pytorch/: the copy the GPU bundle carries (upstream_src/ beside this
file), else scripts/fetch-pytorch-tests.sh's folder (fetched once, then cached); a failed fetch
fails the tests that need it."""
import os
import subprocess

import pytest

import upstream

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="session")
def suite_root():
    bundled = os.path.join(HERE, "upstream_src")
    if os.path.isdir(bundled):
        root = bundled
    else:
        out = subprocess.run(["bash", os.path.join(ROOT, "scripts", "fetch-pytorch-tests.sh")],
                             capture_output=True, text=True)
        assert out.returncode == 0, "fetching PyTorch 1.13.1's tests failed:\n" + out.stderr[-2000:]
        root = out.stdout.strip().splitlines()[-1]
    upstream.install(root)
    return root
