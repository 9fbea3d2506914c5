#!/usr/bin/env python3
"""The limitation matrix, run live: for each row of docs/limitations.md, the row's program
(tests/conformance/programs.py) runs under ampjit in `torchscript` and in `eager` semantics, and the
table shows PyTorch 1.13's documented behavior (the row's text) next to what ampjit does, observed
now: output dtypes, or the error, and the AutocastInteropWarnings; the `eager` column also says
whether the result equals the same Python run eagerly (dtypes and values, bit for bit).

    PYTHONPATH=build/python /usr/bin/python3 tools/demo_matrix.py [--section WORD] [--width N] [--source]
"""
import argparse
import inspect
import os
import re
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_limitations  # noqa: E402  (tools/: the rows, in the doc's order)

_PATH = re.compile(r"(/[^\s:]+/)([^/\s:]+\.py)")


def _short(text):
    """Absolute paths reduced to file names."""
    return _PATH.sub(lambda m: m.group(2), text)


def describe(obs):
    """What one run did, in a few words."""
    if obs.error is not None:
        lines = str(obs.error).splitlines() or [""]
        text = "{}: {}".format(type(obs.error).__name__, _short(lines[0]))
        loc = re.search(r"([^/\s]+\.py):(\d+):(\d+)", str(obs.error))
        if loc and loc.group(0) not in text:
            text += " [at {}:{}]".format(loc.group(1), loc.group(2))
    else:
        parts = [repr(leaf) for leaf in obs.leaves]
        text = ", ".join(parts) if parts else "(nothing)"
    for w in obs.interop_warnings():
        text += "; AutocastInteropWarning at {}:{}: {}".format(
            os.path.basename(w.filename), w.lineno, _short(str(w.message)).split(" (PyTorch")[0])
    return text


def observe_in(semantics, prog):
    import ampjit
    from harness import observe
    prev = ampjit.jit.set_autocast_semantics(semantics)
    try:
        return observe(prog, ampjit)
    finally:
        ampjit.jit.set_autocast_semantics(prev)


def table(rows, widths):
    """Rows of cells as a text table, each cell wrapped to its column's width."""
    out = []
    for cells in rows:
        wrapped = [textwrap.wrap(c, w) or [""] for c, w in zip(cells, widths)]
        for i in range(max(len(w) for w in wrapped)):
            out.append("  ".join((w[i] if i < len(w) else "").ljust(width)
                                 for w, width in zip(wrapped, widths)).rstrip())
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description="Runs the limitation matrix's programs live.")
    parser.add_argument("--section", default=None, help="only the sections whose name contains this word")
    parser.add_argument("--width", type=int, default=160, help="table width (default 160)")
    parser.add_argument("--source", action="store_true", help="print each row's program before its row")
    args = parser.parse_args(argv)

    entries = gen_limitations.ordered_rows()  # imports the conformance modules (tests/conformance on sys.path)
    import ampjit
    import programs
    from harness import EagerTorch, observe, same_result

    if args.section:
        entries = [e for e in entries if args.section.lower() in e["section"].lower()]
    name_w = min(46, max(len(e["test"].split("::")[1]) - 5 for e in entries) if entries else 10)
    rest = max(60, args.width - name_w - 6)
    widths = [name_w, rest * 36 // 100, rest * 34 // 100, rest - rest * 36 // 100 - rest * 34 // 100]
    header = ["row: its program", "PyTorch 1.13 (documented)", "ampjit torchscript (observed now)",
              "ampjit eager (observed now)"]
    print("The limitation matrix (docs/limitations.md): {} rows, each row's program run now under ampjit in both "
          "semantics (docs/limitations.md has every column's text)".format(len(entries)))
    section = None
    warned = equal = unexpected = 0
    for entry in entries:
        if entry["section"] != section:
            section = entry["section"]
            print("\n== {} ==".format(section))
            print("\n".join(table([header], widths)))
            print("  ".join("-" * w for w in widths))
        name = entry["test"].split("::")[1][5:]
        prog = programs.PROGRAMS[name]
        ts = observe_in("torchscript", prog)
        eg = observe_in("eager", prog)
        eager_python = observe(prog, EagerTorch(ampjit))
        same = same_result(eg, eager_python, exact=True) is None
        known = gen_limitations.xfail_reason(gen_limitations.test_function(entry))
        warned += bool(ts.interop_warnings())
        equal += same
        unexpected += not same and known is None
        verdict = "  [= eager Python]" if same else "  [differs from eager Python{}]".format(
            ": a known ampjit bug, see docs/limitations.md" if known is not None else "!")
        if args.source:
            print(textwrap.indent(inspect.getsource(prog), "    | ", lambda line: True).rstrip())
        what = (prog.__doc__ or "").strip().split("\n\n")[0]
        print("\n".join(table([[name + ": " + " ".join(what.split()), entry["pytorch"], describe(ts),
                                describe(eg) + verdict]], widths)))
    print("\n{} rows; `torchscript` warned (AutocastInteropWarning) on {}; `eager` equal to eager Python on {} "
          "of {}.".format(len(entries), warned, equal, len(entries)))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
