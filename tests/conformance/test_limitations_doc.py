"""docs/limitations.md is the matrix of the rows declared here, and the matrix is complete.

The doc is rendered by tools/gen_limitations.py from the `@row` declarations of every test module;
this test renders it again and fails when the file differs (the message says how to regenerate).
Every seed-000 section has a row, and every row's program is in programs.py (the demo runs it).
"""
import importlib.util
import os

import ampjit
import programs
from matrix import SECTIONS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def generator():
    spec = importlib.util.spec_from_file_location("gen_limitations", os.path.join(ROOT, "tools", "gen_limitations.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def test_doc_matches_the_rows():
    gen = generator()
    with open(gen.DOC) as f:
        doc = f.read()
    python_dir = os.path.relpath(os.path.dirname(os.path.dirname(ampjit.__file__)), ROOT)
    assert doc == gen.render(), (
        "docs/limitations.md differs from the conformance rows; regenerate it with:\n"
        "  cd {} && PYTHONPATH={} /usr/bin/python3 tools/gen_limitations.py".format(ROOT, python_dir))


def test_every_section_has_a_row():
    rows = generator().ordered_rows()
    missing = [s for s in SECTIONS if not any(r["section"] == s for r in rows)]
    assert not missing, "seed-000 sections without a row: {}".format(missing)


def test_rows_and_programs_match():
    """test_<name> shows programs.<name> (the demo finds a row's program by that name), and every
    program is some row's."""
    rows = generator().ordered_rows()
    names = [r["test"].split("::")[1] for r in rows]
    assert len(set(names)) == len(names), "two rows share a test name"
    without = [n for n in names if n[5:] not in programs.PROGRAMS]
    assert not without, "rows without a program in programs.py: {}".format(without)
    unused = sorted(set(programs.PROGRAMS) - {n[5:] for n in names})
    assert not unused, "programs no row shows: {}".format(unused)
