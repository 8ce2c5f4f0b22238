"""What every integrator shares: the problem, the recorded samples, the result of one call,
and the one protocol both steppers implement.

Model (float64 throughout)::

    h(x) = c · Σ_j a_j σ(⟨w_j, x⟩),   σ(u) = max(u, γu),   σ'(u) = 1 if u > 0 else γ

so σ'(0) = 0 for ReLU (a dead neuron stays dead, as in autograd). With z = X Wᵀ and
per-sample weights s: L = R Σ_i s_i ℓ(h_i, y_i), R = 1/n ("mean") or 1 ("sum").
The flow is dθ/dt = −D∇L with per-layer rates D = diag(lr_w on every w_j, lr_a on every a_j)
(1 and 1: plain gradient flow); the kernels' "gradient" G is D∇L, the flow's velocity with a
minus sign, and GD steps θ ← θ − η D∇L.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple, Protocol

import numpy as np

LOSS_CODES = {"square": 0, "logistic": 1, "exponential": 2}
#: A parameter of magnitude above this (or non-finite) counts as divergence.
DIVERGENCE_BOUND = 1e150

# Status codes returned by the compiled loops (ints: numba freezes them as constants).
OK, DIVERGED, BUDGET = 0, 1, 2


class StepStatus(StrEnum):
    """How one ``advance`` call ended (a str, so ``== "ok"`` keeps working)."""

    OK = "ok"  # reached t_target
    DIVERGED = "diverged"  # loss or parameters non-finite or above DIVERGENCE_BOUND
    BUDGET = "budget"  # used this call's evaluation budget; call again to continue
    MAX_STEPS = "max_steps"  # the stepper's own step limit is used up


#: Kernel status code → StepStatus.
KERNEL_STATUS = {OK: StepStatus.OK, DIVERGED: StepStatus.DIVERGED, BUDGET: StepStatus.BUDGET}


@dataclass(frozen=True)
class Problem:
    """Data and model hyper-parameters (validated by the config layer, not here)."""

    X: np.ndarray  # (n, d) float64 C-contiguous
    y: np.ndarray  # (n,)
    sw: np.ndarray  # (n,) sample weights s_i
    gamma: float
    c: float
    loss: str  # "square" | "logistic" | "exponential"
    reduction: str  # "mean" | "sum"
    train_output: bool
    lr_w: float = 1.0  # per-layer rate of every w_j (D's first block)
    lr_a: float = 1.0  # per-layer rate of every a_j

    @property
    def c_w(self) -> float:
        """c·lr_w, the factor of ∇_W in G (exactly c when lr_w = 1)."""
        return float(self.c) * float(self.lr_w)

    @property
    def c_a(self) -> float:
        """c·lr_a, the factor of ∇_a in G (exactly c when lr_a = 1)."""
        return float(self.c) * float(self.lr_a)


@dataclass
class Samples:
    """Scalars recorded at integrator points: time, loss and Min et al.'s two rates.

    norm_rate = Σ_j d‖w_j‖²/dt = Σ_j 2⟨−∇_{w_j}L, w_j⟩;
    dir_rate = Σ_{j: w_j≠0} ‖P⊥_{w_j}(−∇_{w_j}L)‖ / ‖w_j‖.
    """

    t: np.ndarray
    loss: np.ndarray
    norm_rate: np.ndarray
    dir_rate: np.ndarray

    @classmethod
    def empty(cls) -> Samples:
        return cls(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))


class FrameStates(NamedTuple):
    """States at the frame times one ``advance_frames`` call reached (k frames): W (k, m, d),
    a (k, m), and, when the stepper has them from its own last evaluation there, the loss L
    (k,) and the packed gradient ∇L (k, d + 1, m) (rows ∇_{w_·} by input coordinate, then ∇_a),
    else None."""

    W: np.ndarray
    a: np.ndarray
    L: np.ndarray | None
    G: np.ndarray | None


@dataclass
class Advance:
    """Result of one ``advance`` call: how it ended and the samples it recorded."""

    status: StepStatus
    samples: Samples


class FramesAdvance(NamedTuple):
    """Result of one ``advance_frames`` call: how it ended and its samples (``advance``), the
    number of targets reached, and the states there."""

    advance: Advance
    reached: int
    states: FrameStates


def concat_samples(parts: list[Samples]) -> Samples:
    """The samples of consecutive calls, in order."""
    if not parts:
        return Samples.empty()
    if len(parts) == 1:
        return parts[0]
    return Samples(*(np.concatenate([getattr(s, f) for s in parts])
                     for f in ("t", "loss", "norm_rate", "dir_rate")))


class Stepper(Protocol):
    """One integrator of dθ/dt = −∇L(θ) (or its GD discretisation), advanced in place.

    ``advance(t_target, budget, grid)`` integrates towards gradient-flow time ``t_target``
    using at most ``budget`` gradient evaluations in this call (at least one step's worth) and
    records a sample at the first point reached at or after each grid time in (t, t_target].
    Calling it again with the same target continues where the budget stopped it; results do
    not depend on how a run is cut into calls.
    """

    @property
    def W(self) -> np.ndarray: ...  # (m, d) current input weights

    @property
    def a(self) -> np.ndarray: ...  # (m,) current output weights

    @property
    def t(self) -> float: ...  # gradient-flow time reached

    @property
    def n_evals(self) -> int: ...  # gradient evaluations so far

    @property
    def n_steps(self) -> int: ...  # steps taken (GD) or accepted (GF)

    @property
    def n_forced(self) -> int: ...  # GF steps accepted at the kink floor (0 for GD)

    @property
    def loss(self) -> float: ...  # loss at the current point (NaN if not evaluated)

    @property
    def use_blas(self) -> bool: ...  # the evaluation path of its gradients (loss.use_blas_path)

    def landing_times(self, times: np.ndarray) -> np.ndarray:
        """The increasing times this stepper can stop at exactly, for requested ``times``."""
        ...

    def advance(self, t_target: float, budget: int, grid: np.ndarray) -> Advance: ...

    def advance_frames(self, targets: np.ndarray, budget: int,
                       grid: np.ndarray) -> FramesAdvance:
        """``advance`` to each of ``targets`` (increasing landing times) in turn, with at most
        ``budget`` evaluations in all (at least one step's worth), keeping the state at each
        target reached. ``grid``: sample times, as in ``advance``, up to the last target. The
        same steps and bits as one ``advance`` per target (``FramewiseAdvance`` is that
        default)."""
        ...


class FramewiseAdvance:
    """``Stepper.advance_frames`` by one ``advance`` call per target (for steppers whose
    compiled loop stops at one target per call): states are copies of W and a, without L
    and ∇L."""

    def advance_frames(self, targets: np.ndarray, budget: int,
                       grid: np.ndarray) -> FramesAdvance:
        st: Stepper = self  # type: ignore[assignment]
        m, d = st.W.shape
        start = st.n_evals
        budget = max(1, int(budget))
        status = StepStatus.OK
        parts: list[Samples] = []
        Ws: list[np.ndarray] = []
        As: list[np.ndarray] = []
        for tt in np.asarray(targets, dtype=float).tolist():
            left = budget - (st.n_evals - start)
            if left <= 0:
                status = StepStatus.BUDGET
                break
            lo = int(grid.searchsorted(st.t, "right"))
            hi = int(grid.searchsorted(tt, "right"))
            adv = st.advance(tt, left, grid[lo:max(lo, hi)])
            parts.append(adv.samples)
            if adv.status is not StepStatus.OK:
                status = adv.status
                break
            Ws.append(st.W.copy())
            As.append(st.a.copy())
        k = len(Ws)
        states = FrameStates(np.array(Ws).reshape(k, m, d), np.array(As).reshape(k, m),
                             None, None)
        return FramesAdvance(Advance(status, concat_samples(parts)), k, states)
