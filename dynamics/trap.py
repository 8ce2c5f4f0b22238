"""The Boursier–Flammarion trap predicted from the data, before any run (inputs in the plane:
the three-point example's (x_i, 1), or any 2-D data with the square loss).

Their mechanism (Section 5; `dynamics.papers.boursier.trap_state` decides it from a run):
with ReLU and a small start where |a_j| ≥ ‖w_j‖ (balanced or output-dominated), every positive
neuron turns to the single maximum u* of G(w) = Σ_i b_i σ(⟨w, x_i⟩) (b_i = R s_i y_i, the
square loss at zero output) while its norm is tiny; if u* and the positive neurons are all in
the cone C where every point is active before they grow, the bundle is one linear unit and
fits the least-squares (OLS) line; there it stays when no neuron can grow: every fitted value
> 0 (one unit represents the line), a loss above `TRAP_TOL`, and no direction where a
negative neuron grows, G_r(w) = Σ_i r_i σ(⟨w, x_i⟩) ≥ 0 everywhere with the OLS residuals
r_i = R s_i (y_i − ŷ_i).

Whether the positive neurons reach C in time is a race, computed exactly in 2-D. With
|a_j| = ‖w_j‖ the direction θ of a positive neuron follows θ' = c G'(θ) (time as in the
dynamics: dθ/dt of gradient flow with c the output scale), and on an arc between kinks
G(θ) = ‖v‖cos(θ − θ_v), so tan(|θ − θ_v|/2) decays as e^{−c‖v‖t}: the time across an arc is
ln(tan(|θ_a − θ_v|/2)/tan(|θ_b − θ_v|/2))/(c‖v‖). `t_cone` is the longest such journey into C
(from the edges of the dead cone, the farthest starts, and from just beside any minimum of G
outside C); the norms grow meanwhile on the predicted time scale `t_align` of
`dynamics.timescales` (the alignment phase's end, ln(w*/‖w(0)‖)/r). Verdict: "trap" when
t_cone ≤ t_align/RACE_MARGIN, "escape" when any condition fails or t_cone ≥ RACE_MARGIN·t_align,
"unsure" in between (the race is too close for a formula of that accuracy; the run decides).
Not a theorem of the paper for every data set: its hypotheses as we read the paper,
checked against runs on random data in tests/test_trap.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .config import Config
from .data import Dataset, build_dataset
from .extremal import _exact_2d
from .timescales import auto_time

TRAP_TOL = 1e-3  # an OLS loss at or below this is a fit, not a trap level (as in boursier.py)
RACE_MARGIN = 2.0  # t_align is a leading-order estimate: closer races are "unsure"
NEAR_MIN = 1e-2  # rad beside a minimum of G where the crawl from it starts (π/m for m ≈ 300)

Verdict = Literal["trap", "escape", "unsure"]


@dataclass(frozen=True)
class TrapPrediction:
    """verdict (None: the trap does not apply — another loss, not 2-D, per-layer rates or a
    start the race is not computed for), why (one line),
    t_cone and t_align (time units of the dynamics; NaN when not computed)."""

    verdict: Verdict | None
    why: str
    t_cone: float = float("nan")
    t_align: float = float("nan")


@dataclass(frozen=True)
class _Arc:
    start: float
    end: float
    v: np.ndarray
    all_active: bool


def _arcs(X: np.ndarray, b: np.ndarray) -> list[_Arc]:
    """The circle cut at the kinks φ_i ± π/2, each arc with its exact vector
    v = Σ_{i active} b_i x_i (ReLU) and whether every point is active on it."""
    phi = np.arctan2(X[:, 1], X[:, 0])
    K = np.unique(np.round(np.mod(np.r_[phi - np.pi / 2, phi + np.pi / 2], 2 * np.pi), 12))
    ends = np.r_[K[1:], K[0] + 2 * np.pi]
    out = []
    for a, e in zip(K, ends, strict=True):
        mid = 0.5 * (a + e)
        act = X @ np.array([math.cos(mid), math.sin(mid)]) > 0
        out.append(_Arc(float(a), float(e), (b * act) @ X, bool(act.all())))
    return out


def _dist(a: float, b: float) -> float:
    """Angular distance in [0, π]."""
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


def _journey(arcs: list[_Arc], k: int, theta: float, c: float) -> float:
    """Time for a positive neuron at angle θ on arc k to enter the all-active cone
    (θ' = c G'(θ)); inf when it stops before (a maximum outside the cone) or dies."""
    n = len(arcs)
    t = 0.0
    direction = 0  # +1: increasing θ
    for _ in range(n + 1):
        arc = arcs[k]
        if arc.all_active:
            return t
        vn = float(np.linalg.norm(arc.v))
        if vn == 0.0:
            return math.inf  # the dead cone: it never moves again
        thv = math.atan2(arc.v[1], arc.v[0])
        if 0 < (thv - arc.start) % (2 * math.pi) < arc.end - arc.start:
            return math.inf  # G peaks inside this arc (arcs are ≤ π): it converges there
        # G' = −‖v‖ sin(θ − θ_v): toward θ_v the short way
        step = 1 if math.sin(theta - thv) < 0 else -1
        if direction and step != direction:
            return math.inf  # turned back at the kink: a maximum of G outside the cone
        direction = step
        exit_at = arc.end if step > 0 else arc.start
        da, db = _dist(theta, thv), _dist(exit_at, thv)
        if da >= math.pi - 1e-12 or db <= 1e-12:
            return math.inf  # at a minimum it never leaves; to θ_v on the edge it only tends
        t += math.log(math.tan(da / 2) / math.tan(db / 2)) / (c * vn)
        theta = exit_at
        k = (k + step) % n
    return math.inf


def _cone_time(X: np.ndarray, b: np.ndarray, c: float) -> float:
    """t_cone of the module docstring: the longest journey into the all-active cone."""
    arcs = _arcs(X, b)
    if not any(a.all_active for a in arcs):
        return math.inf
    starts: list[tuple[int, float]] = []
    n = len(arcs)
    for k, arc in enumerate(arcs):
        live = float(np.linalg.norm(arc.v)) > 0
        if not live or arc.all_active:
            continue
        if float(np.linalg.norm(arcs[(k - 1) % n].v)) == 0:
            starts.append((k, arc.start))  # an edge of the dead cone
        if float(np.linalg.norm(arcs[(k + 1) % n].v)) == 0:
            starts.append((k, arc.end))
        thv = math.atan2(arc.v[1], arc.v[0]) + math.pi  # an interior minimum of G
        rel = (thv - arc.start) % (2 * math.pi)
        if 0 < rel < arc.end - arc.start:
            for s in (-NEAR_MIN, NEAR_MIN):
                th = arc.start + rel + s
                if arc.start < th < arc.end:
                    starts.append((k, th))
    # kink minima (G' < 0 on the left, > 0 on the right): starts just beside them
    for k, arc in enumerate(arcs):
        left = arcs[(k - 1) % n]
        if arc.all_active or left.all_active:
            continue
        du = np.array([-math.sin(arc.start), math.cos(arc.start)])
        if float(du @ left.v) < 0 < float(du @ arc.v):
            starts += [(k, arc.start + min(NEAR_MIN, 0.5 * (arc.end - arc.start))),
                       ((k - 1) % n, arc.start - min(NEAR_MIN, 0.5 * (left.end - left.start)))]
    if not starts:
        return 0.0  # every active direction is already in the cone
    return max(_journey(arcs, k, th, c) for k, th in starts)


def settings_block(config: Config) -> str | None:
    """Why the race is not computed for these settings whatever the data (None: it is): per-layer
    rates (the direction's speed is η_w c |a_j|/‖w_j‖ G', not c G'), or a start other than the
    balanced, output-dominated, Gaussian or frozen-output ones (Dana et al.'s exp-margin and
    Kunin et al.'s (τ, δ) starts carry an O(1) or tuned output layer)."""
    it = config.integrator
    if it.lr_w != 1.0 or it.lr_a != 1.0:
        return (f"per-layer rates η_w = {it.lr_w:g}, η_a = {it.lr_a:g}: the race is computed for "
                "the plain gradient flow")
    if config.init.scheme not in ("balanced", "dominated", "gaussian", "fixed_output"):
        return (f"a {config.init.scheme} start: the race is computed for the balanced or "
                "output-dominated small start")
    return None


def start_ok(config: Config) -> bool:
    """The start the race is computed for: balanced or output-dominated (|a_j| ≥ ‖w_j‖)."""
    return config.init.scheme in ("balanced", "dominated")


def predict(config: Config, ds: Dataset | None = None) -> TrapPrediction:
    """The verdict of the module docstring for the config's data and settings."""
    ds = build_dataset(config) if ds is None else ds
    X, y, sw = np.asarray(ds.X, float), np.asarray(ds.y, float), np.asarray(ds.sw, float)
    if config.loss.kind != "square" or X.ndim != 2 or X.shape[1] != 2:
        return TrapPrediction(None, "the trap is a square-loss effect of inputs in the plane")
    blocked = settings_block(config)
    if blocked:
        return TrapPrediction(None, blocked)
    gamma = float(config.model.gamma)
    if gamma != 0:
        return TrapPrediction("escape", f"leaky ReLU (γ = {gamma:g}): every neuron keeps a slope "
                              "on every point, so none is frozen out of the fit")
    if not start_ok(config):
        return TrapPrediction("escape", f"a {config.init.scheme} start: neurons with |a_j| < "
                              "‖w_j‖ keep a norm that can grow at the least-squares line")
    R = 1.0 / len(y) if config.loss.reduction == "mean" else 1.0
    c = config.model.output_scale  # c·m^(−p): the factor in front of the sum
    b = R * sw * y
    ex = _exact_2d(X, b, 0.0)
    maxima = [e for e in ex if e.kind == "max" and e.value > 0]
    if any(e.kind == "min" and e.value < 0 for e in ex):
        return TrapPrediction("escape", "G has a negative minimum: negative neurons grow too, "
                              "so the network is not one unit on a line")
    if len(maxima) != 1:
        return TrapPrediction("escape", f"G has {len(maxima)} maxima: the positive neurons "
                              "split into bundles, not one unit")
    u = maxima[0].vector
    if not np.all(X @ u > 0):
        return TrapPrediction("escape", "the direction the neurons take leaves a point "
                              "inactive: the bundle is not the least-squares line")
    Xs = X * np.sqrt(sw)[:, None]
    beta, *_ = np.linalg.lstsq(Xs, y * np.sqrt(sw), rcond=None)
    fitted = X @ beta
    loss = float(R * np.sum(sw * 0.5 * (fitted - y) ** 2))
    if not np.all(fitted > 0):
        return TrapPrediction("escape", "the least-squares line is below zero at a point: one "
                              "ReLU unit cannot sit on it")
    if not loss > TRAP_TOL:
        return TrapPrediction("escape", f"the least-squares line fits (loss {loss:.2g} ≤ "
                              f"{TRAP_TOL:g}): no level to be trapped at")
    r = R * sw * (y - fitted)
    scale = float(np.sum(np.abs(r) * np.linalg.norm(X, axis=1)))
    low = min((e.value for e in _exact_2d(X, r, 0.0) if e.kind == "min"), default=0.0)
    if low < -1e-9 * max(scale, 1e-300):
        return TrapPrediction("escape", "at the least-squares line a negative neuron active on "
                              "part of the data can grow: it leaves the line")
    t_cone = _cone_time(X, b, c)
    t_align = float(auto_time(config, ds).t_align)
    timing = f"neurons reach the all-active cone by t ≈ {t_cone:.3g}, norms grow by t ≈ " \
             f"{t_align:.3g}"
    if not math.isfinite(t_cone) or t_cone >= RACE_MARGIN * t_align:
        why = ("some positive neurons never reach the all-active cone" if not
               math.isfinite(t_cone) else timing)
        return TrapPrediction("escape", f"alignment loses the race: {why}; those left outside "
                              "grow at the line", t_cone, t_align)
    if t_cone <= t_align / RACE_MARGIN:
        return TrapPrediction("trap", f"one unit on the least-squares line (loss {loss:.3g}) "
                              f"and nothing can grow there: {timing}", t_cone, t_align)
    return TrapPrediction("unsure", f"a close race: {timing}; the run decides", t_cone, t_align)


__all__ = ["RACE_MARGIN", "TRAP_TOL", "TrapPrediction", "predict", "settings_block", "start_ok"]
