"""Time scales of a small-initialisation run, for an "auto" end time and frame spacing.

Conventions as in `theory.py`: with the field weights b and output scale c, a balanced neuron
aligned with a unit direction w̄ grows as d ln‖w_j‖/dt = c G(w̄) while the outputs are ≈ 0.
The fastest neuron therefore grows at the rate

    r = c · max(G_max, −G_min)          (G over the extremal maxima / minima of the data)

(a_j > 0 neurons climb to the extremal max, a_j < 0 ones descend to the min and grow at c|G|).

- **Alignment (small-norm) phase**: the norms must travel from ‖w(0)‖ ≈ σ₀√d to the scale
  w* = √(ȳ / (c m̄)) at which the m̄ = max(1, m/2) aligned neurons give outputs of the size ȳ of
  the targets (h ≈ c Σ a_j‖w_j‖ ≈ c m̄ w*²). So t_align = ln(w*/‖w(0)‖) / r, i.e. ln(1/ε)/r up to
  an O(1/r) shift.
- **Fitting**: after the escape the loss falls on the scale 1/r. Square loss converges
  exponentially: K = 6 time units 1/r more take it far below 10 % of L(0). Logistic and
  exponential losses decay only like 1/t once the data are separated (the gradient vanishes
  with the loss), so they get K = 20 units (margins ≈ 3, loss < 10 % of ln 2).
  t_fit = t_align + K/r.
- **End time**: t_end = 1.25 · t_fit rounded up to 1, 2, 2.5 or 5 × 10^k, clipped to
  [1, 10⁶] and, for gd, to the step limit (t_end/lr ≤ max_steps).
- **First frame (log spacing)**: the phase detector (`phases.alignment_end`) ends the alignment
  when max‖w‖ reaches ‖w(0)‖^{1−f} (f = `norm_log_fraction` = ½), i.e. after the fraction f of
  the log-distance the norms travel: t_mid = f · t_align. t_first = t_mid² / t_end puts t_mid
  at the middle of the log-spaced slider, so the alignment and the growth + fit each get about
  half of the frames (measured: the detected end sits at 53–55 % of the frames). Clipped to
  [10⁻⁶, 0.2] · t_end. The price at very small ε: t_first is then a few 1/r, so the first
  turn of the directions falls within the first frames.

A degenerate field (r ≤ 0: no direction increases G) returns the schema default t_end (60).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .config import Config
from .data import Dataset, build_dataset
from .limits import get_limits
from .phases import DEFAULT_RULES
from .theory import G_value, config_field, entry_std, extremal_vectors, plan_search

FIT_UNITS = {"square": 6.0, "logistic": 20.0, "exponential": 20.0}
"""Time units 1/r the fitting phase is given after the alignment, per loss (see docstring)."""
MARGIN = 1.25  # head-room after the predicted fit
T_MIN, T_MAX = 1.0, 1e6
DEFAULT_T_END = 60.0


@dataclass(frozen=True)
class AutoTime:
    """The "auto" time range: t_end (nice number), the predicted alignment end and fit time,
    the growth rate r and the first log-spaced frame t_first."""

    t_end: float
    t_align: float
    t_fit: float
    rate: float
    t_first: float | None
    sample: tuple[int, int] | None = None  # (points used, points) when the rate is sampled

    def describe(self) -> str:
        """E.g. "t_end = 80 (auto: alignment ≈ 14, fitting ≈ 40)", plus the sample the rate
        comes from when the data are too large to search whole."""
        out = (f"t_end = {self.t_end:g} (auto: alignment ≈ {self.t_align:.3g}, "
               f"fitting ≈ {self.t_fit:.3g})")
        if self.sample is not None:
            out += f"; rate from a sample of {self.sample[0]:,} of the {self.sample[1]:,} points"
        return out


def nice_ceil(x: float) -> float:
    """Smallest of 1, 2, 2.5, 5 × 10^k that is ≥ x (x > 0)."""
    k = math.floor(math.log10(x))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        v = m * 10.0**k
        if v >= x * (1 - 1e-12):
            return float(f"{v:.6g}")
    return float(10.0 ** (k + 1))  # pragma: no cover


AUTO_BUDGET = 2e8
"""Multiply-adds the extremal search of the auto time may take (≈ 0.1–0.2 s here; see
`theory.plan_search`: for large n·d it runs on a sample of the points, and says so)."""
FLOOR_DIRECTIONS = 64  # data directions whose G gives the rate a floor (a sample when more)


def growth_rate(config: Config, ds: Dataset, budget: float = AUTO_BUDGET) -> float:
    """r = c · max(G_max, −G_min) over the data's extremal vectors (0 if none grows), with the
    largest |G| of up to `FLOOR_DIRECTIONS` data directions ±x_i/‖x_i‖ as a floor (the search
    in high d is partial). Both within `budget` multiply-adds: when the search samples the
    points, the floor is taken on a sample of the same size, with the weights scaled by n/n_s."""
    X, b = config_field(config, ds)
    gamma = float(config.model.gamma)
    ext = extremal_vectors(X, b, gamma, budget=budget)
    vals = [e.value for e in ext if e.kind == "max"] + [-e.value for e in ext if e.kind == "min"]
    n, d = X.shape
    rng = np.random.default_rng(1)
    n_used = plan_search(n, d, budget).n_used if d > 2 else n
    if n_used < n:
        pick = np.sort(rng.choice(n, n_used, replace=False))
        X, b = X[pick], b[pick] * (n / n_used)
    nx = np.linalg.norm(X, axis=1)
    rows = np.flatnonzero(nx > 0)
    if rows.size > FLOOR_DIRECTIONS:
        rows = np.sort(rng.choice(rows, FLOOR_DIRECTIONS, replace=False))
    U = X[rows] / nx[rows, None]
    if len(U):
        vals.append(float(np.max(np.abs(G_value(np.vstack([U, -U]), X, b, gamma)))))
    g = max(vals, default=0.0)
    it = config.integrator  # per-layer rates: a balanced neuron grows at √(η_w η_a) × the rate
    return config.model.output_scale * max(g, 0.0) * math.sqrt(it.lr_w * it.lr_a)


CACHE_ENTRIES = 256  # auto ranges remembered (each a few numbers), least recently used out
_cache: OrderedDict[str, AutoTime] = OrderedDict()
_cache_lock = threading.Lock()


def auto_time(config: Config, ds: Dataset | None = None) -> AutoTime:
    """The auto time range of `config` (its own t_end and t_first are ignored), remembered by
    the config's cache key and the step limit (the only limit it reads)."""
    key = f"{config.cache_key()}|{get_limits().max_steps}"
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    at = _auto_time(config, ds)
    with _cache_lock:
        _cache[key] = at
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return at


def _auto_time(config: Config, ds: Dataset | None) -> AutoTime:
    ds = build_dataset(config) if ds is None else ds
    r = growth_rate(config, ds)
    if not (r > 0 and math.isfinite(r)):
        return AutoTime(DEFAULT_T_END, float("nan"), float("nan"), r, None)
    d, m = ds.X.shape[1], config.model.width
    w0 = entry_std(config, d) * math.sqrt(d)
    w0 = max(w0, 1e-300)
    y_bar = float(np.mean(np.abs(ds.y))) or 1.0
    m_bar = max(1.0, m / 2.0)
    w_star = math.sqrt(y_bar / (config.model.output_scale * m_bar))
    t_align = max(math.log(max(w_star / w0, 1.0)), 1.0) / r
    t_fit = t_align + FIT_UNITS.get(config.loss.kind, 20.0) / r
    t_end = min(max(nice_ceil(MARGIN * t_fit), T_MIN), T_MAX)
    it = config.integrator
    if it.method == "gd":
        cap = min(it.max_steps, get_limits().max_steps) * it.lr
        t_end = min(t_end, cap)
    t_first = None
    if config.record.spacing == "log":
        t_mid = DEFAULT_RULES.norm_log_fraction * t_align
        t_first = float(np.clip(t_mid**2 / t_end, 1e-6 * t_end, 0.2 * t_end))
    n, d = ds.X.shape
    plan = plan_search(n, d, AUTO_BUDGET) if d > 2 else None
    sample = (plan.n_used, n) if plan is not None and plan.sampled else None
    return AutoTime(float(t_end), float(t_align), float(t_fit), r, t_first, sample)


def with_auto_time(config: Config, ds: Dataset | None = None) -> tuple[Config, AutoTime]:
    """`config` with integrator.t_end set to the auto range, and record.t_first too when the
    config leaves it unset (None)."""
    at = auto_time(config, ds)
    raw = config.model_dump()
    raw["integrator"]["t_end"] = at.t_end
    if raw["record"]["t_first"] is None:
        raw["record"]["t_first"] = at.t_first
    return Config.model_validate(raw), at
