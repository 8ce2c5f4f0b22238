"""Time axes shared by every animated figure: how run times map onto a (log or linear) axis,
which recorded frames become animation frames, and how times and ranges are written.

A `TimeAxisSpec` divides times by `div` (1, or ln(1/ε) for t / ln(1/ε)); on a log axis t = 0
cannot be drawn and sits at `t0`, just left of the first positive recorded time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynamics.trajectory import Trajectory

from .label_layout import text_px
from .options import TimeAxis, TimeScale

LOG_T0_FACTOR = 1.6  # t = 0 is drawn at (first positive time) / 1.6 on a log axis
LOG_T1_FACTOR = 1.05  # a log axis ends 5 % past the last time


@dataclass(frozen=True)
class TimeAxisSpec:
    """How times map onto the shared axis: divide by `div`; on a log axis t = 0 sits at `t0`."""

    div: float
    log: bool
    t0: float  # display value of t = 0 (log axis) or 0
    t1: float  # right end
    title: str

    def show(self, t: np.ndarray | float) -> np.ndarray:
        v = np.asarray(t, dtype=float) / self.div
        return np.maximum(v, self.t0) if self.log else v

    @property
    def range(self) -> list[float]:
        if self.log:
            return [math.log10(self.t0), math.log10(self.t1)]
        return [0.0, self.t1]

    @property
    def lo(self) -> float:
        """Display value of the axis' left end (t0 on a log axis, else 0)."""
        return self.t0 if self.log else 0.0

    def axis_value(self, t: float) -> float:
        """Position for annotations (which take log10 values on log axes)."""
        v = float(self.show(t))
        return math.log10(v) if self.log else v

    def keep(self, t: np.ndarray) -> np.ndarray:
        """Mask of the times a curve draws: t > 0 on a log axis, all on a linear one."""
        t = np.asarray(t, dtype=float)
        return t > 0 if self.log else np.ones(t.shape, bool)


def time_divisor(traj: Trajectory, time_scale: TimeScale) -> tuple[float, str]:
    """(divisor, axis title): 1 and "time t", or ln(1/ε) and "t / ln(1/ε)" (ε = init scale)."""
    if time_scale == "t_over_log_inv_eps":
        eps = float(traj.config.init.scale)
        if 0 < eps < 1:
            return math.log(1.0 / eps), "t / ln(1/ε)"
        return 1.0, "time t (ε ≥ 1: not rescaled)"
    return 1.0, "time t"


def time_axis_spec(traj: Trajectory, time_axis: TimeAxis, time_scale: TimeScale) -> TimeAxisSpec:
    """The time axis of one run."""
    div, title = time_divisor(traj, time_scale)
    t = np.asarray(traj.t, dtype=float) / div
    t_end = float(t[-1]) if t.size and t[-1] > 0 else 1.0
    if time_axis == "log":
        pos = t[t > 0]
        first = float(pos[0]) if pos.size else t_end * 1e-4
        return TimeAxisSpec(div, True, first / LOG_T0_FACTOR, t_end * LOG_T1_FACTOR, title)
    return TimeAxisSpec(div, False, 0.0, t_end, title)


def shared_time_spec(trajs: Sequence[Trajectory], time_axis: TimeAxis) -> TimeAxisSpec:
    """One time axis covering every run (log: from below the first positive frame time)."""
    ts = np.concatenate([np.asarray(tr.t, float) for tr in trajs])
    t_end = float(ts.max()) if ts.size and ts.max() > 0 else 1.0
    if time_axis == "log":
        pos = ts[ts > 0]
        first = float(pos.min()) if pos.size else t_end * 1e-4
        return TimeAxisSpec(1.0, True, first / LOG_T0_FACTOR, t_end * LOG_T1_FACTOR, "time t")
    return TimeAxisSpec(1.0, False, 0.0, t_end, "time t")


# ----------------------------------------------------------------------------- frames
def frame_indices(n_frames: int, max_frames: int = 200) -> np.ndarray:
    """At most `max_frames` frame indices, evenly spread, always including the first and last."""
    if n_frames <= 0:
        return np.zeros(0, dtype=int)
    k = max(1, min(int(max_frames), n_frames))
    if k == 1:
        return np.array([n_frames - 1])
    return np.unique(np.round(np.linspace(0, n_frames - 1, k)).astype(int))


def common_grid(t_a: np.ndarray, t_b: np.ndarray, max_frames: int = 200) -> np.ndarray:
    """Sorted union of two runs' frame times, thinned to ≤ max_frames (first and last kept)."""
    t = np.unique(np.r_[np.asarray(t_a, float), np.asarray(t_b, float)])
    t = t[np.isfinite(t)]
    if t.size <= max_frames:
        return t
    idx = np.unique(np.round(np.linspace(0, t.size - 1, max(2, max_frames))).astype(int))
    return t[idx]


def frames_on_grid(t_run: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """For each grid time, the index of the run's last frame with t ≤ grid time (0 before
    its first frame)."""
    t_run = np.asarray(t_run, float)
    idx = np.searchsorted(t_run, np.asarray(grid, float) * (1 + 1e-12), side="right") - 1
    return np.clip(idx, 0, max(t_run.size - 1, 0)).astype(int)


# ----------------------------------------------------------------------------- writing
def fmt_time(t: float) -> str:
    """Compact time label: 0, 0.0123, 4.56, 1.2e+03."""
    if t == 0:
        return "0"
    return f"{t:.3g}"


def log_range(values: np.ndarray, floor_decades: float = 12.0,
              include: float | None = None) -> tuple[float, float]:
    """(lo, hi) of a log axis showing the positive finite `values`, at most `floor_decades`
    decades below the largest but always down to `include` (when positive: e.g. the smallest
    initial norm, so that a tiny initialisation stays in view), with a margin of ×1.6 each
    side."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return 1e-3, 1.0
    hi = float(v.max())
    lo = max(float(v.min()), hi * 10.0 ** (-floor_decades))
    if include is not None and math.isfinite(include) and 0 < include < lo:
        lo = include
    if hi <= lo:
        lo, hi = hi / 10, hi * 10
    return lo / 1.6, hi * 1.6


MAX_LOG_LABELS = 5  # tick labels on a log axis, at most (more touch each other)


def y_axis_px(font: float, title: bool = True) -> float:
    """Pixels a time panel's y axis takes left of it: its widest tick label (10⁻¹⁰) and,
    with `title`, its title turned on its side, with their gaps."""
    return text_px("10⁻¹⁰", font)[0] + 4 + (font * 1.3 + 10 if title else 0.0)


def log_dtick(lo: float, hi: float, max_labels: int = MAX_LOG_LABELS) -> int:
    """Tick step in whole decades for a log axis over [lo, hi] with at most `max_labels`
    labels: 1 up to four decades, then the smallest step that keeps the count."""
    span = math.log10(hi) - math.log10(lo)
    return max(1, math.ceil(span / max(1, max_labels - 1) - 1e-9))


__all__ = [
    "MAX_LOG_LABELS",
    "TimeAxisSpec",
    "common_grid",
    "fmt_time",
    "frame_indices",
    "frames_on_grid",
    "log_dtick",
    "log_range",
    "shared_time_spec",
    "time_axis_spec",
    "time_divisor",
    "y_axis_px",
]
