"""device="cuda" from Python: ampjit.cuda's API, tensors moved between devices, kernels against the
CPU kernels, CUDA autocast (float16 by default, bfloat16 allowed, independent of CPU autocast), and
the tracer, the script compiler and eager code on CUDA tensors under every autocast state.

Without a GPU (or without the CUDA backend) the GPU tests are skipped, saying why, and the tests of
the "unavailable" behavior run instead: a clear RuntimeError, never a crash.
"""
import warnings

import numpy as np
import pytest

import ampjit as torch

HAVE_CUDA = torch.cuda.is_available()
REASON = "no CUDA device: " + torch._C._cuda_unavailable_reason()
gpu = pytest.mark.skipif(not HAVE_CUDA, reason=REASON)
no_gpu = pytest.mark.skipif(HAVE_CUDA, reason="a CUDA device is present")

# Relative tolerance per dtype for a CUDA result against the CPU kernel on the same inputs.
TOL = {torch.float32: 2e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def close(got, want, rtol=None, atol=1e-5):
    assert got.device.type == "cpu" and want.device.type == "cpu"
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g = got.to(torch.float64).numpy() if got.is_floating_point() else got.numpy()
    w = want.to(torch.float64).numpy() if want.is_floating_point() else want.numpy()
    if not got.is_floating_point():
        np.testing.assert_array_equal(g, w)
        return
    np.testing.assert_allclose(g, w, rtol=rtol if rtol is not None else TOL[got.dtype], atol=atol)


# ---- Without a GPU ----------------------------------------------------------------------------

@no_gpu
def test_unavailable_api_reports_why():
    assert torch.cuda.is_available() is False
    assert torch.cuda.device_count() == 0
    assert torch._C._cuda_unavailable_reason() != ""
    with pytest.raises(RuntimeError, match=r"ampjit.cuda.synchronize\(\): CUDA is not available: "):
        torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        torch.cuda.memory_allocated()
    torch.cuda.empty_cache()  # a no-op, as in torch
    torch.cuda.manual_seed(0)


@no_gpu
@pytest.mark.parametrize("make", [
    lambda: torch.zeros(2, 3, device="cuda"),
    lambda: torch.randn(4, device="cuda"),
    lambda: torch.arange(5, device="cuda"),
    lambda: torch.ones(2).cuda(),
    lambda: torch.ones(2).to("cuda"),
    lambda: torch.tensor([1.0, 2.0], device="cuda"),
])
def test_unavailable_device_tensors_raise_a_clear_error(make):
    with pytest.raises(RuntimeError, match="CUDA is not available|cuda"):
        make()
    # Nothing was left half-done: CPU work goes on.
    assert torch.ones(2).add(1).tolist() == [2.0, 2.0]


@no_gpu
def test_unavailable_cuda_autocast_warns_and_disables():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with torch.autocast("cuda"):
            assert not torch.is_autocast_enabled()
    assert any("CUDA is not available" in str(x.message) for x in w)


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(torch.cuda.OutOfMemoryError, RuntimeError)


# ---- With a GPU --------------------------------------------------------------------------------

@gpu
def test_devices_and_copies():
    x = torch.randn(3, 4)
    for y in (x.cuda(), x.to("cuda"), x.to("cuda:0"), x.to(torch.device("cuda"))):
        assert y.device.type == "cuda" and y.is_cuda
        assert y.dtype == x.dtype
        assert torch.equal(y.cpu(), x)
    h = x.to("cuda", torch.float16)
    assert h.dtype == torch.float16 and h.is_cuda
    close(h.cpu(), x.to(torch.float16))
    t = x.t().cuda()  # a non-contiguous source
    assert torch.equal(t.cpu(), x.t())
    assert torch.zeros(2, 3, device="cuda").cpu().tolist() == [[0.0] * 3] * 2
    assert torch.tensor([1, 2], device="cuda").cpu().tolist() == [1, 2]
    assert torch.arange(5, device="cuda").cpu().tolist() == list(range(5))
    assert x.cuda().sum().item() == pytest.approx(float(x.sum().item()), rel=1e-5)
    assert "device='cuda:0'" in repr(torch.ones(1, device="cuda"))


@gpu
def test_pickle_deepcopy_numpy_and_assert_close_on_cuda():
    import copy
    import pickle
    x = torch.randn(3, 4).to(torch.bfloat16).cuda().t()
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.is_cuda and y.dtype == x.dtype and torch.equal(y.cpu(), x.cpu())
    with pytest.raises(TypeError, match="can't convert cuda"):
        np.asarray(x.float())
    with pytest.raises(AssertionError, match="The values for attribute 'device' do not match: cuda:0 != cpu."):
        torch.testing.assert_close(x, x.cpu())
    torch.testing.assert_close(x, x.cpu(), check_device=False)


@gpu
def test_mixed_device_error_names_both_devices():
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, but found "
                                           r"at least two devices, cuda:0 and cpu!|cpu and cuda:0!"):
        torch.ones(2, device="cuda") + torch.ones(2)
    # A 0-dim CPU tensor may join CUDA tensors, as in torch.
    assert (torch.ones(2, device="cuda") + torch.tensor(1.0)).cpu().tolist() == [2.0, 2.0]


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "neg", "abs", "floor",
         "erf", "reciprocal", "rsqrt"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "eq", "lt", "ge"]


@gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_pointwise_against_cpu(dtype):
    a = torch.rand(5, 7, dtype=torch.float32).add(0.5).to(dtype)
    b = torch.rand(7, dtype=torch.float32).add(0.5).to(dtype)
    for name in UNARY:
        close(getattr(torch, name)(a.cuda()).cpu(), getattr(torch, name)(a))
    for name in BINARY:
        close(getattr(torch, name)(a.cuda(), b.cuda()).cpu(), getattr(torch, name)(a, b))
    close((a.cuda() * 2.5 - 1).cpu(), a * 2.5 - 1)
    close(torch.where(a.cuda() > 1, a.cuda(), b.cuda()).cpu(), torch.where(a > 1, a, b))
    close(torch.clamp(a.cuda(), 0.7, 1.2).cpu(), torch.clamp(a, 0.7, 1.2))


@gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_reductions_norms_and_products_against_cpu(dtype):
    torch.manual_seed(0)
    x = torch.randn(4, 6, 8).to(dtype)
    xc = x.cuda()
    rtol = {torch.float32: 1e-4, torch.float16: 5e-3, torch.bfloat16: 3e-2}[dtype]
    close(xc.sum(-1).cpu(), x.sum(-1), rtol, 1e-3)
    close(xc.mean((0, 2)).cpu(), x.mean((0, 2)), rtol, 1e-3)
    close(xc.amax(1).cpu(), x.amax(1), rtol)
    close(torch.softmax(xc, -1).cpu(), torch.softmax(x, -1), rtol, 1e-4)
    close(torch.log_softmax(xc, 1).cpu(), torch.log_softmax(x, 1), rtol, 1e-3)
    w, bias = torch.randn(8).to(dtype), torch.randn(8).to(dtype)
    close(torch.nn.functional.layer_norm(xc, (8,), w.cuda(), bias.cuda()).cpu(),
          torch.nn.functional.layer_norm(x, (8,), w, bias), rtol, 1e-2)
    m = torch.randn(8, 5).to(dtype)
    close((xc @ m.cuda()).cpu(), x @ m, rtol * 10, 1e-2)
    close(torch.cat([xc, xc], 1).cpu(), torch.cat([x, x], 1))
    idx = torch.tensor([2, 0, 3])
    close(xc.index_select(0, idx.cuda()).cpu(), x.index_select(0, idx))


@gpu
def test_conv_and_embedding_against_cpu():
    torch.manual_seed(1)
    x, w, b = torch.randn(2, 3, 9, 9), torch.randn(4, 3, 3, 3), torch.randn(4)
    F = torch.nn.functional
    close(F.conv2d(x.cuda(), w.cuda(), b.cuda(), padding=1, stride=2).cpu(),
          F.conv2d(x, w, b, padding=1, stride=2), 1e-4, 1e-4)
    table, ids = torch.randn(10, 4), torch.tensor([[1, 9], [0, 3]])
    close(F.embedding(ids.cuda(), table.cuda()).cpu(), F.embedding(ids, table))


@gpu
def test_cuda_autocast_policies():
    a, b = torch.randn(8, 8, device="cuda"), torch.randn(8, 8, device="cuda")
    with torch.autocast("cuda"):
        assert torch.mm(a, b).dtype == torch.float16  # lower_precision_fp, float16 by default
        assert torch.softmax(torch.mm(a, b), -1).dtype == torch.float32  # float32 policy
        assert (a + b).dtype == torch.float32  # unlisted
        ha = a.half()
        assert torch.cat([ha, b]).dtype == torch.float32  # promote
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert torch.mm(a, b).dtype == torch.bfloat16
    want = torch.mm(a, b).cpu()  # float32, outside autocast
    with torch.cuda.amp.autocast():
        got = torch.mm(a, b)
    assert got.dtype == torch.float16
    close(got.float().cpu(), want, 1e-2, 1e-2)
    with torch.autocast("cuda"):
        with pytest.raises(RuntimeError, match="binary_cross_entropy"):
            torch.nn.functional.binary_cross_entropy(torch.rand(3, device="cuda"),
                                                     torch.rand(3, device="cuda"))


@gpu
def test_cpu_and_cuda_regions_nest_independently():
    c, g = torch.randn(4, 4), torch.randn(4, 4, device="cuda")
    with torch.autocast("cpu"):
        assert torch.mm(c, c).dtype == torch.bfloat16
        assert torch.mm(g, g).dtype == torch.float32  # cpu autocast leaves cuda tensors alone
        with torch.autocast("cuda"):
            assert torch.mm(g, g).dtype == torch.float16
            assert torch.mm(c, c).dtype == torch.bfloat16
            with torch.autocast("cpu", enabled=False):
                assert torch.mm(c, c).dtype == torch.float32
                assert torch.mm(g, g).dtype == torch.float16
    with torch.autocast("cuda"):
        assert torch.mm(c, c).dtype == torch.float32


def _mlp(x, w1, w2):
    h = torch.relu(torch.mm(x, w1) + 1.0)
    return torch.softmax(torch.mm(h, w2), -1)


@gpu
@pytest.mark.parametrize("state", [None, torch.float16, torch.bfloat16])
def test_eager_scripted_and_traced_agree_on_cuda(state):
    torch.manual_seed(3)
    x, w1, w2 = (torch.randn(16, 32, device="cuda"), torch.randn(32, 64, device="cuda"),
                 torch.randn(64, 10, device="cuda"))
    scripted = torch.jit.script(_mlp)
    traced = torch.jit.trace(_mlp, (x, w1, w2))

    def run(f):
        if state is None:
            return f(x, w1, w2)
        with torch.autocast("cuda", dtype=state):
            return f(x, w1, w2)
    eager, s, t = run(_mlp), run(scripted), run(traced)
    assert s.device.type == "cuda" and t.device.type == "cuda"
    assert s.dtype == eager.dtype and t.dtype == eager.dtype
    close(s.cpu(), eager.cpu(), 1e-2 if state else 1e-5, 1e-3)
    close(t.cpu(), eager.cpu(), 1e-2 if state else 1e-5, 1e-3)


@gpu
def test_scripted_cuda_autocast_region():
    @torch.jit.script
    def f(a, b):
        with torch.cuda.amp.autocast():
            c = torch.mm(a, b)
        return c
    a = torch.randn(4, 4, device="cuda")
    assert f(a, a).dtype == torch.float16
    assert f(a.cpu(), a.cpu()).dtype == torch.float32  # the cuda region leaves cpu tensors alone


@gpu
def test_manual_seed_and_memory():
    torch.manual_seed(7)
    a = torch.randn(1000, device="cuda")
    torch.cuda.manual_seed(7)
    b = torch.randn(1000, device="cuda")
    assert torch.equal(a.cpu(), b.cpu())
    u = torch.rand(1 << 16, device="cuda").cpu()
    assert 0.0 <= float(u.min().item()) and float(u.max().item()) < 1.0
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    with pytest.raises(torch.cuda.OutOfMemoryError, match="CUDA out of memory. Tried to allocate"):
        torch.empty(1 << 48, dtype=torch.uint8, device="cuda")
    assert torch.cuda.memory_allocated() == before  # the allocator is left usable and unchanged
    assert torch.ones(4, device="cuda").sum().item() == 4.0


@gpu
def test_training_steps_on_cuda_match_the_cpu():
    """Autograd on CUDA tensors (issue 18): a small MLP trained with SGD on CUDA, float32 and under
    CUDA autocast (float16) with torch.amp.GradScaler("cuda"), against the same steps on the CPU in
    float32: the gradients of the first step and the loss after five steps."""
    def run(device, amp):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.amp.GradScaler(device, enabled=amp)
        x = torch.randn(32, 8).to(device)
        y = torch.randn(32, 4).to(device)
        grads, losses = None, []
        for _ in range(5):
            opt.zero_grad()
            with torch.autocast(device, enabled=amp):
                out = model(x)
            loss = ((out.float() - y) ** 2).mean()
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            if grads is None:
                grads = [p.grad.detach().cpu().clone() for p in model.parameters()]
            scaler.step(opt)
            scaler.update()
            losses.append(float(loss))
        return grads, losses
    ref_grads, ref_losses = run("cpu", False)
    for amp, tol in ((False, 1e-4), (True, 2e-2)):
        grads, losses = run("cuda", amp)
        for g, r in zip(grads, ref_grads):
            assert g.dtype == torch.float32
            close(g, r, tol, tol)
        np.testing.assert_allclose(losses, ref_losses, rtol=tol * 10, atol=tol * 10)
