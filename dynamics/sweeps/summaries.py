"""Per-run summaries of a sweep point (one column each; NaN where they do not apply).

Generic ones here: ``final_loss``, ``min_loss``; ``max_angle``, ``mean_angle`` (degrees,
between active neurons), ``stable_rank``, ``nuclear_norm``, ``theta_sq``, ``n_active`` at the
last frame; ``t_align`` (end of the detected "alignment" phase), ``t_half_loss`` (first time
the loss has made half of its total drop) and ``phases`` (every detected phase as
"name [start, end]"). Each paper adds its own (`Paper.summaries`, e.g. Min et al.'s
``t_cone``, Wang & Ma's ``t_phase_III``, Boursier & Flammarion's ``trapped``): `SUMMARIES`
is the union, in registry order. The detected phases come from the analysis when one is
given, else from `phases.detect_phases` and each applicable paper's overlay.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import phases as phmod
from ..annotations import Phase
from ..config import Config
from ..papers import PAPERS, Summary
from ..service import default_service
from ..status import Status

GENERIC: dict[str, str] = {
    "final_loss": "loss at the last frame",
    "min_loss": "smallest loss over the frames",
    "t_align": "end of the detected alignment phase",
    "t_half_loss": "first time the loss has made half of its total drop",
    "phases": "detected phases, 'name [start, end]'",
    "max_angle": "max angle between active neurons at the end (degrees)",
    "mean_angle": "mean angle between active neurons at the end (degrees)",
    "stable_rank": "‖W‖_F²/‖W‖₂² at the end",
    "nuclear_norm": "nuclear norm of W at the end",
    "theta_sq": "‖θ‖² at the end",
    "n_active": "active neurons at the end",
}
PAPER_SUMMARIES: dict[str, Summary] = {
    s.name: s for paper in PAPERS.values() for s in paper.summaries}
"""name → the paper-owned summary (registry order)."""
SUMMARIES: dict[str, str] = {**GENERIC,
                             **{k: s.description for k, s in PAPER_SUMMARIES.items()}}
#: the summaries that need the detected phases (the analysis, or phases.py's rules)
PHASE_SUMMARIES = frozenset({"phases", "t_align",
                             *(k for k, s in PAPER_SUMMARIES.items() if s.needs_phases)})
log = logging.getLogger(__name__)


def needs_phases(record: Sequence[str]) -> bool:
    """Whether any of `record` depends on the detected phases (else a point skips the
    analysis: extremal vectors and phase detection, a third of a small run's time)."""
    return not PHASE_SUMMARIES.isdisjoint(record)


def _f(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return v


def detected_phases(traj: Any, analysis: Any = None) -> list[Phase]:
    """The analysis' detected phases, else the generic rules' and every applicable paper's
    (`Paper.overlay`); [] when the detection fails (the row is kept)."""
    detected = [p for p in getattr(analysis, "phases", ()) if p.source == "detected"]
    if detected or traj.n_frames < 2:
        return detected
    try:
        found, _ = phmod.detect_phases(traj)
        for paper in PAPERS.values():
            found += [p for p in paper.overlay(traj, phmod.DEFAULT_RULES).phases
                      if p.source == "detected"]
    except Exception as e:  # never lose the row for a detection problem
        log.debug("phase detection failed: %s", e)
        return []
    return found


def summarise(traj: Any, analysis: Any = None, *, record: Sequence[str] = tuple(SUMMARIES),
              trap_tol: float = 1e-3, trap_threshold: float | None = None) -> dict[str, Any]:
    """The summaries (see the module docstring) of one trajectory and its analysis."""
    want = set(record)
    out: dict[str, Any] = {}
    fm = traj.frame_metrics
    loss = np.asarray(traj.loss, float)
    out["final_loss"] = _f(loss[-1]) if loss.size else float("nan")
    out["min_loss"] = _f(np.nanmin(loss)) if loss.size and np.isfinite(loss).any() else np.nan
    for k in ("max_angle", "mean_angle", "stable_rank", "nuclear_norm", "theta_sq", "n_active"):
        arr = np.asarray(fm.get(k, []), float)
        out[k] = _f(arr[-1]) if arr.size else float("nan")
    detected = detected_phases(traj, analysis) if needs_phases(record) else []
    out["phases"] = "; ".join(f"{p.name} [{p.start:.4g}, {p.end:.4g}]" for p in detected)
    out["t_align"] = next((p.end for p in detected if p.name == "alignment"), np.nan)
    out["t_half_loss"] = half_loss_time(traj) if "t_half_loss" in want else np.nan
    options: Mapping[str, Any] = {"trap_tol": trap_tol, "trap_threshold": trap_threshold}
    for name, summ in PAPER_SUMMARIES.items():
        if name not in want:
            continue
        try:
            v = summ.compute(traj, detected, options)
        except Exception as e:  # a summary that cannot be computed is NaN, not a lost row
            log.debug("summary %s failed: %s", name, e)
            v = np.nan
        out[name] = v
    for k in [k for k in out if k not in want]:
        del out[k]
    return {k: (_f(v) if isinstance(v, np.floating | np.integer) else v) for k, v in out.items()}


def half_loss_time(traj: Any) -> float:
    """First time (dense scalars when recorded, else frames) at which the loss has made half of
    its total drop L(0) − L(end); NaN when it does not fall."""
    s = traj.scalars
    t = np.asarray(s.get("t", []), float)
    L = np.asarray(s.get("loss", []), float)
    if t.size == 0 or not np.isfinite(traj.loss[0]):
        t, L = np.asarray(traj.t, float), np.asarray(traj.loss, float)
    L0, L1 = float(traj.loss[0]), float(traj.loss[-1])
    if not (np.isfinite(L0) and np.isfinite(L1)) or L0 - L1 <= 1e-12 * max(abs(L0), 1e-300):
        return float("nan")
    hit = np.flatnonzero(L <= L0 - 0.5 * (L0 - L1))
    return float(t[hit[0]]) if hit.size else float("nan")


def compute_point(config: Config, *, record: Sequence[str] = tuple(SUMMARIES),
                  trap_tol: float = 1e-3, trap_threshold: float | None = None,
                  cancel: Any = None, service: Any = None) -> dict[str, Any]:
    """Run one config through the service (default: `default_service()`) and summarise it
    (analysed only when a phase summary is recorded: `needs_phases`); never raises (a failure
    is a row with status "error")."""
    row: dict[str, Any] = {"cache_key": config.cache_key()}
    try:
        if service is None:
            service = default_service()
        traj = service.run(config, cancel=cancel)
        analysis = None
        if needs_phases(record):  # the other summaries never read the analysis
            try:
                analysis = service.analyse(traj)
            except Exception as e:  # the summaries fall back to phases.py
                log.debug("analysis failed: %s", e)
        row.update(status=str(traj.status), message=traj.message,
                   wall_time_s=float(traj.wall_time))
        row.update(summarise(traj, analysis, record=record, trap_tol=trap_tol,
                             trap_threshold=trap_threshold))
    except Exception as e:
        row.update(status=Status.ERROR.value, message=f"{type(e).__name__}: {e}")
    return row
