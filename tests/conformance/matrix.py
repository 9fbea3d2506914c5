"""The limitation matrix as data: every conformance test declares the row of the limitation matrix (docs/limitations.md) it shows.

    @row("Mixing tracing and scripting autocast (script calling traced)",
         pytorch="...", torchscript="...", eager="...")
    def test_traced_disable_is_stripped(semantics):
        ...

Each row is one behavior of one section of the limitation matrix ("JIT scripting & Autocast", Known
limitations), with three columns: what PyTorch 1.13 does, what ampjit does in `torchscript`
semantics, and in `eager` semantics. The registry (``rows()``, ``markdown()``) is what
docs/limitations.md is generated from or checked against, so the table cannot drift from the tests.
"""
import pytest

# Seed 000's sections, in its order (its TOC also names "Mixing eager mode and scripting autocast").
SECTIONS = (
    "Usage",
    "Diagnostics",
    "Autocast decorators",
    "Autocast argument must be a compile-time constant",
    "Uncommon autocast usage patterns may not be supported",
    "Limited support for promote autocast policy",
    "Missing autocast policies",
    "Mixing eager mode and scripting autocast",
    "Mixing tracing and scripting autocast (script calling traced)",
    "Mixing tracing and scripting autocast (traced calling script)",
    "Disabling eager autocast with scripted autocast",
)

_ROWS = []


def row(section, *, pytorch, torchscript, eager):
    """Declares the matrix row a test shows. The test runs once per semantics (its `semantics`
    fixture) and asserts the matching column."""
    if section not in SECTIONS:
        raise ValueError("unknown seed-000 section {!r}; one of: {}".format(section, ", ".join(SECTIONS)))
    for name, text in (("pytorch", pytorch), ("torchscript", torchscript), ("eager", eager)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError("row {!r}: the {} column must be a non-empty sentence".format(section, name))

    def decorate(test):
        entry = {"section": section, "pytorch": pytorch, "torchscript": torchscript, "eager": eager,
                 "test": "{}::{}".format(test.__module__, test.__name__)}
        _ROWS.append(entry)
        return pytest.mark.matrix_row(**entry)(test)
    return decorate


def rows():
    """The declared rows, in seed order, then declaration order."""
    return sorted(_ROWS, key=lambda r: SECTIONS.index(r["section"]))


def markdown(entries=None):
    """The matrix as a Markdown table (the body of docs/limitations.md): of `entries` (rows() by
    default), in their order."""
    def cell(s):
        return " ".join(s.split()).replace("|", "\\|")
    lines = ["| Row | PyTorch 1.13 | `torchscript` | `eager` | Test |", "|---|---|---|---|---|"]
    for r in (rows() if entries is None else entries):
        lines.append("| {} | {} | {} | {} | `{}` |".format(*(cell(r[k]) for k in
                                                            ("section", "pytorch", "torchscript", "eager", "test"))))
    return "\n".join(lines) + "\n"
