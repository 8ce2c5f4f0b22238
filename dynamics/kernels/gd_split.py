"""Multi-block gradient descent for large problems (BLAS path): the samples are cut into
blocks whose partial gradients are computed on parallel threads.

One GD step θ ← θ − η∇L(θ) with the samples cut into k contiguous blocks I_1..I_k. The
parameters are held neuron-major here, W (m, d) and a (m,), so both products of a block are
row-major GEMMs with the wide side m·n_b or m·d as output (measured ~25 % faster for
(2000, 784, 100) than the packed (d+1, m) layout, whose inner loops favour small sizes):

1. each block: Zᵀ = W X_Iᵀ (m, n_b); h_i = Σ_j a_j σ(z_ij); its share of
   L = R Σ_i s_i ℓ(c h_i, y_i); r_i = R s_i ℓ'(c h_i, y_i); the coefficients r_i σ'(z_ij)
   (σ'(0) = γ, 0 for ReLU) overwrite Zᵀ; Gᵀ_I = Zᵀ X_I (m, d);
2. the calling thread: g_j = Σ_I Gᵀ_I[j] (block order), ∇_W L = c a_j g_j and
   ∇_a L = c ⟨w_j, g_j⟩ (= c Σ_i r_i σ(z_ij), since σ(z) = σ'(z) z), then
   W ← W − η∇_W L, a ← a − η∇_a L (a frozen when the output layer is not trained).

Determinism: the number of blocks is a function of (n, d, m) only (``blocks_for``), and each
block writes its own partial sums, reduced in block order; the worker threads
(threads.worker_threads, EAE_CORE_THREADS) decide only how many blocks run at once. So the
bits are the same with 1, 2 or 16 threads, on any host. They differ from the one-block loop of
gd.py in the last bits (the sums over samples are split).

One hand-off per step. The GEMMs are single-threaded (EAE_CORE_BLAS_THREADS); blocks run in
parallel because the kernels release the GIL. Threads wait on each other by blocking, never
by spinning, so a busy machine slows the step to about the one-thread time instead of the ~2×
loss of a 2-thread OpenBLAS GEMM next to another job. Measured with 2 blocks, ms per step,
with a busy loop on the other core: (2000, 64, 200) split 2.3–2.7, one thread 2.5–3.2, two
OpenBLAS threads 4.8; (2000, 784, 100) split 12.7–15.5, one thread 13.7–14.5. Idle: split
1.2–1.4 vs 2.3–2.7 and 5.7–7.7 vs 13.4–13.7.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .cache import call, jit
from .loss import Data, GDState, Recorder, Workspace, ell, sample
from .problem import DIVERGED, DIVERGENCE_BOUND, OK

#: n·d·m from which a GD step is split into blocks (a step of ~0.3 ms on one core here; below,
#: the hand-off per step (~30–50 µs) and the serial reduction eat the gain). Also the work per
#: block: a problem of size n·d·m has n·d·m // SPLIT_MIN_WORK blocks (at most MAX_BLOCKS).
SPLIT_MIN_WORK = 1 << 22
MAX_BLOCKS = 8


def blocks_for(n: int, d: int, m: int) -> int:
    """Sample blocks of a BLAS-path GD step of this size: ⌊n·d·m / SPLIT_MIN_WORK⌋ clipped to
    [1, MAX_BLOCKS], with at least 2 samples per block; 1 = the one-block loop. A function of
    the problem only, never of the host, so results are the same everywhere."""
    k = min(MAX_BLOCKS, (n * d * m) // SPLIT_MIN_WORK, n // 2)
    return max(1, k)


@jit
def _block(data, model, W, a, ZT, GT, h):
    """One sample block (``data``: its samples X_I, X_Iᵀ, y_I, s_I): ZT ← r_i σ'(z_ij),
    GT = ZT X_I (m, d); returns Σ_{i∈I} s_i ℓ(c h_i, y_i). ``h`` is (n_b,) scratch. Every
    pass is elementwise."""
    X, XT, y, sw = data
    gamma, c, code, R = model.gamma, model.c, model.code, model.R
    m = W.shape[0]
    nb = X.shape[0]
    np.dot(W, XT, ZT)
    for i in range(nb):
        h[i] = 0.0
    for j in range(m):  # h_i += a_j σ(z_ij): elementwise over samples, neurons in order
        aj = a[j]
        zj = ZT[j]
        for i in range(nb):
            s = zj[i]
            h[i] += aj * (s if s > 0.0 else gamma * s)
    L = 0.0
    for i in range(nb):
        li, dli = ell(c * h[i], y[i], code)
        L += sw[i] * li
        h[i] = R * sw[i] * dli  # h now holds r
    for j in range(m):
        zj = ZT[j]
        for i in range(nb):
            zj[i] = h[i] if zj[i] > 0.0 else gamma * h[i]
    np.dot(ZT, X, GT)
    return L


@jit
def _reduce(model, Lb, GTb, W, a, GW, ga):
    """g_j = Σ_b GTb[b, j] (block order) = Σ_i r_i σ'(z_ij) x_i; the flow's D∇L: lr_w ∇_W L =
    c_w a_j g_j and lr_a ∇_a L = c_a ⟨w_j, g_j⟩ = c_a Σ_i r_i σ(z_ij) (σ(z) = σ'(z) z; 0 if
    frozen; c_w = c_a = c for rates 1); returns R Σ_b Lb."""
    cw, ca, train_out, R = model.cw, model.ca, model.train_out, model.R
    k, m, d = GTb.shape
    L = 0.0
    for b in range(k):
        L += Lb[b]
    for j in range(m):
        s = cw * a[j]
        dot = 0.0
        for q in range(d):
            acc = 0.0
            for b in range(k):
                acc += GTb[b, j, q]
            GW[j, q] = s * acc
            dot += W[j, q] * acc
        ga[j] = ca * dot if train_out else 0.0
    return R * L


@jit
def _update(W, a, GW, ga, lr, train_out):
    """W −= η∇_W L, a −= η∇_a L; returns the count of entries then non-finite or > 1e150."""
    nbad = 0
    m, d = W.shape
    for j in range(m):
        for q in range(d):
            v = W[j, q] - lr * GW[j, q]
            W[j, q] = v
            nbad += 0 if abs(v) <= DIVERGENCE_BOUND else 1
        if train_out:
            v = a[j] - lr * ga[j]
            a[j] = v
            nbad += 0 if abs(v) <= DIVERGENCE_BOUND else 1
    return nbad


class BlockPlan:
    """The blocks of one workspace: bounds, per-block Xᵀ and buffers (made once per run)."""

    def __init__(self, ws: Workspace, blocks: int) -> None:
        XT = ws.data[1]
        n, d, m = ws.shape
        self.blocks = int(blocks)
        cuts = np.linspace(0, n, self.blocks + 1).round().astype(int)
        self.parts = [(int(cuts[b]), int(cuts[b + 1])) for b in range(self.blocks)]
        X, _, y, sw = ws.data
        self.data = [Data(X[lo:hi], np.ascontiguousarray(XT[:, lo:hi]), y[lo:hi], sw[lo:hi])
                     for lo, hi in self.parts]
        self.ZTs = [np.empty((m, hi - lo)) for lo, hi in self.parts]
        self.hs = [np.empty(hi - lo) for lo, hi in self.parts]
        self.GTb = np.empty((self.blocks, m, d))
        self.Lb = np.empty(self.blocks)

    def run(self, ws: Workspace, lr: float, state: GDState, n_steps: int, rec: Recorder,
            threads: int) -> tuple[int, GDState, int, int]:
        """``n_steps`` GD steps from ``state`` on ``threads`` threads; same contract as
        gd._gd_run: returns (status, state after, n_samples, n_evals), the point and the
        cached gradient in ``ws`` (packed P and G written back at samples and at the end)."""
        model = ws.model
        train_out = model.train_out
        P, G = ws.P, ws.G
        _, d, m = ws.shape
        W, a = ws.W, ws.a  # updated in place, neuron-major
        GW = np.empty((m, d))
        ga = np.empty(m)
        if state.have_grad:
            GW[:] = G[:d].T
            ga[:] = G[d]
        k0 = state.k
        k = k0
        L = state.L
        ns = ne = 0
        st = OK
        grid = rec.grid
        gi = int(np.searchsorted(grid, k0 * lr, side="right"))
        threads = max(1, min(int(threads), self.blocks))
        # thread q steps blocks q, q + threads, ...: any assignment gives the same bits
        share = [list(range(q, self.blocks, threads)) for q in range(threads)]

        def packed() -> None:
            P[:d] = W.T
            P[d] = a
            G[:d] = GW.T
            G[d] = ga

        def work(q: int) -> None:
            for b in share[q]:
                self.Lb[b] = call(_block)(self.data[b], model, W, a, self.ZTs[b], self.GTb[b],
                                          self.hs[b])

        pool = (ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="eae-gd-block")
                if threads > 1 else None)

        def evaluate() -> float:
            futs = [pool.submit(work, q) for q in range(1, threads)] if pool else []
            work(0)
            for f in futs:
                f.result()
            return call(_reduce)(model, self.Lb, self.GTb, W, a, GW, ga)

        try:
            if not state.have_grad:
                L = evaluate()
                ne += 1
            if not np.isfinite(L) or not (np.all(np.abs(W) <= DIVERGENCE_BOUND)
                                          and np.all(np.abs(a) <= DIVERGENCE_BOUND)):
                st = DIVERGED
            kend = k0 + n_steps
            while st == OK:
                t = k * lr
                if k > k0 and gi < grid.shape[0] and t >= grid[gi]:
                    packed()
                    gi, ns = call(sample)(P, G, t, L, rec, gi, ns)
                if k == kend:
                    break
                bad = call(_update)(W, a, GW, ga, lr, train_out)
                k += 1
                if bad:
                    st = DIVERGED
                    L = np.nan
                    break
                L = evaluate()
                ne += 1
                if not np.isfinite(L):
                    st = DIVERGED
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        packed()
        return st, GDState(k, L, st == OK), ns, ne
