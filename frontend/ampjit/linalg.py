"""torch.linalg: the ops named aten::linalg_NAME as ampjit.linalg.NAME (script resolves
torch.linalg.NAME to the same op), LinAlgError, and torch's linear-algebra functions that are Python
in torch itself (torch.lu, torch.norm, torch.svd_lowrank, torch.pca_lowrank), installed at the top
level by ampjit/__init__.py.

The ops are runtime/ops/linalg_lapack.def (LAPACK kernels) and the `linalg` section of
runtime/ops/decompositions.def. Real dtypes only: a result torch returns complex (the eigenvalues of
a general real matrix) raises NotImplementedError naming complex.
"""
from . import _C
from . import _ops

# torch.linalg.LinAlgError: a RuntimeError, raised for singular or non-positive-definite input and
# for LAPACK routines that do not converge (runtime/error.h LinAlgError).
LinAlgError = _C._LinAlgError


def _install(namespace):
    prefix = "linalg_"
    for base, _is_method, _inplace in _C._op_table():
        name = base.split("::", 1)[1]
        if name.startswith(prefix):
            fn = _ops._make_function(base)[1]
            fn.__module__ = "ampjit.linalg"
            namespace.setdefault(name[len(prefix):], fn)


_install(globals())
del _install


# ---- torch's Python functions (torch/functional.py, torch/_lowrank.py) ----------------------------

def _lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: the LU factorization (and its infos with get_infos=True) through _lu_with_info."""
    import ampjit
    result = ampjit._lu_with_info(A, pivot=pivot, check_errors=not get_infos)
    if out is not None:
        want = 3 if get_infos else 2
        if not isinstance(out, (tuple, list)) or len(out) != want:
            raise TypeError("expected tuple of {} elements but got {}".format(want, type(out).__name__))
        for dst, src in zip(out, result):
            dst.resize_(src.shape)
            dst.copy_(src)
        return tuple(out)
    return tuple(result) if get_infos else (result[0], result[1])


_norm_op = _ops._make_function("aten::norm")[1]


def _norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm (torch/functional.py): 'fro' and 'nuc' through frobenius_norm and nuclear_norm,
    numbers through aten::norm."""
    import ampjit
    ndim = input.dim()
    if dim is None and out is None and dtype is None and p is not None:
        if isinstance(p, str):
            if p == "fro":
                return ampjit.frobenius_norm(input, [], keepdim=keepdim)
        else:
            return _norm_op(input, p, dim=list(range(ndim)), keepdim=keepdim)
    _dim = None
    if dim is not None:
        _dim = [dim] if isinstance(dim, int) else list(dim)
    kw = {} if out is None else {"out": out}
    if isinstance(p, str):
        if p == "fro":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in frobenius norm")
            if _dim is None:
                _dim = list(range(ndim))
            return ampjit.frobenius_norm(input, _dim, keepdim=keepdim, **kw)
        if p == "nuc":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in nuclear norm")
            if _dim is None:
                return ampjit.nuclear_norm(input, keepdim=keepdim, **kw)
            return ampjit.nuclear_norm(input, _dim, keepdim=keepdim, **kw)
        raise RuntimeError(f"only valid string values are 'fro' and 'nuc', found {p}")
    if _dim is None:
        _dim = list(range(ndim))
    if dtype is None:
        return _norm_op(input, p, _dim, keepdim=keepdim, **kw)
    return _norm_op(input, p, _dim, keepdim=keepdim, dtype=dtype, **kw)


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return _norm(self, p, dim, keepdim, dtype=dtype)


def _lu_method(self, pivot=True, get_infos=False):
    return _lu(self, pivot=pivot, get_infos=get_infos)


def _floating_dtype(A):
    import ampjit
    return A.dtype if A.dtype in (ampjit.float16, ampjit.float32, ampjit.float64) else ampjit.float32


def _approximate_basis(A, q, niter=2, M=None):
    import ampjit
    niter = 2 if niter is None else niter
    n = A.shape[-1]
    R = ampjit.randn(n, q, dtype=_floating_dtype(A))
    A_H = A.transpose(-2, -1)
    if M is None:
        Q = linalg_qr(ampjit.matmul(A, R)).Q
        for _ in range(niter):
            Q = linalg_qr(ampjit.matmul(A_H, Q)).Q
            Q = linalg_qr(ampjit.matmul(A, Q)).Q
    else:
        M_H = M.transpose(-2, -1)
        Q = linalg_qr(ampjit.matmul(A, R) - ampjit.matmul(M, R)).Q
        for _ in range(niter):
            Q = linalg_qr(ampjit.matmul(A_H, Q) - ampjit.matmul(M_H, Q)).Q
            Q = linalg_qr(ampjit.matmul(A, Q) - ampjit.matmul(M, Q)).Q
    return Q


def _svd_lowrank_impl(A, q=6, niter=2, M=None):
    import ampjit
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    M_t = None if M is None else M.transpose(-2, -1)
    A_t = A.transpose(-2, -1)
    # Algorithm 5.1 in Halko et al 2009, as torch/_lowrank.py runs it
    if m < n or n > q:
        Q = _approximate_basis(A_t, q, niter=niter, M=M_t)
        B_t = ampjit.matmul(A, Q) if M is None else ampjit.matmul(A, Q) - ampjit.matmul(M, Q)
        U, S, Vh = linalg_svd(B_t, full_matrices=False)
        V = Q.matmul(Vh.transpose(-2, -1))
    else:
        Q = _approximate_basis(A, q, niter=niter, M=M)
        B = ampjit.matmul(A_t, Q) if M is None else ampjit.matmul(A_t, Q) - ampjit.matmul(M_t, Q)
        U, S, Vh = linalg_svd(B.transpose(-2, -1), full_matrices=False)
        V = Vh.transpose(-2, -1)
        U = Q.matmul(U)
    return U, S, V


def _svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank: a randomized SVD of rank q (Halko et al. 2009)."""
    return _svd_lowrank_impl(A, q=q, niter=niter, M=M)


def _pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank: the randomized SVD of the centered matrix."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError("q(={}) must be non-negative integer and not greater than min(m, n)={}".format(
            q, min(m, n)))
    if not (niter >= 0):
        raise ValueError("niter(={}) must be non-negative integer".format(niter))
    if not center:
        return _svd_lowrank_impl(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank_impl(A - C, q, niter=niter, M=None)


linalg_qr = qr  # noqa: F821 (installed above)
linalg_svd = svd  # noqa: F821
