"""ampjit demo: eager mixed precision with `import ampjit as torch`.

Shows the dtypes ops produce inside and outside autocast regions, nesting and disabled
sub-regions, the policy classes, a small nn model, a per-op policy override, a trace, and CUDA
(autocast regions on the GPU, or why CUDA is not available here).
"""
import ampjit as torch


def show(label, t):
    print("  {:<46} -> {}".format(label, repr(t.dtype)))


def main():
    torch.manual_seed(0)
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    print("Outside any autocast region (float32 inputs):")
    show("torch.mm(a, b)", torch.mm(a, b))

    print("\nInside torch.autocast('cpu') (default dtype bfloat16, profile {}):".format(
        torch.amp.get_autocast_profile()))
    with torch.autocast("cpu"):
        show("torch.mm(a, b)            [lower_precision_fp]", torch.mm(a, b))
        show("mse_loss(a, b)            [fp32]", torch.nn.functional.mse_loss(a.bfloat16(), b))
        show("torch.exp(a)              [no policy]", torch.exp(a))
        show("torch.stack([a, b.bf16])  [promote]", torch.stack([a, b.bfloat16()]))
        show("torch.mm(a.double(), b.double())  [float64 is never cast]", torch.mm(a.double(), b.double()))
        with torch.autocast("cpu", enabled=False):
            show("nested autocast(enabled=False): torch.mm(a, b)", torch.mm(a, b))
        show("back in the outer region: torch.mm(a, b)", torch.mm(a, b))

    print("\nA small model (Linear -> ReLU -> LayerNorm -> Linear) under autocast:")
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.LayerNorm(16),
                                torch.nn.Linear(16, 4))
    print("  " + repr(model).replace("\n", "\n  "))
    x = torch.randn(2, 8)
    with torch.autocast("cpu"):
        y = model(x)
    show("model(x) under autocast", y)
    show("model(x) without autocast", model(x))
    diff = (y.float() - model(x)).abs().max().item()
    print("  max |bfloat16 result - float32 result| = {:.4f}".format(diff))
    print(y)

    print("\nPer-op override (pytorch issue 75956): run aten::exp in lower precision on cpu")
    torch.amp.set_op_policy("cpu", "aten::exp", "lower_precision_fp")
    with torch.autocast("cpu"):
        show("torch.exp(a) with the override", torch.exp(a))
    torch.amp.reset_op_policy("cpu", "aten::exp")

    print("\njit.trace under autocast: the casts are baked into the graph as aten::to nodes")
    model.eval()
    with torch.autocast("cpu", cache_enabled=False):
        traced = torch.jit.trace(model, x)
    print("  " + traced.graph.str(False).replace("\n", "\n  "))
    print("  " + traced.code.replace("\n", "\n  "))
    show("traced(x), called without autocast", traced(x))
    print("  traced(x) equals model(x) under autocast:",
          traced(x).float().tolist() == y.float().tolist())

    print("\nCUDA:")
    if not torch.cuda.is_available():
        print("  not available here ({}); device='cuda' raises a clear RuntimeError".format(
            torch._C._cuda_unavailable_reason()))
        return
    print("  {} device(s)".format(torch.cuda.device_count()))
    ga, gb = a.cuda(), b.cuda()
    with torch.autocast("cuda"):
        show("torch.mm(a.cuda(), b.cuda()) under autocast('cuda')", torch.mm(ga, gb))
        with torch.autocast("cpu"):
            show("  and torch.mm(a, b) under a nested autocast('cpu')", torch.mm(a, b))
    gmodel = model.cuda()
    with torch.autocast("cuda"):
        show("model.cuda()(x.cuda()) under autocast('cuda')", gmodel(x.cuda()))
    torch.cuda.synchronize()
    print("  allocated {} bytes, reserved {} bytes".format(torch.cuda.memory_allocated(),
                                                           torch.cuda.memory_reserved()))


if __name__ == "__main__":
    main()
    # The limitation matrix (docs/limitations.md), each row's program run live in both autocast semantics
    # (tools/demo_matrix.py; the rows are docs/limitations.md's, the programs tests/conformance/programs.py).
    print("\n")
    import demo_matrix
    demo_matrix.main([])
