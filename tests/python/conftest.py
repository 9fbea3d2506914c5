"""Shared pytest fixtures for ampjit's Python tests.

Differential tests use the real PyTorch (1.13 with Debian's /usr/bin/python3) as the oracle. Only
tests import torch; the ampjit package never does.
"""
import textwrap

import pytest


@pytest.fixture(scope="session")
def torch_ref():
    """The real torch module; the test is skipped, saying why, where PyTorch is not installed."""
    try:
        import torch
    except ImportError:
        pytest.skip("differential test: the real PyTorch is not installed to serve as the oracle")
    return torch


@pytest.fixture(scope="session")
def run_as_torch_program(torch_ref):
    """Runs the source of a program written with ``import ampjit as torch`` twice: as written, and
    with the real torch in its place (every ``ampjit`` in the source becomes ``torch``). Returns the
    two module namespaces (ampjit's, torch's)."""
    def run(source):
        source = textwrap.dedent(source)
        ns_ampjit = {"__name__": "ampjit_program"}
        ns_torch = {"__name__": "torch_program"}
        exec(compile(source, "<ampjit program>", "exec"), ns_ampjit)
        exec(compile(source.replace("ampjit", "torch"), "<torch program>", "exec"), ns_torch)
        return ns_ampjit, ns_torch
    return run


@pytest.fixture(scope="module")
def program_modules(tmp_path_factory):
    """load(name, source) -> [(module, library)]: the source of a program written with
    ``import ampjit as torch``, imported from a file (script needs source) as written, and, where
    PyTorch is installed, with torch in its place. The modules are removed from sys.modules after
    the test module."""
    import importlib.util
    import sys
    import ampjit
    root = tmp_path_factory.mktemp("programs")
    names = []

    def load(name, source):
        try:
            import torch as real_torch
        except ImportError:
            real_torch = None
        out = []
        for suffix, lib in (("ampjit", ampjit), ("torch", real_torch)):
            if lib is None:
                continue
            mod_name = "{}_{}".format(name, suffix)
            path = root / (mod_name + ".py")
            path.write_text(source if lib is ampjit else source.replace("ampjit", "torch"))
            spec = importlib.util.spec_from_file_location(mod_name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = mod
            names.append(mod_name)
            spec.loader.exec_module(mod)
            out.append((mod, lib))
        return out
    yield load
    for n in names:
        sys.modules.pop(n, None)


@pytest.fixture
def import_source(tmp_path):
    """load(name, text) -> the module of a file `name`.py holding `text` (script and torch need
    source they can read from a file)."""
    import importlib.util

    def load(name, text):
        path = tmp_path / (name + ".py")
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load


@pytest.fixture
def script_error_of(import_source):
    """error(name, source) -> (text of the CompileError scripting `f` of that file, the file's path)."""
    import ampjit
    from ampjit.jit import CompileError

    def error(name, source):
        mod = import_source(name, source)
        with pytest.raises(CompileError) as e:
            ampjit.jit.script(mod.f)
        return str(e.value), mod.__file__
    return error
