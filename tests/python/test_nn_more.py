"""The rest of torch.nn.functional and its layers (activations, losses, distances, normalizations,
embedding bags, attention, CTC, fractional max pooling, dropout variants), against PyTorch 1.13.

Each function runs eagerly, scripted and traced in ampjit and eagerly in torch on the same inputs;
float64 and float32 results agree within rtol 1e-5, atol 1e-6 (1e-4 for the sums of CTC and the
products of bilinear). Layers have torch's constructor signatures, reprs and initial states.
Gradients are checked in float64 with gradcheck, and against torch's where the formula is torch's
(CTC). Errors are torch's classes with torch's messages.
"""
import inspect
import math

import numpy as np
import pytest

import ampjit
import ampjit.nn as nn
import ampjit.nn.functional as F

rng = np.random.default_rng(2024)


def randn(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def to_lib(lib, v):
    """NumPy arrays as `lib` tensors (copies); containers walked; anything else unchanged."""
    if isinstance(v, np.ndarray):
        return lib.from_numpy(np.ascontiguousarray(v).copy())
    if isinstance(v, (list, tuple)):
        return type(v)(to_lib(lib, x) for x in v)
    if isinstance(v, dict):
        return {k: to_lib(lib, x) for k, x in v.items()}
    return v


def npy(v):
    if isinstance(v, (list, tuple)):
        return [npy(x) for x in v]
    return v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)


def assert_close(a, e, rtol=1e-5, atol=1e-6):
    a, e = npy(a), npy(e)
    if isinstance(e, list):
        assert len(a) == len(e)
        for x, y in zip(a, e):
            assert_close(x, y, rtol, atol)
        return
    assert a.shape == e.shape, "shape {} != {}".format(a.shape, e.shape)
    assert a.dtype == e.dtype, "dtype {} != {}".format(a.dtype, e.dtype)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def ints(low, high, *shape):
    return rng.integers(low, high, shape).astype(np.int64)


# (id, F function name, positional NumPy arguments, keyword arguments, tolerance scale)
CASES = [
    ("celu", "celu", [randn(3, 4)], {"alpha": 0.7}),
    ("selu", "selu", [randn(3, 4)], {}),
    ("glu", "glu", [randn(3, 6)], {"dim": 1}),
    ("glu_neg_dim", "glu", [randn(4, 2, 5)], {"dim": -3}),
    ("prelu_channels", "prelu", [randn(2, 3, 4), np.array([0.1, -0.2, 0.3])], {}),
    ("prelu_one", "prelu", [randn(5), np.array([0.25])], {}),
    ("rrelu_eval", "rrelu", [randn(3, 4)], {"lower": 0.1, "upper": 0.3}),
    ("softshrink", "softshrink", [randn(4, 5)], {"lambd": 0.3}),
    ("hardshrink", "hardshrink", [randn(4, 5)], {"lambd": 0.3}),
    ("softsign", "softsign", [randn(4, 5)], {}),
    ("tanhshrink", "tanhshrink", [randn(4, 5)], {}),
    ("threshold", "threshold", [randn(4, 5), 0.1, 20.0], {}),
    ("threshold_int", "threshold", [ints(-9, 9, 4, 5), -2.7, 4.6], {}),
    ("logsigmoid", "logsigmoid", [randn(4, 5)], {}),
    ("gaussian_nll", "gaussian_nll_loss", [randn(4, 3), randn(4, 3), np.abs(randn(4, 1))],
     {"full": True}),
    ("gaussian_nll_homo", "gaussian_nll_loss", [randn(4, 3), randn(4, 3), np.abs(randn(4))],
     {"reduction": "sum"}),
    ("kl_div", "kl_div", [np.log(np.abs(randn(3, 4)) + 0.1), np.abs(randn(3, 4))],
     {"reduction": "batchmean"}),
    ("kl_div_log_target", "kl_div", [randn(3, 4), randn(3, 4)], {"reduction": "none", "log_target": True}),
    ("multilabel_soft_margin", "multilabel_soft_margin_loss",
     [randn(3, 5), (rng.random((3, 5)) > 0.5).astype(np.float64), np.abs(randn(5))], {}),
    ("multilabel_margin", "multilabel_margin_loss", [randn(4, 5), ints(-1, 5, 4, 5)], {}),
    ("multilabel_margin_duplicates", "multilabel_margin_loss",
     [randn(2, 4), np.array([[1, 1, 3, 1], [0, 2, -1, 3]])], {"reduction": "none"}),
    ("cosine_similarity", "cosine_similarity", [randn(4, 5), randn(4, 5)], {}),
    ("cosine_similarity_broadcast_eps", "cosine_similarity", [randn(1, 2, 3), randn(2, 1, 3)],
     {"dim": -1, "eps": 0.5}),
    ("pairwise_distance", "pairwise_distance", [randn(4, 5), randn(4, 5)], {"p": 3.0, "keepdim": True}),
    ("pdist", "pdist", [randn(5, 3)], {}),
    ("pdist_inf", "pdist", [randn(5, 3)], {"p": math.inf}),
    ("pdist_zero", "pdist", [randn(4, 3)], {"p": 0.0}),
    ("triplet_distance", "triplet_margin_with_distance_loss", [randn(4, 5), randn(4, 5), randn(4, 5)],
     {"swap": True, "margin": 0.5}),
    ("instance_norm", "instance_norm", [randn(2, 3, 5)], {"weight": randn(3), "bias": randn(3)}),
    ("instance_norm_running", "instance_norm", [randn(2, 3, 4, 4)],
     {"running_mean": randn(3), "running_var": np.abs(randn(3)) + 0.5, "use_input_stats": False}),
    ("local_response_norm_3d", "local_response_norm", [randn(2, 6, 5)], {"size": 3}),
    ("local_response_norm_4d", "local_response_norm", [randn(2, 6, 3, 4)], {"size": 2, "k": 2.0}),
    ("bilinear", "bilinear", [randn(4, 3), randn(4, 2), randn(5, 3, 2), randn(5)], {}),
    ("bilinear_batched", "bilinear", [randn(2, 4, 3), randn(2, 4, 2), randn(5, 3, 2)], {}),
    ("embedding_bag_sum", "embedding_bag", [ints(0, 10, 7), randn(10, 3)],
     {"offsets": np.array([0, 2, 2, 5]), "mode": "sum", "per_sample_weights": randn(7)}),
    ("embedding_bag_mean_pad", "embedding_bag", [ints(0, 10, 3, 4), randn(10, 3)],
     {"mode": "mean", "padding_idx": 2}),
    ("embedding_bag_max", "embedding_bag", [ints(0, 10, 7), randn(10, 3)],
     {"offsets": np.array([0, 3, 3, 7]), "mode": "max", "include_last_offset": True}),
    ("sdpa_causal", "_scaled_dot_product_attention", [randn(2, 4, 6), randn(2, 3, 6), randn(2, 3, 6)],
     {"need_attn_weights": True, "is_causal": True}),
    ("sdpa_mask", "_scaled_dot_product_attention", [randn(2, 4, 6), randn(2, 3, 6), randn(2, 3, 6)],
     {"attn_mask": rng.random((4, 3)) > 0.3}),
    ("fractional_max_pool2d", "fractional_max_pool2d", [randn(2, 3, 9, 8), 3],
     {"output_size": (4, 3), "return_indices": True, "_random_samples": rng.random((2, 3, 2))}),
    ("fractional_max_pool2d_ratio", "fractional_max_pool2d", [randn(3, 10, 7), (2, 3)],
     {"output_ratio": 0.5, "_random_samples": rng.random((1, 3, 2))}),
    ("fractional_max_pool3d", "fractional_max_pool3d", [randn(2, 2, 6, 7, 5), 2],
     {"output_size": (3, 4, 2), "return_indices": True, "_random_samples": rng.random((2, 2, 3))}),
    ("alpha_dropout_eval", "alpha_dropout", [randn(3, 4)], {"p": 0.4}),
    ("feature_alpha_dropout_eval", "feature_alpha_dropout", [randn(3, 4, 2)], {"p": 0.4}),
    ("dropout2d_p0", "dropout2d", [randn(2, 3, 4, 4)], {"p": 0.0}),
]


def _case_params():
    return [pytest.param(name, args, kwargs, id=cid) for cid, name, args, kwargs in CASES]


def _call(lib, name, args, kwargs):
    fn = getattr(lib.nn.functional, name)
    a, k = to_lib(lib, list(args)), to_lib(lib, dict(kwargs))
    return fn(*a, **k)


@pytest.mark.parametrize("name,args,kwargs", _case_params())
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functional_matches_torch(torch_ref, name, args, kwargs, dtype):
    def cast(v):
        if isinstance(v, np.ndarray) and v.dtype == np.float64:
            return v.astype(dtype)
        return v
    args = [cast(a) for a in args]
    kwargs = {k: cast(v) for k, v in kwargs.items()}
    expected = _call(torch_ref, name, args, kwargs)
    actual = _call(ampjit, name, args, kwargs)
    tol = 1e-5 if dtype == np.float64 else 1e-4
    assert_close(actual, expected, rtol=tol, atol=tol)


def test_dropout_variants_keep_torch_structure_in_training(torch_ref):
    """Random draws differ from torch's; what is dropped is whole elements or channels, and the
    kept values are torch's affine maps of the input."""
    ampjit.manual_seed(0)
    x = ampjit.randn(4, 6, 5, 5)
    y = F.feature_alpha_dropout(x, 0.5, training=True)
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * 0.5 + 1) * 0.5)
    kept = (y - (x * a + alpha * a * 0.5)).abs() < 1e-5
    dropped = (y - (alpha * a * 0.5 - alpha * a)).abs() < 1e-5
    per_channel = kept.flatten(2).all(2) | dropped.flatten(2).all(2)
    assert bool(per_channel.all())
    z = F.dropout2d(x, 0.5, training=True)
    zero = (z == 0).flatten(2).all(2)
    scaled = (z - x * 2).abs().flatten(2).max(2)[0] < 1e-5
    assert bool((zero | scaled).all()) and bool(zero.any()) and bool(scaled.any())
    r = F.rrelu(x, 0.1, 0.3, training=True)
    slope = r / x
    neg = x < 0
    assert bool(((slope >= 0.1 - 1e-6) & (slope <= 0.3 + 1e-6))[neg].all())
    assert ampjit.equal(r[~neg], x[~neg])
    xi = x.clone()
    assert F.alpha_dropout(xi, 0.3, training=True, inplace=True).data_ptr() == xi.data_ptr()
    assert not ampjit.equal(xi, x)


def test_inplace_forms_return_their_input(torch_ref):
    for name, extra in [("celu", {}), ("selu", {}), ("threshold", {"threshold": 0.0, "value": 2.0}),
                        ("rrelu", {}), ("elu", {}), ("leaky_relu", {}), ("hardtanh", {})]:
        x = ampjit.from_numpy(randn(3, 4))
        t = torch_ref.from_numpy(x.numpy().copy())
        expected = getattr(torch_ref.nn.functional, name)(t, inplace=True, **extra)
        out = getattr(F, name)(x, inplace=True, **extra)
        assert out.data_ptr() == x.data_ptr()
        assert_close(x, expected)
        y = ampjit.from_numpy(randn(3, 4))
        assert getattr(F, name + "_")(y, *extra.values()).data_ptr() == y.data_ptr()


# ---- script and trace ------------------------------------------------------------------------------

def scripted_activations(x, w):
    return (F.celu(x, 0.5) + F.selu(x) + F.glu(x, -1).sum() + F.prelu(x, w) + F.softshrink(x, 0.2)
            + F.hardshrink(x, 0.2) + F.softsign(x) + F.tanhshrink(x) + F.threshold(x, 0.1, 3.0)
            + F.rrelu(x, 0.1, 0.2, False))


def scripted_losses(x, y, v):
    return (F.gaussian_nll_loss(x, y, v) + F.kl_div(x, y, reduction="sum")
            + F.multilabel_soft_margin_loss(x, y) + F.cosine_similarity(x, y).sum()
            + F.pairwise_distance(x, y).sum() + F.pdist(x).sum())


def scripted_norms(x, w3, b, idx, offsets):
    return (F.instance_norm(x).sum() + F.local_response_norm(x, 2).sum() + F.bilinear(x, x, w3, b).sum()
            + F.embedding_bag(idx, x.flatten(0, 1), offsets, mode="max").sum()
            + F.alpha_dropout(x, 0.5, False).sum() + F.feature_alpha_dropout(x, 0.5, False).sum())


def scripted_ctc(log_probs, targets, input_lengths, target_lengths):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="sum")


def scripted_pool(x, samples):
    return F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True, _random_samples=samples)


def _programs():
    x = randn(2, 4, 6)
    ctc_in = (np.log(np.random.default_rng(3).dirichlet(np.ones(5), (12, 3))), ints(1, 5, 3, 4),
              np.array([12, 10, 8]), np.array([4, 3, 2]))
    return [
        ("activations", scripted_activations, (randn(2, 4, 6), randn(4))),
        ("losses", scripted_losses, (randn(4, 5), np.abs(randn(4, 5)), np.abs(randn(4, 5)))),
        ("norms", scripted_norms, (x, randn(5, 6, 6), randn(5), ints(0, 8, 6), np.array([0, 2, 5]))),
        ("ctc", scripted_ctc, ctc_in),
        ("fractional_pool", scripted_pool, (randn(2, 3, 7, 7), rng.random((2, 3, 2)))),
    ]


@pytest.mark.parametrize("name,fn,args", [pytest.param(*p, id=p[0]) for p in _programs()])
def test_scripted_and_traced_match_eager_and_torch(torch_ref, name, fn, args):
    a_args = to_lib(ampjit, list(args))
    eager = fn(*a_args)
    scripted = ampjit.jit.script(fn)
    assert_close(scripted(*a_args), eager, rtol=1e-12, atol=1e-12)
    traced = ampjit.jit.trace(fn, tuple(a_args))
    assert_close(traced(*a_args), eager, rtol=1e-12, atol=1e-12)
    g = dict(fn.__globals__)
    g["F"] = torch_ref.nn.functional
    torch_fn = type(fn)(fn.__code__, g, fn.__name__)
    assert_close(eager, torch_fn(*to_lib(torch_ref, list(args))), rtol=1e-7, atol=1e-9)


def test_triplet_margin_with_distance_loss_is_not_scriptable():
    def f(a, p, n):
        return F.triplet_margin_with_distance_loss(a, p, n)
    x = ampjit.randn(3, 4)
    assert float(f(x, x, x)) == pytest.approx(1.0)
    with pytest.raises(Exception):
        ampjit.jit.script(f)


# ---- layers ----------------------------------------------------------------------------------------

LAYERS = [
    ("CELU", lambda nn: nn.CELU(0.5, inplace=True), (3, 4)),
    ("SELU", lambda nn: nn.SELU(), (3, 4)),
    ("GLU", lambda nn: nn.GLU(0), (4, 3)),
    ("PReLU", lambda nn: nn.PReLU(3, init=0.1), (2, 3, 4)),
    ("RReLU", lambda nn: nn.RReLU(0.1, 0.2).eval(), (3, 4)),
    ("Softshrink", lambda nn: nn.Softshrink(0.3), (3, 4)),
    ("Hardshrink", lambda nn: nn.Hardshrink(), (3, 4)),
    ("Softsign", lambda nn: nn.Softsign(), (3, 4)),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), (3, 4)),
    ("Threshold", lambda nn: nn.Threshold(0.1, 20), (3, 4)),
    ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.5), (3, 4)),
    ("Softmin", lambda nn: nn.Softmin(1), (3, 4)),
    ("Softmax2d", lambda nn: nn.Softmax2d(), (2, 3, 4, 4)),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), (3, 4)),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3, affine=True), (2, 3, 5)),
    ("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3, track_running_stats=True), (2, 3, 4, 4)),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(3, affine=True, track_running_stats=True).eval(),
     (3, 2, 3, 4)),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3, alpha=0.1), (2, 5, 4, 4)),
    ("AlphaDropout", lambda nn: nn.AlphaDropout(0.3).eval(), (3, 4)),
    ("FeatureAlphaDropout", lambda nn: nn.FeatureAlphaDropout(0.3).eval(), (3, 4, 2)),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(1.5), None),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(0), None),
    ("Bilinear", lambda nn: nn.Bilinear(4, 4, 2), None),
]


@pytest.mark.parametrize("name,factory,shape", [pytest.param(*c, id=c[0]) for c in LAYERS])
def test_layer_repr_state_and_forward_match_torch(torch_ref, name, factory, shape):
    a, t = factory(nn), factory(torch_ref.nn)
    assert repr(a) == repr(t)
    assert list(a.state_dict().keys()) == list(t.state_dict().keys())
    assert getattr(type(a), "__constants__", None) == getattr(type(t), "__constants__", None) or \
        set(type(a).__constants__) == set(type(t).__constants__)
    state = {k: randn(*v.shape) if v.dtype == torch_ref.float32 else v.numpy()
             for k, v in t.state_dict().items()}
    for k, v in state.items():
        if k.endswith("running_var"):
            state[k] = np.abs(v) + 0.5
    a.load_state_dict({k: to_lib(ampjit, v.astype(np.float32) if v.dtype == np.float64 else v)
                       for k, v in state.items()})
    t.load_state_dict({k: to_lib(torch_ref, v.astype(np.float32) if v.dtype == np.float64 else v)
                       for k, v in state.items()})
    inputs = [randn(*shape, dtype=np.float32)] if shape else [randn(3, 4, dtype=np.float32)] * 2
    expected = t(*to_lib(torch_ref, inputs))
    assert_close(a(*to_lib(ampjit, inputs)), expected, rtol=1e-5, atol=1e-5)
    s = ampjit.jit.script(factory(nn))
    s.load_state_dict(a.state_dict())
    if not a.training:
        s.eval()
    if name not in ("RReLU",):
        assert_close(s(*to_lib(ampjit, inputs)), expected, rtol=1e-5, atol=1e-5)


LOSSES = [
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(full=True), [(4, 3), (4, 3), (4, 1)]),
    ("KLDivLoss", lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True), [(4, 3), (4, 3)]),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(full=True), [(4, 3), (4, 3)]),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.5), [(4, 3), (4, 3)]),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(), [(4, 3), (4, 3)]),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(), [(4, 3), (4, 3)]),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(0.2), [(4, 3), (4, 3), (4,)]),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(0.1), [(4,), (4,), (4,)]),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(0.5), [(4, 3), (4, 3)]),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(swap=True), [(4, 3), (4, 3), (4, 3)]),
    ("TripletMarginWithDistanceLoss", lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.3),
     [(4, 3), (4, 3), (4, 3)]),
]


@pytest.mark.parametrize("name,factory,shapes", [pytest.param(*c, id=c[0]) for c in LOSSES])
def test_loss_layers_match_torch(torch_ref, name, factory, shapes):
    a, t = factory(nn), factory(torch_ref.nn)
    assert repr(a) == repr(t)
    inputs = [np.abs(randn(*s, dtype=np.float32)) if i > 0 and name == "GaussianNLLLoss" else
              randn(*s, dtype=np.float32) for i, s in enumerate(shapes)]
    if name in ("CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss"):
        inputs[-1] = np.sign(inputs[-1]).astype(np.float32)
    assert_close(a(*to_lib(ampjit, inputs)), t(*to_lib(torch_ref, inputs)), rtol=1e-5, atol=1e-5)


def test_multilabel_margin_and_ctc_layers_match_torch(torch_ref):
    x, y = randn(4, 5, dtype=np.float32), ints(-1, 5, 4, 5)
    assert_close(nn.MultiLabelMarginLoss()(*to_lib(ampjit, [x, y])),
                 torch_ref.nn.MultiLabelMarginLoss()(*to_lib(torch_ref, [x, y])))
    lp = np.log(np.random.default_rng(5).dirichlet(np.ones(6), (10, 2))).astype(np.float32)
    args = [lp, ints(1, 6, 7), np.array([10, 9]), np.array([3, 4])]
    for reduction in ("none", "mean", "sum"):
        a = nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=True)
        t = torch_ref.nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=True)
        assert repr(a) == repr(t)
        assert_close(a(*to_lib(ampjit, args)), t(*to_lib(torch_ref, args)), rtol=1e-5, atol=1e-5)


def test_embedding_bag_and_fractional_pool_layers(torch_ref):
    ampjit.manual_seed(0)
    a = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-2)
    t = torch_ref.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-2)
    assert repr(a) == repr(t)
    assert float(a.weight[8].abs().sum()) == 0.0
    assert abs(float(a.weight.std()) - 1.0) < 0.5
    t.weight.data.copy_(torch_ref.from_numpy(a.weight.detach().numpy().copy()))
    idx, off = ints(0, 10, 8), np.array([0, 3, 6])
    assert_close(a(*to_lib(ampjit, [idx, off])), t(*to_lib(torch_ref, [idx, off])))
    for cls, shape, k in (("FractionalMaxPool2d", (2, 3, 8, 8), 2), ("FractionalMaxPool3d", (2, 3, 6, 6, 6), 2)):
        samples = rng.random((2, 3, len(shape) - 2))
        a = getattr(nn, cls)(k, output_ratio=0.5, return_indices=True,
                             _random_samples=to_lib(ampjit, samples))
        t = getattr(torch_ref.nn, cls)(k, output_ratio=0.5, return_indices=True,
                                       _random_samples=to_lib(torch_ref, samples))
        assert repr(a) == repr(t)
        x = randn(*shape)
        assert_close(a(to_lib(ampjit, x)), t(to_lib(torch_ref, x)))
        with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
            getattr(nn, cls)(k, output_size=2, output_ratio=0.5)
        assert tuple(getattr(nn, cls)(k, output_size=3)(to_lib(ampjit, x)).shape[2:]) == (3,) * (len(shape) - 2)


MORE_CLASSES = [
    "Hardtanh", "Threshold", "RReLU", "SELU", "CELU", "GLU", "Softshrink", "Hardshrink", "PReLU", "Softmax2d",
    "LogSigmoid", "Softsign", "Tanhshrink", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "HuberLoss",
    "SoftMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
    "HingeEmbeddingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
    "PairwiseDistance", "CosineSimilarity", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LocalResponseNorm", "Bilinear", "EmbeddingBag", "FractionalMaxPool2d", "FractionalMaxPool3d", "AlphaDropout",
    "FeatureAlphaDropout", "Dropout1d", "Softmin", "MultiheadAttention",
]


@pytest.mark.parametrize("name", MORE_CLASSES)
def test_layer_constructor_signatures_and_constants_match_torch(torch_ref, name):
    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    ours, theirs = getattr(nn, name), getattr(torch_ref.nn, name)
    assert params(ours.__init__) == params(theirs.__init__)
    assert set(getattr(ours, "__constants__", [])) == set(getattr(theirs, "__constants__", []))


def test_bilinear_and_prelu_initialization_follow_torch():
    ampjit.manual_seed(0)
    b = nn.Bilinear(20, 5, 30)
    bound = 1 / math.sqrt(20)
    assert float(b.weight.abs().max()) <= bound and float(b.weight.abs().max()) > 0.9 * bound
    assert float(b.bias.abs().max()) <= bound
    p = nn.PReLU(4, init=0.3)
    assert p.weight.detach().numpy().tolist() == pytest.approx([0.3] * 4)


# ---- gradients -------------------------------------------------------------------------------------

def _leaf(arr):
    return ampjit.from_numpy(arr.copy()).requires_grad_()


GRAD_CASES = [
    ("celu", lambda x: F.celu(x, 0.7), [randn(3, 4)]),
    ("glu", lambda x: F.glu(x, 0), [randn(4, 3)]),
    ("prelu", lambda x, w: F.prelu(x, w), [randn(2, 3, 2), randn(3)]),
    ("softshrink", lambda x: F.softshrink(x, 0.1), [randn(3, 4)]),
    ("kl_div", lambda x, y: F.kl_div(x, y, reduction="batchmean"), [randn(3, 4), np.abs(randn(3, 4))]),
    ("cosine_similarity", lambda x, y: F.cosine_similarity(x, y), [randn(3, 4), randn(3, 4)]),
    ("pairwise_distance", lambda x, y: F.pairwise_distance(x, y), [randn(3, 4), randn(3, 4)]),
    ("pdist", lambda x: F.pdist(x), [randn(4, 3)]),
    ("gaussian_nll", lambda x, t, v: F.gaussian_nll_loss(x, t, v), [randn(3, 2), randn(3, 2), np.abs(randn(3, 2))]),
    ("instance_norm", lambda x, w: F.instance_norm(x, weight=w), [randn(2, 3, 5), randn(3)]),
    ("local_response_norm", lambda x: F.local_response_norm(x, 3), [randn(2, 4, 5)]),
    ("bilinear", lambda a, b, w: F.bilinear(a, b, w), [randn(3, 2), randn(3, 4), randn(2, 2, 4)]),
    ("embedding_bag_mean", lambda w: F.embedding_bag(ampjit.tensor([1, 2, 4, 4, 0]), w,
                                                     ampjit.tensor([0, 2]), mode="mean"), [randn(5, 3)]),
    ("embedding_bag_max", lambda w: F.embedding_bag(ampjit.tensor([1, 2, 4, 3, 0]), w,
                                                    ampjit.tensor([0, 2]), mode="max"), [randn(5, 3)]),
    ("sdpa", lambda q, k, v: F._scaled_dot_product_attention(q, k, v, None, 0.0, True, True)[0],
     [randn(2, 3, 4), randn(2, 2, 4), randn(2, 2, 4)]),
    ("fractional_max_pool2d", lambda x: F.fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=ampjit.tensor([[[0.3, 0.7]]], dtype=ampjit.float64)),
     [randn(1, 1, 6, 6)]),
    ("ctc", lambda lp: F.ctc_loss(lp.log_softmax(2), ampjit.tensor([[1, 2, 2], [3, 1, 0]]), ampjit.tensor([6, 5]),
                                  ampjit.tensor([3, 2])), [randn(6, 2, 4)]),
]


@pytest.mark.parametrize("name,fn,args", [pytest.param(*c, id=c[0]) for c in GRAD_CASES])
def test_gradcheck_float64(name, fn, args):
    assert ampjit.autograd.gradcheck(fn, tuple(_leaf(a) for a in args))


def test_ctc_gradient_matches_torch(torch_ref):
    lp = np.log(np.random.default_rng(7).dirichlet(np.ones(5), (9, 3)))
    targets, il, tl = ints(1, 5, 3, 4), np.array([9, 7, 2]), np.array([4, 3, 3])  # the last is infeasible
    grads = []
    for lib, kw in ((ampjit, {}), (torch_ref, {})):
        x = to_lib(lib, lp).requires_grad_()
        loss = lib.nn.functional.ctc_loss(x, *to_lib(lib, [targets, il, tl]), reduction="sum", zero_infinity=True, **kw)
        loss.backward()
        grads.append((loss, x.grad))
    assert_close(grads[0][0], grads[1][0], rtol=1e-10, atol=1e-10)
    assert_close(grads[0][1], grads[1][1], rtol=1e-10, atol=1e-10)


# ---- errors ----------------------------------------------------------------------------------------

ERRORS = [
    ("glu_odd", lambda lib, x: lib.nn.functional.glu(x, 1), (3, 5)),
    ("glu_scalar", lambda lib, x: lib.nn.functional.glu(x.sum()), (3, 4)),
    ("celu_zero_alpha", lambda lib, x: lib.nn.functional.celu(x, 0.0), (3, 4)),
    ("softshrink_negative", lambda lib, x: lib.nn.functional.softshrink(x, -1.0), (3, 4)),
    ("prelu_mismatch", lambda lib, x: lib.nn.functional.prelu(x, lib.ones(5, dtype=x.dtype)), (2, 3, 4)),
    ("rrelu_bounds", lambda lib, x: lib.nn.functional.rrelu(x, 0.5, 0.1), (3, 4)),
    ("gaussian_nll_var_size", lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, x[:, :2]), (3, 4)),
    ("gaussian_nll_negative", lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, -x.abs()), (3, 4)),
    ("gaussian_nll_reduction", lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, x.abs(), reduction="x"),
     (3, 4)),
    ("pdist_1d", lambda lib, x: lib.nn.functional.pdist(x[0]), (3, 4)),
    ("pdist_negative_p", lambda lib, x: lib.nn.functional.pdist(x, -1.0), (3, 4)),
    ("local_response_norm_2d", lambda lib, x: lib.nn.functional.local_response_norm(x, 2), (3, 4)),
    ("instance_norm_one_value", lambda lib, x: lib.nn.functional.instance_norm(x[:, :, :1]), (2, 3, 4)),
    ("bilinear_mismatch", lambda lib, x: lib.nn.functional.bilinear(x, x, lib.ones(2, 3, 4, dtype=x.dtype)),
     (3, 4)),
    ("embedding_bag_offsets_2d", lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(2, 2, dtype=lib.int64), x, lib.zeros(1, dtype=lib.int64)), (3, 4)),
    ("embedding_bag_bad_mode", lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(2, 2, dtype=lib.int64), x, mode="min"), (3, 4)),
    ("embedding_bag_first_offset", lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(3, dtype=lib.int64), x, lib.tensor([1, 2])), (3, 4)),
    ("embedding_bag_psw_mean", lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(2, 2, dtype=lib.int64), x, per_sample_weights=lib.ones(2, 2, dtype=x.dtype)), (3, 4)),
    ("fractional_pool_no_size", lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2), (1, 2, 5, 5)),
    ("fractional_pool_too_large", lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 4, output_size=3),
     (1, 2, 5, 5)),
    ("dropout1d_rank", lambda lib, x: lib.nn.functional.dropout1d(x), (2, 3, 4, 5)),
    ("alpha_dropout_p", lambda lib, x: lib.nn.functional.alpha_dropout(x, 1.5), (3, 4)),
    ("ctc_blank", lambda lib, x: lib.nn.functional.ctc_loss(x.log_softmax(2), lib.ones(2, 2, dtype=lib.int64),
                                                            [4, 4], [2, 2], blank=7), (4, 2, 3)),
    ("ctc_input_length", lambda lib, x: lib.nn.functional.ctc_loss(
        x.log_softmax(2), lib.ones(2, 2, dtype=lib.int64), [5, 4], [2, 2]), (4, 2, 3)),
    ("sdpa_causal_mask", lambda lib, x: lib.nn.functional._scaled_dot_product_attention(
        x, x, x, lib.ones(4, 4, dtype=lib.bool), 0.0, False, True), (2, 4, 3)),
]


@pytest.mark.parametrize("name,fn,shape", [pytest.param(*c, id=c[0]) for c in ERRORS])
def test_errors_match_torch(torch_ref, name, fn, shape):
    x = randn(*shape, dtype=np.float32)
    with pytest.raises(Exception) as te:
        fn(torch_ref, to_lib(torch_ref, x))
    with pytest.raises(type(te.value)) as ae:
        fn(ampjit, to_lib(ampjit, x))
    # a message naming a Python type names ampjit's tensor class where torch names its own
    expected = str(te.value).splitlines()[0].replace("<class 'torch.Tensor'>", "<class 'ampjit._C.Tensor'>")
    assert str(ae.value).splitlines()[0] == expected


def test_embedding_bag_scale_grad_by_freq_divides_each_row_by_its_index_count(torch_ref):
    """Where torch 1.13's CPU backward picks the right count (every index as frequent as the one
    before it in sorted order) the gradients agree; elsewhere each row is divided by its own
    index's count, as documented (torch 1.13's CPU kernel divides by another index's count)."""
    w = randn(6, 2)
    g = randn(2, 2)
    cases = [([3, 3, 1, 1], [0, 2], "sum"), ([0, 4, 4, 0, 2, 2], [0, 3], "mean")]
    for idx, off, mode in cases:
        grads = []
        for lib in (ampjit, torch_ref):
            wt = to_lib(lib, w).requires_grad_()
            out = lib.nn.functional.embedding_bag(to_lib(lib, np.array(idx)), wt, to_lib(lib, np.array(off)),
                                                  mode=mode, scale_grad_by_freq=True)
            out.backward(to_lib(lib, g))
            grads.append(wt.grad)
        assert_close(grads[0], grads[1], rtol=1e-12, atol=1e-12)
    wt = to_lib(ampjit, w).requires_grad_()
    F.embedding_bag(ampjit.tensor([1, 1, 3]), wt, ampjit.tensor([0]), mode="sum", scale_grad_by_freq=True).sum().backward()
    assert wt.grad[:, 0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 0.0]
