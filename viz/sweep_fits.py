"""Sweep results reduced for plotting: the median, min and max over seeds of a quantity at
each axis value, and least-squares lines (power laws on log axes) through them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dynamics.status import Status

OK_STATUSES = tuple(s.value for s in Status if s.has_summaries)  # completed, max_steps


@dataclass(frozen=True)
class Fit:
    """y = slope·x + intercept (on log10 axes for a power law)."""

    slope: float
    intercept: float
    n: int


def fit_line(x: Sequence[float], y: Sequence[float], log_x: bool = False,
             log_y: bool = False) -> Fit | None:
    """Least-squares line through the finite points (log10 of positive values when asked)."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(xa) & np.isfinite(ya)
    if log_x:
        ok &= xa > 0
    if log_y:
        ok &= ya > 0
    xa, ya = xa[ok], ya[ok]
    if log_x:
        xa = np.log10(xa)
    if log_y:
        ya = np.log10(ya)
    if xa.size < 2 or np.ptp(xa) == 0:
        return None
    slope, icpt = np.polyfit(xa, ya, 1)
    return Fit(float(slope), float(icpt), int(xa.size))


def evaluate(fit: Fit, x: np.ndarray, log_x: bool, log_y: bool) -> np.ndarray:
    xv = np.log10(x) if log_x else x
    yv = fit.slope * xv + fit.intercept
    return 10**yv if log_y else yv


def aggregate(df: pd.DataFrame, x: str, y: str, by: str | None = None,
              statuses: Sequence[str] = OK_STATUSES) -> pd.DataFrame:
    """Median, min, max and count of `y` over seeds for each `x` (and `by`), finished runs."""
    d = df[df["status"].isin(statuses)] if "status" in df else df
    keys = [x] if by is None else [by, x]
    vals = pd.to_numeric(d[y], errors="coerce")
    g = d.assign(_v=vals).groupby(keys, sort=True)["_v"]
    out = g.agg(["median", "min", "max", "count"]).reset_index()
    return out


__all__ = ["OK_STATUSES", "Fit", "aggregate", "evaluate", "fit_line"]
