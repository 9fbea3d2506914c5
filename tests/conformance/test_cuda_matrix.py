"""The limitation matrix on CUDA (runs where a GPU is present; skipped, saying why, elsewhere).

Every program of the matrix (programs.py) runs with its inputs on the GPU: `OnCuda` is ampjit with
`arange`, the factory behind every program's inputs (programs.mats), making CUDA tensors. In `eager`
semantics the program must give what the same Python gives eagerly on the GPU (same dtypes, values
within the harness's tolerance, or the same kind of error) with no interop warning, under each
outer eager state: no autocast, CUDA autocast in float16, CUDA autocast in bfloat16. The script
compiler sees `torch` as the ampjit namespace (OnCuda is a module named "ampjit"), so compiled code
resolves exactly as it does on the CPU. The `torchscript` column is not run here: its oracle,
PyTorch 1.13 from Debian, has no CUDA.
"""
import contextlib
import types

import pytest

import ampjit
import program_gen
import programs
from harness import EagerTorch, assert_warnings, observe, same_result

TORCH_2 = program_gen.Config("torch-2", "torch-2", (), True)

HAVE_CUDA = ampjit.cuda.is_available()
pytestmark = pytest.mark.skipif(not HAVE_CUDA,
                                reason="no CUDA device: " + ampjit._C._cuda_unavailable_reason())


class OnCuda(types.ModuleType):
    """ampjit, with `arange` making CUDA tensors."""

    def __init__(self):
        super().__init__("ampjit")

    def __getattr__(self, name):
        return getattr(ampjit, name)

    @staticmethod
    def arange(*args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return ampjit.arange(*args, **kwargs)


OUTER_STATES = {"no_autocast": None, "cuda_f16": ampjit.float16, "cuda_bf16": ampjit.bfloat16}


def observe_under(prog, torch, dtype):
    if dtype is None:
        return observe(prog, torch)
    with ampjit.autocast("cuda", dtype=dtype):
        return observe(prog, torch)


@pytest.fixture
def eager_semantics():
    prev = ampjit.jit.set_autocast_semantics("eager")
    try:
        yield
    finally:
        ampjit.jit.set_autocast_semantics(prev)
        assert not ampjit.is_autocast_enabled() and not ampjit.is_autocast_cpu_enabled()


@pytest.mark.parametrize("state", sorted(OUTER_STATES))
@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program_on_cuda_equals_its_eager_run(name, state, eager_semantics):
    prog = programs.PROGRAMS[name]
    on_cuda = OnCuda()
    # A program that re-enters a `with ... as ac` instance is eager code only under the torch-2
    # profile (torch 1.13's `as` binds None), as its CPU row (test_uncommon_as_binding).
    profile = TORCH_2.apply() if name == "uncommon_as_binding" else contextlib.nullcontext()
    with profile:
        got = observe_under(prog, on_cuda, OUTER_STATES[state])
        want = observe_under(prog, EagerTorch(on_cuda), OUTER_STATES[state])
    if want.error is None:
        # The program really ran on the GPU.
        assert any(True for _ in want.leaves), "{} returned nothing".format(name)
    diff = same_result(got, want)
    assert diff is None, "ampjit (eager, cuda, {}) {} != eager Python {}: {}".format(
        state, got.summary(), want.summary(), diff)
    assert_warnings(got, prog, [], "ampjit (eager, cuda)")


def test_on_cuda_is_the_ampjit_namespace_to_script():
    # Without a GPU this module is skipped; this test documents what script sees.
    from ampjit.jit._script import _describe
    assert _describe(OnCuda()) == ("namespace", "torch")
