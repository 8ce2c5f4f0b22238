"""simulate(config) -> Trajectory: build data and weights, drive one stepper in chunks, record
frames, and stop cleanly on divergence, deadline, cancellation or step limit.

Time is gradient-flow time t (GD: t = kη). Frames are t = 0 plus `record.frames − 1` times from
`t_first` to `t_end` (log or linear spacing; each stepper snaps them to times it can land on,
e.g. whole GD steps). The stepper (built by `kernels.make_stepper`) advances exactly to each
frame time through the one `Stepper` protocol: each compiled chunk goes through as many frames
as its evaluation budget allows (`advance_frames`) and hands back their states; between chunks
Python checks the deadline and the cancel flag and reports progress. Chunks are sized from the
measured cost of an evaluation (~CHUNK_S seconds each, the first one a single step), so a
deadline or cancel takes effect within about a second whatever the problem size. What is
stored, and when, is the `RecordPolicy`; frames are measured into a `_FrameTable` (one
`kernels.measure.FrameProbe` pass each), on a worker thread (`_FrameQueue`) while the stepper
integrates on when a CPU is spare. A stepper that hands over its own last evaluation of the
loss and gradient at a frame (on the probe's evaluation path) supplies that frame's loss and
gradient. All give the bits of one `advance` per frame and measuring inline
(tests/test_simulate.py). Nothing here raises for a numerical problem: the trajectory comes
back with a `Status` and the message `Status.message_for` writes, saying what happened and what
to change.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from . import metrics
from .config import Config
from .cost import PROVISIONAL_MAX_S, interpreted_seconds
from .data import Dataset, build_dataset
from .init import init_weights
from .kernels import (
    METHODS,
    Problem,
    Stepper,
    StepStatus,
    cache,
    loss_value,
    make_stepper,
    usable_cpus,
)
from .kernels.measure import FRAME_METRICS, FrameProbe, FrameRows
from .limits import get_limits
from .status import RunEnd, Status
from .trajectory import Trajectory

ProgressFn = Callable[[float, str], None]

#: Wall time of one compiled chunk: between chunks the deadline and cancel flag are checked.
CHUNK_S = 0.2
#: Evaluations of the first chunk (one adaptive step; GD: four steps), before any timing.
FIRST_CHUNK = 4
MAX_CHUNK = 5_000_000
#: Frames measured on a worker thread while the stepper integrates on (when a CPU is spare,
#: ``_spare_cpu``, and the run has at least this many frames): the frame metrics (pairwise angles,
#: singular values, ...) then overlap the integration instead of following it. Same
#: computations on copies of (W, a), in frame order: the same bits either way.
PIPELINE_MIN_FRAMES = 8
#: Frames handed to that worker at once, or fewer when the oldest waited SINK_FLUSH_S.
SINK_BATCH = 8
SINK_FLUSH_S = 0.005
#: Batches waiting for that worker before the integrating thread waits for it (memory bound).
SINK_QUEUED = 2
#: Bytes of frame states handed over at once: a batch, or the frames of one compiled call.
FRAME_BLOCK_BYTES = 16_000_000


class CancelToken(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class RecordPolicy:
    """What a run stores and when (from the config's ``record`` section and the limits), in
    the spirit of diffrax's ``SaveAt``.

    ``frames``: requested frame times (t = 0 first); steppers may snap them (GD: whole steps).
    ``scalars``: the dense grid (t > 0) of loss and rates, sampled at integrator points.
    Full W is stored at every frame when F·m·d·8 bytes fit ``full_w_bytes``, else at evenly
    spaced frames (start and end included); activation patterns when F·m·n booleans fit
    ``active_bytes``. Pairwise angles use at most ``max_pairwise`` neurons (a fixed subset).
    ``plane``: the 2D plane neurons are drawn in ("auto", "pca", "axes", "signals", "teacher").
    """

    frames: np.ndarray
    scalars: np.ndarray
    spacing: str
    full_w_bytes: float
    active_bytes: int = 32_000_000
    max_pairwise: int = 1500
    plane: str = "auto"

    @classmethod
    def from_config(cls, config: Config) -> RecordPolicy:
        return cls(frames=frame_times(config),
                   scalars=frame_times(config, config.record.scalars)[1:],
                   spacing=config.record.spacing,
                   full_w_bytes=get_limits().full_w_budget_mb * 1e6,
                   plane=config.record.plane)

    def full_w_frames(self, n_frames: int, m: int, d: int) -> set[int]:
        """Frame indices whose full W is stored."""
        per = m * d * 8
        if per * n_frames <= self.full_w_bytes:
            return set(range(n_frames))
        k = max(2, int(self.full_w_bytes // max(per, 1)))
        return {int(i) for i in np.unique(np.linspace(0, n_frames - 1, k).round().astype(int))}

    def keeps_active(self, n_frames: int, m: int, n: int) -> bool:
        """Whether activation patterns (F, m, n) are stored."""
        return n_frames * m * n <= self.active_bytes


def frame_times(config: Config, count: int | None = None) -> np.ndarray:
    """t = 0 followed by count−1 times from t_first to t_end (log or linear)."""
    rec, t_end = config.record, config.integrator.t_end
    count = rec.frames if count is None else count
    k = max(1, count - 1)
    if rec.spacing == "log":
        t0 = rec.t_first if rec.t_first is not None else t_end * 1e-4
        grid = np.geomspace(t0, t_end, k)
    else:
        t0 = rec.t_first if rec.t_first is not None else t_end / k
        grid = np.linspace(t0, t_end, k)
    grid[-1] = t_end
    return np.r_[0.0, grid]


def plane_for(config: Config, ds: Dataset,
              choice: str | None = None) -> tuple[np.ndarray, tuple[str, str]]:
    """Orthonormal (2, d) basis of the plane neurons are drawn in, and its axis names
    (``choice`` defaults to config.record.plane). Always finite: a zero first direction is
    replaced by the first axis, a second one parallel to it (or zero) by the coordinate axis
    least aligned with the first, made orthogonal to it; with d = 1 there is no second
    direction and the second row is 0 (the plane is the line)."""
    d = ds.d
    choice = config.record.plane if choice is None else choice
    if choice == "auto":
        if d == 2:
            choice = "axes"
        elif "v*" in ds.directions:
            choice = "teacher"
        elif ds.classification and ds.directions["x₊"].any() and ds.directions["x₋"].any():
            choice = "signals"
        else:
            choice = "pca"
    if choice == "axes":
        P = np.eye(2, d)
        names = ("x", "bias") if ds.meta.get("bias") and d == 2 else ("x₁", "x₂")
        if config.data.kind == "three_point":
            names = ("x", "bias")
        return P, names
    if choice == "teacher" and "v*" in ds.directions:
        u = ds.directions["v*"]
        v = (ds.y[:, None] * ds.X).mean(axis=0)
        names = ("v*", "γ_[n] ⊥ v*")
    elif choice == "signals" and ds.classification:
        u, v = ds.directions["x₊"], ds.directions["x₋"]
        names = ("x₊", "x₋ ⊥ x₊")
    else:
        _, _, vt = np.linalg.svd(ds.X, full_matrices=False)
        u = vt[0]
        v = vt[1] if vt.shape[0] > 1 else np.eye(d)[1 % d]
        names = ("PC1", "PC2")
    return _orthonormal_pair(np.asarray(u, float), np.asarray(v, float)), names


def _orthonormal_pair(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(2, d): e₁ = u/‖u‖ (the first axis if u = 0) and e₂ the unit part of v orthogonal to
    e₁; when that part vanishes (v ∥ u or v = 0) the coordinate axis least aligned with e₁
    instead (its orthogonal part has norm ≥ √(1 − 1/d) > 0 for d ≥ 2); for d = 1, e₂ = 0."""
    d = u.shape[0]
    nu = np.linalg.norm(u)
    e1 = u / nu if nu > 0 else np.eye(d)[0]
    if d == 1:
        return np.vstack([e1, np.zeros(1)])
    r = v - (v @ e1) * e1
    if np.linalg.norm(r) <= 1e-12 * max(1.0, float(np.linalg.norm(v))):
        r = np.eye(d)[int(np.argmin(np.abs(e1)))]
        r = r - (r @ e1) * e1
    return np.vstack([e1, r / np.linalg.norm(r)])


class _FrameTable:
    """The rows of every frame: measured from full (W, a) at each frame into arrays allocated
    once for every frame (``capacity`` = 1 + the targets: a run that stops early records at
    most one frame more, at its stopping time, than the targets it reached), then turned into
    the ``Trajectory``.

    Each frame is one ``kernels.measure.FrameProbe`` call: the loss (the bits of
    ``loss_grad``), the activation pattern W Xᵀ > 0, and one compiled pass for everything else
    (norms, projections, cosines, singular values, ‖θ‖², balance drift, Min et al.'s rates, max
    and mean pairwise angle, accuracy), equal to ``dynamics.metrics``'s NumPy formulas to
    round-off (tests/test_simulate.py). Events are listed only for frames whose pattern
    changed."""

    def __init__(self, policy: RecordPolicy, config: Config, ds: Dataset, problem: Problem,
                 capacity: int, W0: np.ndarray, a0: np.ndarray):
        self.ds, self.problem = ds, problem
        m, d, n = W0.shape[0], ds.d, ds.n
        self.plane, self.plane_names = plane_for(config, ds, policy.plane)
        self.W0, self.a0 = W0.copy(), a0.copy()
        self.keep_w = policy.full_w_frames(capacity, m, d)
        self.keep_active = policy.keeps_active(capacity, m, n)
        dirs = dict(ds.directions)
        dirs["γ_[n]"] = (ds.sw[:, None] * ds.y[:, None] * ds.X).mean(axis=0)
        self.directions = {k: v for k, v in dirs.items() if np.linalg.norm(v) > 0}
        rng = np.random.default_rng(0)
        k = policy.max_pairwise
        pair_mask = np.ones(m, bool)
        if m > k:  # a fixed subset of k neurons
            pair_mask[:] = False
            pair_mask[rng.choice(m, k, replace=False)] = True
        F = capacity
        self.n = 0  # frames recorded
        self.t = np.empty(F)
        self.loss = np.empty(F)
        self.accuracy = np.full(F, np.nan)
        self.a = np.empty((F, m))
        self.norms = np.empty((F, m))
        self.proj = np.empty((F, m, 2))
        self.cos = np.empty((F, len(self.directions), m))
        self.fm = np.empty((F, len(FRAME_METRICS)))
        # patterns: every frame's when stored, else two alternating (this frame, the last)
        self.active = np.empty((F if self.keep_active else 2, m, n), bool)
        self.W_list: list[np.ndarray] = []
        self.W_frames: list[int] = []
        self.ev: dict[str, list[Any]] = {"t": [], "neuron": [], "point": [], "on": []}
        self.probe = FrameProbe(problem, m, self.plane, np.array(list(self.directions.values())),
                                metrics.balance(W0, a0, problem.lr_w, problem.lr_a), pair_mask,
                                ds.classification)

    def _pattern(self, idx: int) -> np.ndarray:
        return self.active[idx if self.keep_active else idx % 2]

    def add(self, t: float, W: np.ndarray, a: np.ndarray, owned: bool = False,
            grad: tuple[float, np.ndarray] | None = None) -> None:
        """Measure frame ``self.n`` at (t, W, a); ``owned``: W is a copy nobody else
        changes (kept as is when full W is stored at this frame). ``grad`` = (L, ∇L)
        at this state from the kernel of ``loss_grad`` (the adaptive stepper's last
        evaluation there: ``evaluate`` at exactly the packed (W, a), as ``loss_grad`` runs
        it, so the same bits), ∇ packed (d + 1, m); else they are evaluated here."""
        idx = self.n
        pattern = self._pattern(idx)
        prev = self._pattern(idx - 1) if idx > 0 else None
        self.t[idx] = t
        gW = None
        if grad is None:
            self.loss[idx] = self.probe.loss_grad(W, a)
        else:
            self.loss[idx] = grad[0]
            gW = np.ascontiguousarray(grad[1][:-1].T)  # an exact copy, (m, d)
        self.a[idx] = a
        if idx in self.keep_w:
            # a view (of a block of frames) is copied: the block is not kept alive
            self.W_list.append(W if owned and W.base is None else W.copy())
            self.W_frames.append(idx)
        rows = FrameRows(self.norms[idx], self.proj[idx], self.cos[idx], self.fm[idx])
        changes, self.accuracy[idx] = self.probe.measure(W, a, pattern, prev, rows, gW)
        if changes:
            j, i = np.nonzero(pattern != prev)
            self.ev["t"].extend([t] * len(j))
            self.ev["neuron"].extend(j.tolist())
            self.ev["point"].extend(i.tolist())
            self.ev["on"].extend(pattern[j, i].tolist())
        self.n = idx + 1

    @property
    def last_t(self) -> float:
        return float(self.t[self.n - 1])

    def trajectory(self, config: Config, scalars: dict[str, np.ndarray], status: Status,
                   message: str, n_evals: int, n_steps: int, wall: float) -> Trajectory:
        F = self.n
        m = self.W0.shape[0]

        def rows(x: np.ndarray) -> np.ndarray:  # the recorded frames, owning their memory
            return x[:F] if F == x.shape[0] else x[:F].copy()

        return Trajectory(
            config=config,
            t=rows(self.t),
            loss=rows(self.loss),
            accuracy=rows(self.accuracy),
            a=rows(self.a),
            norms=rows(self.norms),
            proj=rows(self.proj),
            plane=self.plane,
            plane_names=self.plane_names,
            W=np.asarray(self.W_list, float).reshape(len(self.W_list), m, self.ds.d),
            W_frames=np.asarray(self.W_frames, dtype=np.int64),
            X=self.ds.X, y=self.ds.y, sw=self.ds.sw,
            active=rows(self.active) if self.keep_active else None,
            events={"t": np.asarray(self.ev["t"], float),
                    "neuron": np.asarray(self.ev["neuron"], np.int64),
                    "point": np.asarray(self.ev["point"], np.int64),
                    "on": np.asarray(self.ev["on"], bool)},
            frame_metrics={k: self.fm[:F, i].copy() for i, k in enumerate(FRAME_METRICS)},
            cosines={k: self.cos[:F, i].copy() for i, k in enumerate(self.directions)},
            directions=self.directions,
            scalars=scalars,
            status=status, message=message, n_evals=int(n_evals), n_steps=int(n_steps),
            wall_time=float(wall), meta=dict(self.ds.meta),
        )


class _FrameQueue:
    """Hands frames to the ``_FrameTable``: on a worker thread (``threaded``), which measures
    copies of (W, a) in frame order while the caller integrates on, or inline. Frames go over
    in batches (SINK_BATCH frames, or what is pending after SINK_FLUSH_S seconds), so the
    worker is woken a few times per run rather than once per frame. ``close()`` waits for
    every frame handed over and re-raises the worker's exception, if any."""

    def __init__(self, table: _FrameTable, threaded: bool) -> None:
        self.table = table
        self.last_t = table.last_t  # time of the last frame handed over
        self._error: BaseException | None = None
        self._q: queue.Queue[list[tuple[Any, ...]] | None] | None = None
        self._thread: threading.Thread | None = None
        self._pending: list[tuple[Any, ...]] = []
        self._pending_bytes = 0
        self._flushed = time.perf_counter()
        if threaded:
            self._q = queue.Queue(maxsize=SINK_QUEUED)
            self._thread = threading.Thread(target=self._work, args=(cache.mode(),),
                                            name="eae-measure", daemon=True)
            self._thread.start()

    def _work(self, mode: cache.Mode | None) -> None:
        with cache.running(mode):  # the kernels as the run calls them (compiled or not)
            self._measure()

    def _measure(self) -> None:
        q = self._q
        assert q is not None
        while True:
            batch = q.get()
            if batch is None:
                return
            for t, W, a, grad in batch:
                if self._error is None:  # after a failure, drain without measuring
                    try:
                        self.table.add(t, W, a, True, grad)
                    except BaseException as e:  # re-raised by close() in the caller's thread
                        self._error = e

    def put(self, t: float, W: np.ndarray, a: np.ndarray,
            grad: tuple[float, np.ndarray] | None = None, owned: bool = False) -> None:
        """Add a frame at (t, W, a) (``grad``: as ``_FrameTable.add``). ``owned``: W, a
        and grad are the caller's to give away; else W and a are copied (they may change as
        soon as this returns)."""
        self.last_t = t
        if self._q is None:
            self.table.add(t, W, a, owned, grad)
            return
        if not owned:
            W, a = W.copy(), a.copy()
        self._pending.append((t, W, a, grad))
        self._pending_bytes += W.nbytes + (0 if grad is None else grad[1].nbytes)
        now = time.perf_counter()
        if (len(self._pending) >= SINK_BATCH or self._pending_bytes >= FRAME_BLOCK_BYTES
                or now - self._flushed >= SINK_FLUSH_S):
            self._flush(now)

    def _flush(self, now: float) -> None:
        if self._pending and self._q is not None:
            self._q.put(self._pending)  # blocks while SINK_QUEUED batches wait: bounded memory
            self._pending = []
            self._pending_bytes = 0
        self._flushed = now

    def close(self) -> None:
        if self._thread is not None and self._q is not None:
            self._flush(time.perf_counter())
            self._q.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error


def _spare_cpu() -> bool:
    """Whether a worker thread would likely find a CPU of its own: ≥ 2 usable CPUs and a
    1-minute load average below their number − ½. On a busy host the worker only adds thread
    hand-offs to the same CPU time, so frames are then measured inline (same bits)."""
    n = usable_cpus()
    if n < 2:
        return False
    try:
        return os.getloadavg()[0] < n - 0.5
    except OSError:  # no load average on this OS
        return True


def _is_cancelled(cancel: CancelToken | Callable[[], bool] | None) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)  # an Event-like token, else a plain callable
    return bool(is_set() if callable(is_set) else cancel())  # type: ignore[operator]


def build_problem(config: Config, ds: Dataset) -> Problem:
    """The kernels' problem: the data, γ, the output scale c·m^(−p), the loss and the
    per-layer rates."""
    return Problem(X=ds.X, y=ds.y, sw=ds.sw, gamma=float(config.model.gamma),
                   c=config.model.output_scale, loss=config.loss.kind,
                   reduction=config.loss.reduction,
                   train_output=bool(config.model.train_output),
                   lr_w=float(config.integrator.lr_w), lr_a=float(config.integrator.lr_a))


def _next_chunk(evals: int, dt: float) -> int:
    """Evaluations for ~CHUNK_S seconds at the measured cost, growing at most 20× a chunk (the
    first chunks may include compilation or cold caches)."""
    per_eval = dt / max(evals, 1)
    want = min(CHUNK_S / max(per_eval, 1e-9), 20 * max(evals, FIRST_CHUNK))
    return int(min(max(want, FIRST_CHUNK), MAX_CHUNK))  # plain floats: called per chunk


def simulate(config: Config, progress: ProgressFn | None = None, deadline: float | None = None,
             cancel: CancelToken | Callable[[], bool] | None = None,
             initial: tuple[np.ndarray, np.ndarray] | None = None) -> Trajectory:
    """Run one configuration.

    progress(fraction, text) is called between chunks; `deadline` is a wall-clock budget in
    seconds from the call; `cancel` is an Event-like object (or a callable) checked between
    chunks; `initial` = (W, a) replaces the configured initialisation. While a warm-up compiles
    the kernels in another thread, a run whose uncompiled estimate is at most
    `PROVISIONAL_MAX_S` runs the kernels' source uncompiled (`kernels.cache.call`) and is marked
    `meta["provisional"]`; every other run calls the compiled kernels.
    """
    start = time.perf_counter()
    # while the server compiles the kernels, a small run goes uncompiled (provisional: never
    # cached, `Trajectory.meta["provisional"]`); a larger one waits for the compiler
    provisional = cache.compiling_elsewhere() and \
        interpreted_seconds(config) <= PROVISIONAL_MAX_S
    with cache.running("interpreted" if provisional else "compiled"):
        traj = _simulate(config, progress, deadline, cancel, initial, start)
    if provisional:
        traj.meta["provisional"] = True
    return traj


def _simulate(config: Config, progress: ProgressFn | None, deadline: float | None,
              cancel: CancelToken | Callable[[], bool] | None,
              initial: tuple[np.ndarray, np.ndarray] | None, start: float) -> Trajectory:
    ds = build_dataset(config)
    if initial is not None:
        W0 = np.array(initial[0], dtype=float, copy=True)
        a0 = np.array(initial[1], dtype=float, copy=True)
    else:
        W0, a0 = init_weights(config, ds.d)
    problem = build_problem(config, ds)
    it = config.integrator
    integrator = it.model_copy(update={"max_steps": min(it.max_steps, get_limits().max_steps)})
    stepper = make_stepper(it.method, problem, W0, a0, integrator)
    policy = RecordPolicy.from_config(config)
    targets = stepper.landing_times(policy.frames[1:])
    table = _FrameTable(policy, config, ds, problem, len(targets) + 1, W0, a0)
    table.add(0.0, W0, a0)
    # uncompiled kernels hold the interpreter lock: a worker would only add hand-offs
    frames = _FrameQueue(table, threaded=len(targets) >= PIPELINE_MIN_FRAMES and _spare_cpu()
                         and cache.mode() != "interpreted")
    control = _Control(start, deadline, cancel, progress)
    try:
        end = _drive(stepper, _Schedule(targets, policy.scalars, it.t_end, policy.spacing),
                     frames, control)
        if end.status is not Status.COMPLETED and stepper.t > frames.last_t:
            _add_stopping_frame(stepper, problem, frames)
    finally:
        frames.close()
    method = METHODS[it.method]
    message = end.status.message_for(RunEnd(
        t=stepper.t, t_end=it.t_end, n_evals=stepper.n_evals, method=method.label,
        diverged_why=method.diverged_why, max_steps=integrator.max_steps, deadline=deadline,
        stalled=end.stalled, kink_floor_steps=stepper.n_forced,
        method_key=config.integrator.method, init_scale=config.init.scale))
    traj = table.trajectory(config, end.scalars, end.status, message, stepper.n_evals,
                            stepper.n_steps, time.perf_counter() - start)
    traj.meta["kink_floor_steps"] = stepper.n_forced
    _report_accuracy(traj)
    if progress is not None:
        progress(1.0, message)
    return traj


ACCURACY_SLACK = 10.0  # the achieved accuracy is reported when worse than this × rtol


def _report_accuracy(traj: Trajectory) -> None:
    """Gradient flow with a trained output layer: the achieved accuracy beside the requested
    one (`metrics.relative_balance_drift`, in `meta["accuracy"]`), and a sentence in the
    message when it is worse than ACCURACY_SLACK × rtol — neurons sliding on ReLU kinks are
    followed with steps at the kink floor, whose error follows that floor, not rtol."""
    cfg = traj.config
    fm = traj.frame_metrics
    if (cfg.integrator.method != "gf" or not cfg.model.train_output or traj.n_frames == 0
            or "balance_drift" not in fm or "max_norm" not in fm):
        return
    rtol = float(cfg.integrator.rtol)
    drift = metrics.relative_balance_drift(fm["balance_drift"], fm["max_norm"], traj.a)
    ok = bool(drift <= ACCURACY_SLACK * rtol)
    traj.meta["accuracy"] = {"rtol": rtol, "balance_drift": drift, "within_tolerance": ok}
    if not ok and np.isfinite(drift):
        it = cfg.integrator
        what = ("a_j² − ‖w_j‖²" if it.lr_w == 1.0 and it.lr_a == 1.0
                else "η_w a_j² − η_a ‖w_j‖²")
        traj.message += (f" Achieved accuracy: {what}, which the flow conserves, "
                         f"drifted {drift:.1e} (relative) at rtol {rtol:g}; the steps at ReLU "
                         "kinks, not rtol, set it here.")


@dataclass(frozen=True)
class _Schedule:
    """Where a run goes: the frame times the stepper lands on (t > 0, increasing), the dense
    scalar grid, t_end, and the frame spacing (for the progress fraction)."""

    targets: np.ndarray
    scalars: np.ndarray
    t_end: float
    spacing: str

    def fraction(self, t: float) -> float:
        """Progress at time t: along log time for log-spaced frames, else linear."""
        first, t_end = float(self.targets[0]), self.t_end
        if self.spacing == "log" and first > 0:
            lo = np.log(first)
            frac = (np.log(max(t, first)) - lo) / max(np.log(t_end) - lo, 1e-12)
        else:
            frac = t / t_end
        return float(np.clip(frac, 0.0, 1.0))


@dataclass(frozen=True)
class _Control:
    """What stops a run early and whom it tells: the start (``perf_counter``), the deadline in
    seconds from it, the cancel flag and the progress callback."""

    start: float
    deadline: float | None
    cancel: CancelToken | Callable[[], bool] | None
    progress: ProgressFn | None

    def stop(self, clock: Callable[[], float]) -> Status | None:
        """CANCELLED or DEADLINE when the run must stop now, else None."""
        if self.cancel is not None and _is_cancelled(self.cancel):
            return Status.CANCELLED
        if self.deadline is not None and clock() - self.start > self.deadline:
            return Status.DEADLINE
        return None


class _DriveEnd(NamedTuple):
    """How ``_drive`` ended: the status, whether the stepper stalled (no progress), and the
    dense scalars (t, loss, norm_rate, dir_rate)."""

    status: Status
    stalled: bool
    scalars: dict[str, np.ndarray]


#: Stepper status → the run's status when a chunk ends with it.
_STOPS = {StepStatus.MAX_STEPS: Status.MAX_STEPS, StepStatus.DIVERGED: Status.DIVERGED}


def _drive(stepper: Stepper, schedule: _Schedule, frames: _FrameQueue,
           control: _Control) -> _DriveEnd:
    """Advance ``stepper`` through ``schedule.targets`` in chunks of ``advance_frames``, handing
    each frame reached to ``frames`` with its loss and gradient when the stepper has them from
    its own evaluation on the probe's path (the same bits as the probe's)."""
    targets = schedule.targets
    # the scalar grid in (t, target] of each call is a slice (the grid increases); bisect on
    # a list of the same floats finds the same indices as np.searchsorted(..., "right")
    grid_all = schedule.scalars
    grid_list = grid_all.tolist()
    tl = targets.tolist()
    K = len(tl)
    samples: tuple[list[np.ndarray], ...] = ([], [], [], [])
    status: Status = Status.COMPLETED
    stalled = False
    chunk = FIRST_CHUNK  # evaluations per compiled call, then sized to ~CHUNK_S seconds
    stalls = 0
    clock = time.perf_counter
    same_path = stepper.use_blas == frames.table.probe.blas
    m, d = stepper.W.shape
    per_call = max(1, int(FRAME_BLOCK_BYTES // (8 * (2 * m * d + 2 * m + 1))))
    k = 0  # frames reached (targets[:k])
    while k < K:
        stop = control.stop(clock)
        if stop is not None:
            status = stop
            break
        t_before, evals_before = stepper.t, stepper.n_evals
        k1 = min(K, k + per_call)
        grid = grid_all[bisect_right(grid_list, t_before):bisect_right(grid_list, tl[k1 - 1])]
        c0 = clock()
        adv, r, fs = stepper.advance_frames(targets[k:k1], chunk, grid)
        dt = clock() - c0
        s = adv.samples
        samples[0].append(s.t)
        samples[1].append(s.loss)
        samples[2].append(s.norm_rate)
        samples[3].append(s.dir_rate)
        reuse = same_path and fs.L is not None and fs.G is not None
        for j in range(r):
            grad = (float(fs.L[j]), fs.G[j]) if reuse else None  # type: ignore[index]
            frames.put(tl[k + j], fs.W[j], fs.a[j], grad, owned=True)
        k += r
        if adv.status in _STOPS:
            status = _STOPS[adv.status]
            break
        progressed = stepper.t > t_before or stepper.n_evals > evals_before
        stalls = 0 if progressed else stalls + 1
        if stalls > 3:
            status, stalled = Status.MAX_STEPS, True
            break
        chunk = _next_chunk(stepper.n_evals - evals_before, dt)
        if control.progress is not None:
            tnow = stepper.t
            control.progress(schedule.fraction(tnow),
                             f"t = {tnow:.4g} of {schedule.t_end:.4g}")
    scalars = {k: (np.concatenate([np.asarray(x, float) for x in v]) if v else np.zeros(0))
               for k, v in zip(("t", "loss", "norm_rate", "dir_rate"), samples, strict=True)}
    return _DriveEnd(status, stalled, scalars)


def _add_stopping_frame(stepper: Stepper, problem: Problem, frames: _FrameQueue) -> None:
    """A run stopped between frames keeps its state at the stopping time as a last frame,
    when that state is finite."""
    W, a = stepper.W, stepper.a
    finite = bool(np.all(np.isfinite(W)) and np.all(np.isfinite(a)))
    if finite and np.isfinite(loss_value(problem, W, a)):
        frames.put(float(stepper.t), W, a)
