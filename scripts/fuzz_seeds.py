#!/usr/bin/env python3
"""Seed corpora for the libFuzzer harnesses (scripts/fuzz.sh). Usage: fuzz_seeds.py OUT [DUMP]

OUT/seeds-script: every .py file of the repository, and every C++ test string that holds a `def`.
OUT/seeds-graph: every .graph golden file (its graph), every C++ test string that holds a `graph(`, and, with
DUMP (an ampjit-dump binary), each graph it prints for the golden dump inputs (tests/golden/dump).
OUT/seeds-zip: archives laid out as torch.save and torch.jit.save write them (zip_seeds).
OUT/seeds-pickle: pickles as torch writes them (pickle_seeds).
OUT/seeds-torchcode: saved code in torch's serialized dialect (tests/fuzz/seeds_torchcode/*.py).
"""
import hashlib
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# One C++ token that matters here: a comment, a char literal, a raw or plain string literal.
TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|\'(?:\\.|[^\\\'])*\'|R"([^(\s]*)\((.*?)\)\1"|"((?:\\.|[^\\"\n])*)"',
    re.S)


def cpp_strings(text):
    """The string literals of a C++ file, adjacent ones joined, escapes decoded."""
    strings, parts, end = [], [], None
    for m in TOKEN.finditer(text):
        if m.group(2) is None and m.group(3) is None:
            continue  # a comment or a char literal
        value = m.group(2) if m.group(2) is not None else decode(m.group(3))
        if parts and text[end:m.start()].strip() == "":
            parts.append(value)
        else:
            if parts:
                strings.append("".join(parts))
            parts = [value]
        end = m.end()
    if parts:
        strings.append("".join(parts))
    return strings


def decode(body):
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def tracked(*patterns):
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return [ROOT / p for p in out.split()]


def write(directory, text):
    data = text.encode("utf-8", "surrogateescape")
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    out = pathlib.Path(sys.argv[1])
    script, graph = out / "seeds-script", out / "seeds-graph"
    for d in (script, graph):
        d.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():
            f.unlink()
    for f in tracked("*.py"):
        write(script, f.read_text(errors="surrogateescape"))
    for f in tracked("*.graph"):  # without the comment and CHECK lines, as the golden tests read them
        lines = f.read_text(errors="surrogateescape").splitlines(keepends=True)
        write(graph, "".join(line for line in lines if not line.startswith("#")))
    for f in tracked("tests/cpp/*.cpp"):
        for s in cpp_strings(f.read_text(errors="surrogateescape")):
            if "def " in s:
                write(script, s)
            if "graph(" in s:
                write(graph, s)
    if len(sys.argv) > 2:
        for f in tracked("tests/golden/dump/*.py"):
            run = subprocess.run([sys.argv[2], str(f), "--passes", "all"], capture_output=True,
                                 text=True, errors="surrogateescape", timeout=60)
            for chunk in re.split(r"^# .*\n", run.stdout, flags=re.M):
                if chunk.startswith("graph("):
                    write(graph, chunk)
    torchcode = out / "seeds-torchcode"
    torchcode.mkdir(parents=True, exist_ok=True)
    for f in torchcode.iterdir():
        f.unlink()
    for f in tracked("tests/fuzz/seeds_torchcode/*.py"):
        write(torchcode, f.read_text(errors="surrogateescape"))
    zips, pickles = out / "seeds-zip", out / "seeds-pickle"
    for directory, blobs in ((zips, zip_seeds()), (pickles, pickle_seeds())):
        directory.mkdir(parents=True, exist_ok=True)
        for f in directory.iterdir():
            f.unlink()
        for data in blobs:
            (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
    print(f"fuzz: seeds: {sum(1 for _ in script.iterdir())} scripts, "
          f"{sum(1 for _ in graph.iterdir())} graphs, {sum(1 for _ in zips.iterdir())} archives, "
          f"{sum(1 for _ in pickles.iterdir())} pickles, {sum(1 for _ in torchcode.iterdir())} saved codes")


def pickle_seeds():
    """Pickles as torch writes them: containers of every kind, and a tensor (torch._utils's rebuild
    call on a persistent storage reference, as in torch.save's data.pkl), a state dict's
    OrderedDict with its _metadata, dtypes, a device and a Size."""
    import pickle
    plain = [
        {"a": [1, 2.5, "text", None, True, False], "b": (1, (2, 3)), "c": {"nested": [[], {}]}},
        [2 ** 40, -7, 0.0, -1.5e300, "é"],
    ]
    seeds = [pickle.dumps(p, protocol=2) for p in plain] + [pickle.dumps(plain[0], protocol=4)]
    tensor = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
              b"q\x01X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x06tQK\x00K\x02K\x03\x86K\x03K\x01\x86\x89"
              b"ccollections\nOrderedDict\n)RtR.")
    state_dict = (b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01X\x06\x00\x00\x00weightctorch\nfloat16\n"
                  b"s}X\t\x00\x00\x00_metadata}sb.")
    misc = b"\x80\x02(ctorch\ndevice\nX\x03\x00\x00\x00cpu\x85Rctorch\nSize\nK\x02K\x03\x86\x85Rt."
    return seeds + [tensor, state_dict, misc]


def zip_seeds():
    """Archives laid out as torch.save writes them (stored, as torch does, and deflated, as other
    writers may), a TorchScript-like one with code/ and constants.pkl, and one with a folder entry."""
    import io
    import struct
    import zipfile
    layouts = [
        {"data.pkl": b"\x80\x02}q\x00.", "data/0": struct.pack("<4f", 1, 2, 3, 4), "version": b"3\n"},
        {"data.pkl": b"\x80\x02N.", "constants.pkl": b"\x80\x02).", "version": b"3\n",
         "code/__torch__/m.py": b"def forward(self, x):\n    return x\n"},
    ]
    seeds = []
    for layout in layouts:
        for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", compression=method) as z:
                for name, data in layout.items():
                    z.writestr("archive/" + name, data)
            seeds.append(buf.getvalue())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/", b"")
        z.writestr("archive/data.pkl", b"\x80\x02N.")
    seeds.append(buf.getvalue())
    return seeds


if __name__ == "__main__":
    main()
