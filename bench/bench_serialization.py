"""torch.save / torch.load of resnet50's state dict, and torch.jit.load of resnet50 scripted and traced
by torch 1.13 (the load, and the load plus the first forward, which compiles), torch 1.13 and ampjit
side by side in one run (docs/serialization.md): median milliseconds of 7 calls after one warm-up,
and torch / ampjit."""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))


def timed(f, n=7):
    f()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main():
    import ampjit
    import torch
    import torchvision
    import harness
    print("CPU:", " ".join(harness.cpu_description()))
    work = tempfile.mkdtemp(prefix="ampjit-bench-")
    path = os.path.join(work, "resnet50.pt")
    torch.save(torchvision.models.resnet50().state_dict(), path)
    print("file: {:.1f} MB".format(os.path.getsize(path) / 1e6))

    def cpp_load():
        archive = ampjit._C._ZipReader(path)
        return ampjit._C._unpickle(archive.read("data.pkl"), archive)

    t_load = timed(lambda: torch.load(path))
    a_load = timed(lambda: ampjit.load(path))
    c_load = timed(cpp_load)
    print("| torch.load | {:.1f} ms | ampjit.load {:.1f} ms ({:.2f}) | C++ loader {:.1f} ms ({:.2f}) |".format(
        t_load, a_load, t_load / a_load, c_load, t_load / c_load))
    tsd, asd = torch.load(path), ampjit.load(path)
    out_t, out_a = os.path.join(work, "t.pt"), os.path.join(work, "a.pt")
    t_save = timed(lambda: torch.save(tsd, out_t))
    a_save = timed(lambda: ampjit.save(asd, out_a))
    print("| torch.save | {:.1f} ms | ampjit.save {:.1f} ms ({:.2f}) |".format(t_save, a_save, t_save / a_save))
    for f in (path, out_t, out_a):
        os.remove(f)
    model = torchvision.models.resnet50().eval()
    x = torch.randn(1, 3, 64, 64)
    xa = ampjit.from_numpy(x.numpy())
    for kind, compiled in (("scripted", torch.jit.script(model)), ("traced", torch.jit.trace(model, x))):
        path = os.path.join(work, kind + ".pt")
        compiled.save(path)
        t_load = timed(lambda: torch.jit.load(path))
        a_load = timed(lambda: ampjit.jit.load(path))
        t_first = timed(lambda: torch.jit.load(path)(x), n=3)
        a_first = timed(lambda: ampjit.jit.load(path)(xa), n=3)
        print("| torch.jit.load, resnet50 {} | {:.1f} ms | ampjit {:.1f} ms ({:.2f}) | load + first forward: "
              "torch {:.1f} ms, ampjit {:.1f} ms ({:.2f}) |".format(kind, t_load, a_load, t_load / a_load, t_first,
                                                                    a_first, t_first / a_first))
        os.remove(path)
    os.rmdir(work)


if __name__ == "__main__":
    main()
