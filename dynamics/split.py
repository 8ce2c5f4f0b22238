"""Sample-split gradient descent on several threads, for large problems (BLAS path).

One GD step θ ← θ − η∇L(θ) with the samples cut into k contiguous blocks I_1..I_k. The
parameters are held neuron-major here, W (m, d) and a (m,), so both products of a block are
row-major GEMMs with the wide side m·n_b or m·d as output (measured ~25 % faster for
(2000, 784, 100) than core.py's (d+1, m) layout, whose inner loops favour small sizes):

1. each block, on its own thread: Zᵀ = W X_Iᵀ (m, n_b); h_i = Σ_j a_j σ(z_ij); its share of
   L = R Σ_i s_i ℓ(c h_i, y_i); r_i = R s_i ℓ'(c h_i, y_i); the coefficients r_i σ'(z_ij)
   (σ'(0) = γ, 0 for ReLU) overwrite Zᵀ; Gᵀ_I = Zᵀ X_I (m, d) and g_a,I = Σ_i r_i σ(z_ij);
2. the calling thread: ∇_W L = c a_j Σ_I Gᵀ_I[j], ∇_a L = c Σ_I g_a,I (block order), then
   W ← W − η∇_W L, a ← a − η∇_a L (a frozen when the output layer is not trained).

One hand-off per step. The GEMMs are single-threaded (EAE_CORE_BLAS_THREADS); the blocks run
in parallel because the kernels release the GIL. Threads wait on each other by blocking,
never by spinning, so a busy machine slows the step to about the one-thread time instead of
the ~2× loss of a 2-thread OpenBLAS GEMM next to another job. Measured here, ms per step, with
a busy loop on the other core: (2000, 64, 200) split 2.3–2.7, one thread 2.5–3.2, two
OpenBLAS threads 4.8; (2000, 784, 100) split 12.7–15.5, one thread 13.7–14.5. Idle: split
1.2–1.4 vs 2.3–2.7 and 5.7–7.7 vs 13.4–13.7. Sums over
samples are split by block, so results differ from the one-block path in the last bits
(deterministic for a given k).

EAE_CORE_THREADS: "auto" (default: the CPUs this process may use, at most MAX_BLOCKS) or
an integer k ≥ 1 (1 turns the split off). Used when n·d·m ≥ SPLIT_MIN_WORK and n ≥ 2k.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from . import core

THREADS_ENV = "EAE_CORE_THREADS"
#: n·d·m from which a GD step is split over threads (a step of ~0.3 ms on one core here;
#: below, the hand-off per step (~30–50 µs) and the serial reduction eat the gain).
SPLIT_MIN_WORK = 1 << 22
MAX_BLOCKS = 8

_jit = numba.njit(cache=True, nogil=True)
_jit_fast = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def blocks_for(n: int, d: int, m: int) -> int:
    """Number of sample blocks (threads) for a BLAS-path GD step of this size; 1 = no split."""
    raw = os.environ.get(THREADS_ENV, "auto").strip().lower()
    if raw in ("", "auto"):
        k = _cpus()
    else:
        try:
            k = int(raw)
        except ValueError:
            k = 1
    k = max(1, min(k, MAX_BLOCKS, n // 2))
    return k if k > 1 and n * d * m >= SPLIT_MIN_WORK else 1


@_jit_fast
def _block(W, a, XT, X, y, sw, gamma, c, code, R, ZT, GT, ga):
    """One sample block: fills ZT with r_i σ'(z_ij), GT = ZT X and ga_j = Σ_i r_i σ(z_ij);
    returns Σ_{i∈I} s_i ℓ(c h_i, y_i)."""
    m = W.shape[0]
    nb = X.shape[0]
    np.dot(W, XT, ZT)
    h = np.zeros(nb)  # one small allocation per block and step (n_b floats)
    for j in range(m):
        aj = a[j]
        for i in range(nb):
            s = ZT[j, i]
            h[i] += aj * (s if s > 0.0 else gamma * s)
    L = 0.0
    for i in range(nb):
        li, dli = core._ell(c * h[i], y[i], code)
        L += sw[i] * li
        h[i] = R * sw[i] * dli  # h now holds r
    for j in range(m):
        acc = 0.0
        for i in range(nb):
            s = ZT[j, i]
            coef = h[i] if s > 0.0 else gamma * h[i]
            acc += coef * s
            ZT[j, i] = coef
        ga[j] = acc
    np.dot(ZT, X, GT)
    return L


@_jit_fast
def _reduce(Lb, GTb, gab, a, c, train_out, R, GW, ga):
    """∇_W L = c a_j Σ_b GTb[b, j], ∇_a L = c Σ_b gab[b] (0 if frozen); returns R Σ_b Lb."""
    k, m, d = GTb.shape
    L = 0.0
    for b in range(k):
        L += Lb[b]
    for j in range(m):
        s = c * a[j]
        for q in range(d):
            acc = 0.0
            for b in range(k):
                acc += GTb[b, j, q]
            GW[j, q] = s * acc
        acc = 0.0
        for b in range(k):
            acc += gab[b, j]
        ga[j] = c * acc if train_out else 0.0
    return R * L


@_jit_fast
def _update(W, a, GW, ga, lr, train_out):
    """W −= η∇_W L, a −= η∇_a L; returns the count of entries then non-finite or > 1e150."""
    nbad = 0
    m, d = W.shape
    for j in range(m):
        for q in range(d):
            v = W[j, q] - lr * GW[j, q]
            W[j, q] = v
            nbad += 0 if abs(v) <= 1e150 else 1
        if train_out:
            v = a[j] - lr * ga[j]
            a[j] = v
            nbad += 0 if abs(v) <= 1e150 else 1
    return nbad


def _bounds(n: int, k: int) -> list[tuple[int, int]]:
    cuts = np.linspace(0, n, k + 1).round().astype(int)
    return [(int(cuts[b]), int(cuts[b + 1])) for b in range(k)]


def gd_advance(s: core.GDStepper, k_blocks: int, n_steps: int, grid: np.ndarray,
               buf: tuple[np.ndarray, ...]) -> tuple[int, int, int, int, float]:
    """``core._gd_run`` with the samples split over ``k_blocks`` threads (same contract:
    returns (status, k, n_samples, n_evals, L); state and cached gradient in ``s``, whose
    packed P and G are written back at samples and at the end)."""
    X, XT, y, sw = s._args
    gamma, c, code, R, train_out, _ = s._model
    P, G = s._P, s._G
    n, d = X.shape
    m = s.W.shape[0]
    parts = _bounds(n, k_blocks)
    if s._split_xt is None or len(s._split_xt) != k_blocks:
        s._split_xt = [np.ascontiguousarray(XT[:, lo:hi]) for lo, hi in parts]
    XTs = s._split_xt
    W = s.W  # updated in place, neuron-major
    a = s.a
    GW = np.empty((m, d))
    ga = np.empty(m)
    if s._have_grad:
        GW[:] = G[:d].T
        ga[:] = G[d]
    ZTs = [np.empty((m, hi - lo)) for lo, hi in parts]
    GTb = np.empty((k_blocks, m, d))
    gab = np.empty((k_blocks, m))
    Lb = np.empty(k_blocks)
    lr = s.lr
    k0, k = s.k, s.k
    L = s._L
    ns = ne = 0
    st = core._OK
    gi = int(np.searchsorted(grid, k0 * lr, side="right"))

    def packed() -> None:
        P[:d] = W.T
        P[d] = a
        G[:d] = GW.T
        G[d] = ga

    with ThreadPoolExecutor(max_workers=k_blocks - 1,
                            thread_name_prefix="eae-gd-block") as pool:

        def block(b: int) -> None:
            lo, hi = parts[b]
            Lb[b] = _block(W, a, XTs[b], X[lo:hi], y[lo:hi], sw[lo:hi], gamma, c, code, R,
                           ZTs[b], GTb[b], gab[b])

        def evaluate() -> float:
            futs = [pool.submit(block, b) for b in range(1, k_blocks)]
            block(0)
            for f in futs:
                f.result()
            return _reduce(Lb, GTb, gab, a, c, train_out, R, GW, ga)

        if not s._have_grad:
            L = evaluate()
            ne += 1
        if not np.isfinite(L) or not (np.all(np.abs(W) <= 1e150) and np.all(np.abs(a) <= 1e150)):
            st = core._DIVERGED
        kend = k0 + n_steps
        while st == core._OK:
            t = k * lr
            if k > k0 and gi < grid.shape[0] and t >= grid[gi]:
                packed()
                gi, ns = core._sample(P, G, t, L, grid, gi, ns, *buf)
            if k == kend:
                break
            bad = _update(W, a, GW, ga, lr, train_out)
            k += 1
            if bad:
                st = core._DIVERGED
                L = np.nan
                break
            L = evaluate()
            ne += 1
            if not np.isfinite(L):
                st = core._DIVERGED
    packed()
    return st, k, ns, ne, L
