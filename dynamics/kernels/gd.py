"""Full-batch gradient descent θ_{k+1} = θ_k − η ∇L(θ_k); gradient-flow time t = k·η.

Small problems run the compiled loop ``_gd_run`` (one call per ``advance``, GIL released);
large BLAS-path problems cut the samples into blocks (gd_split.py) whose count is fixed by the
problem's size.
"""

from __future__ import annotations

import numpy as np

from .cache import call, jit
from .gd_split import BlockPlan, blocks_for
from .loss import (
    GDState,
    Workspace,
    WorkspaceViews,
    evaluate,
    first_grid_after,
    pack,
    params_ok,
    recorder,
    sample,
    samples_from,
    unpack,
)
from .problem import (
    DIVERGED,
    DIVERGENCE_BOUND,
    KERNEL_STATUS,
    OK,
    Advance,
    FramewiseAdvance,
    Problem,
    Samples,
    StepStatus,
)
from .threads import worker_threads


@jit
def _gd_update(P, G, lr, rows):
    """P[:rows] −= lr G[:rows]; returns the number of entries now non-finite or > 1e150."""
    nbad = 0
    m = P.shape[1]
    for k in range(rows):
        for j in range(m):
            v = P[k, j] - lr * G[k, j]
            P[k, j] = v
            nbad += 0 if abs(v) <= DIVERGENCE_BOUND else 1
    return nbad


@jit
def _gd_run(net, point, lr, state, n_steps, rec):
    """Run ``n_steps`` GD steps in place (``point``) from ``state``; returns (status, state
    after, n_samples, n_evals).

    The gradient at the current point is cached between calls in point.G
    (``state.have_grad``), so each step costs one evaluation whose forward pass also gives the
    loss that is recorded (``sample`` into ``rec`` at its grid times).
    On divergence the state is left at the first offending iterate.
    """
    W, a, P, G = point
    pack(W, a, P)
    d = P.shape[0] - 1
    rows = d + 1 if net.model.train_out else d
    grid = rec.grid
    ng = grid.shape[0]
    k0 = state.k
    gi = first_grid_after(grid, k0 * lr)
    ns = 0
    ne = 0
    k = k0
    L = state.L
    st = OK
    if not state.have_grad:
        L = evaluate(net, P, G)
        ne += 1
    if not np.isfinite(L) or not params_ok(P):
        return DIVERGED, GDState(k, L, False), ns, ne
    kend = k0 + n_steps
    while True:
        t = k * lr
        if k > k0 and gi < ng and t >= grid[gi]:
            gi, ns = sample(P, G, t, L, rec, gi, ns)
        if k == kend:
            break
        nbad = _gd_update(P, G, lr, rows)
        k += 1
        if nbad > 0:
            st = DIVERGED
            L = np.nan
            break
        L = evaluate(net, P, G)
        ne += 1
        if not np.isfinite(L):
            st = DIVERGED
            break
    unpack(P, W, a)
    return st, GDState(k, L, st == OK), ns, ne


class GDStepper(FramewiseAdvance, WorkspaceViews):
    """Gradient descent with step η = ``lr``; implements the ``Stepper`` protocol.

    ``advance(t_target, budget, grid)`` steps to k = round(t_target/η) (at most ``budget``
    steps this call, one evaluation each); ``advance_frames`` is one ``advance`` per target;
    ``take_steps(n, grid)`` takes n steps. On
    divergence the state is left at the first offending iterate (non-finite loss, or a
    parameter non-finite or above DIVERGENCE_BOUND); ``k``/``t`` point to it.
    ``blocks`` (None: ``blocks_for(n, d, m)``) cuts the samples of a BLAS-path step into
    blocks; ``threads`` (None: EAE_CORE_THREADS) run them; only ``blocks`` changes bits.
    """

    n_forced = 0  # no kink floor in GD

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, lr: float,
                 path: str | None = None, blocks: int | None = None,
                 threads: int | None = None, max_steps: int | None = None) -> None:
        self.ws = Workspace(p, W, a, path)
        self.lr = float(lr)
        self.k = 0
        self.n_evals = 0
        self.max_steps = int(max_steps) if max_steps is not None else None
        n, d, m = self.ws.shape
        if not self.ws.use_blas:
            self.blocks = 1
        elif blocks is None:
            self.blocks = blocks_for(n, d, m)
        else:
            self.blocks = max(1, min(int(blocks), n))
        self.threads = worker_threads(self.blocks) if threads is None else max(1, int(threads))
        self._plan: BlockPlan | None = None  # made on the first multi-block step

    # -- protocol attributes ----------------------------------------------------------------
    @property
    def t(self) -> float:
        return self.k * self.lr

    @property
    def n_steps(self) -> int:
        return self.k


    def landing_times(self, times: np.ndarray) -> np.ndarray:
        """Whole steps: k·η with k = max(1, round(t/η)), without repeats."""
        ks = np.unique(np.maximum(1, np.round(np.asarray(times) / self.lr).astype(np.int64)))
        return ks * self.lr

    def advance(self, t_target: float, budget: int, grid: np.ndarray) -> Advance:
        """Step towards k = round(t_target/η), at most max(budget, 1) evaluations."""
        todo = round(float(t_target) / self.lr) - self.k
        if todo <= 0:
            return Advance(StepStatus.OK, Samples.empty())
        left = None if self.max_steps is None else self.max_steps - self.k
        if left is not None and left <= 0:
            return Advance(StepStatus.MAX_STEPS, Samples.empty())
        n = min(todo, max(1, int(budget) - (0 if self.ws.have_grad else 1)))
        if left is not None:
            n = min(n, left)
        adv = self.take_steps(n, grid)
        if adv.status is StepStatus.OK and n < todo:
            limited = left is not None and n == left
            adv.status = StepStatus.MAX_STEPS if limited else StepStatus.BUDGET
        return adv

    def take_steps(self, n_steps: int, grid: np.ndarray) -> Advance:
        """Take ``n_steps`` steps; sample at the first step k·η ≥ g for each g in (t0, t1]."""
        ws = self.ws
        t0 = self.k * self.lr
        t1 = (self.k + n_steps) * self.lr
        rec = recorder(grid, int(np.searchsorted(grid, t1, "right")
                                 - np.searchsorted(grid, t0, "right")))
        state = GDState(self.k, ws.L, ws.have_grad)
        if self.blocks > 1:
            if self._plan is None:
                self._plan = BlockPlan(ws, self.blocks)
            st, after, ns, ne = self._plan.run(ws, self.lr, state, int(n_steps), rec,
                                               self.threads)
        else:
            st, after, ns, ne = call(_gd_run)(ws.net, ws.point, self.lr, state, int(n_steps),
                                              rec)
        self.k = int(after.k)
        self.n_evals += int(ne)
        ws.L = float(after.L)
        ws.have_grad = st == OK
        return Advance(KERNEL_STATUS[st], samples_from(rec, int(ns)))
