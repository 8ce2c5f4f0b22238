"""Per-run summaries of a sweep point (one column each; NaN where they do not apply).

- ``final_loss``, ``min_loss``; ``max_angle``, ``mean_angle`` (degrees, between active neurons),
  ``stable_rank``, ``nuclear_norm``, ``theta_sq``, ``n_active`` at the last frame;
- ``t_align``: end of the detected "alignment" phase (`Service.analyse`; `phases.detect_phases`
  when the analysis has none); ``t_phase_I``, ``t_phase_II``: ends of Wang & Ma's Phases I
  and II (two-signal data; NaN when Phase II lasts to the end); ``t_phase_III``,
  ``t_phase_IV``: detected starts of Phases III and IV, ``t_phase_IV_pred`` the predicted one
  (`phases.predicted_reactivation`; NaN when not reached);
  ``t_half_loss``: first time the loss has made half of its total drop; ``t_cone``: Min et al.'s
  alignment time `phases.cone_time` (the rule the claims use: the first frame from which every
  neuron stays dead or in its cone S₊ (a_j > 0) / S₋ (a_j < 0); NaN when the run ends
  outside); ``phases``: every detected phase as "name [start, end]";
- ``gamma_norm`` ‖γ_[n]‖, ``mu`` (Min et al.'s separability min cos(y_i x_i, y_j x_j)),
  ``t_theory`` = ln(1/λ)/‖γ_[n]‖ (`theory.chistikov_alignment_time`), ``t_min_bound`` (Min et
  al.'s T, `theory.min_alignment_bound`);
- ``ols_loss`` (the least-squares plateau, `theory.ols_fit`; square loss only) and ``trapped``:
  final loss ≥ ``trap_threshold`` when one is given, else Boursier & Flammarion's spurious
  stationary point decided from the dynamics at the last frame
  (`papers.boursier.trap_state`): |final loss − OLS loss| ≤ ``trap_tol`` *and* no neuron can
  still grow there — so a slow escape is not a trap, whatever the horizon. Without a stored
  final W, the level test alone.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import phases as phmod
from .. import theory
from ..config import Config
from ..status import Status

SUMMARIES: dict[str, str] = {
    "final_loss": "loss at the last frame",
    "min_loss": "smallest loss over the frames",
    "t_align": "end of the detected alignment phase",
    "t_phase_I": "end of Wang & Ma's Phase I (two-signal data)",
    "t_phase_II": "end of Wang & Ma's Phase II, the accuracy plateau (NaN: no escape)",
    "t_phase_III": "start of Wang & Ma's Phase III, positive neurons leave x₋ (detected)",
    "t_phase_IV": "start of Wang & Ma's Phase IV, negative neurons return to x₊ (detected)",
    "t_phase_IV_pred": "Phase IV predicted: first h(x₊) + h(x₋) ≥ ln(p/cos δ) [derived]",
    "t_half_loss": "first time the loss has made half of its total drop",
    "t_cone": "Min et al.: first time from which every non-dead neuron stays in S₊ (a>0) or "
              "S₋ (a<0)",
    "phases": "detected phases, 'name [start, end]'",
    "max_angle": "max angle between active neurons at the end (degrees)",
    "mean_angle": "mean angle between active neurons at the end (degrees)",
    "stable_rank": "‖W‖_F²/‖W‖₂² at the end",
    "nuclear_norm": "nuclear norm of W at the end",
    "theta_sq": "‖θ‖² at the end",
    "n_active": "active neurons at the end",
    "gamma_norm": "‖γ_[n]‖ = ‖(1/n) Σ s_i y_i x_i‖",
    "mu": "Min et al.'s separability min cos(y_i x_i, y_j x_j)",
    "t_theory": "ln(1/λ)/‖γ_[n]‖ in our time (Chistikov et al.)",
    "t_min_bound": "Min et al.'s alignment bound T in our time",
    "ols_loss": "least-squares (OLS) loss of the data (square loss)",
    "trapped": "the run ended at the spurious OLS stationary point: at the OLS loss and no "
               "neuron can still grow (or above trap_threshold)",
}
#: the summaries that need the detected phases (the analysis, or phases.py's rules)
PHASE_SUMMARIES = frozenset({"phases", "t_align", "t_phase_I", "t_phase_II", "t_phase_III",
                             "t_phase_IV"})
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


def summarise(traj: Any, analysis: Any = None, *, record: Sequence[str] = tuple(SUMMARIES),
              trap_tol: float = 1e-3, trap_threshold: float | None = None) -> dict[str, Any]:
    """The summaries (see the module docstring) of one trajectory and its analysis."""
    want = set(record)
    out: dict[str, Any] = {}
    cfg = traj.config
    fm = traj.frame_metrics
    loss = np.asarray(traj.loss, float)
    final = _f(loss[-1]) if loss.size else float("nan")
    out["final_loss"] = final
    out["min_loss"] = _f(np.nanmin(loss)) if loss.size and np.isfinite(loss).any() else np.nan
    for k in ("max_angle", "mean_angle", "stable_rank", "nuclear_norm", "theta_sq", "n_active"):
        arr = np.asarray(fm.get(k, []), float)
        out[k] = _f(arr[-1]) if arr.size else float("nan")
    # phases: the analysis' detected ones, else the rules of phases.py (only when asked for)
    detected = [p for p in getattr(analysis, "phases", ()) if p.source == "detected"]
    if not detected and traj.n_frames >= 2 and needs_phases(record):
        try:
            detected, _ = phmod.detect_phases(traj)
            if cfg.data.kind == "two_signals":
                detected += phmod.wang_ma_phases(traj)[0]
        except Exception as e:  # never lose the row for a detection problem
            log.debug("phase detection failed: %s", e)
            detected = []
    out["phases"] = "; ".join(f"{p.name} [{p.start:.4g}, {p.end:.4g}]" for p in detected)
    out["t_align"] = next((p.end for p in detected if p.name == "alignment"), np.nan)
    out["t_phase_I"] = next((p.end for p in detected if p.name == "Phase I"), np.nan)
    t_last = float(traj.t[-1]) if traj.n_frames else np.nan
    out["t_phase_II"] = next((p.end for p in detected if p.name == "Phase II"
                              and p.end < t_last * (1 - 1e-9)), np.nan)
    out["t_phase_III"] = next((p.start for p in detected if p.name == "Phase III"), np.nan)
    out["t_phase_IV"] = next((p.start for p in detected if p.name == "Phase IV"), np.nan)
    out["t_phase_IV_pred"] = np.nan
    if cfg.data.kind == "two_signals" and "t_phase_IV_pred" in want:
        with contextlib.suppress(Exception):
            t_pred = phmod.predicted_reactivation(traj)[0]
            out["t_phase_IV_pred"] = np.nan if t_pred is None else t_pred
    out["t_half_loss"] = half_loss_time(traj) if "t_half_loss" in want else np.nan
    t_cone = phmod.cone_time(traj) if "t_cone" in want and traj.n_frames else None
    out["t_cone"] = np.nan if t_cone is None else t_cone
    g = traj.directions.get("γ_[n]")
    out["gamma_norm"] = _f(np.linalg.norm(g)) if g is not None else 0.0
    out["mu"] = separability(traj.X, traj.y) if "mu" in want else np.nan
    out["t_theory"] = np.nan
    if "t_theory" in want:
        with contextlib.suppress(Exception):
            out["t_theory"] = _f(theory.chistikov_alignment_time(cfg))
    out["t_min_bound"] = np.nan
    if cfg.is_classification and "t_min_bound" in want:
        with contextlib.suppress(Exception):
            out["t_min_bound"] = _f(theory.min_alignment_bound(cfg).T_ours)
    # the OLS fit feeds `trapped` too
    out["ols_loss"] = ols_loss(cfg) if want & {"ols_loss", "trapped"} else np.nan
    ols = out["ols_loss"]
    trapped: bool | None = None
    if trap_threshold is not None:
        trapped = bool(np.isfinite(final) and final >= trap_threshold)
    elif np.isfinite(ols) and ols > trap_tol and np.isfinite(final):
        trapped = bool(abs(final - ols) <= trap_tol)
        if trapped and "trapped" in want:
            from ..papers.boursier import trap_state  # the paper's criterion, one home

            with contextlib.suppress(Exception):
                state = trap_state(traj, trap_tol)
                if state.trapped is not None:
                    trapped = state.trapped
    out["trapped"] = trapped
    for k in [k for k in out if k not in want]:
        del out[k]
    return {k: (_f(v) if isinstance(v, np.floating | np.integer) else v) for k, v in out.items()}


def ols_loss(config: Config) -> float:
    """The least-squares loss of the config's data under its square loss (NaN otherwise), from
    `theory.ols_fit` (np.linalg.lstsq of y on the inputs, bias column included)."""
    if config.loss.kind != "square":
        return float("nan")
    try:
        return float(theory.ols_fit(config).loss)
    except Exception:
        return float("nan")


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


def separability(X: np.ndarray, y: np.ndarray) -> float:
    """Min et al.'s μ = min_{i,j} cos(y_i x_i, y_j x_j) (NaN for n < 2 or n > 4000)."""
    if len(y) < 2 or len(y) > 4000:
        return float("nan")
    Z = np.asarray(X, float) * np.asarray(y, float)[:, None]
    nz = np.linalg.norm(Z, axis=1)
    ok = nz > 0
    if ok.sum() < 2:
        return float("nan")
    U = Z[ok] / nz[ok, None]
    return float(np.min(U @ U.T))


def compute_point(config: Config, *, record: Sequence[str] = tuple(SUMMARIES),
                  trap_tol: float = 1e-3, trap_threshold: float | None = None,
                  cancel: Any = None, service: Any = None) -> dict[str, Any]:
    """Run one config through the service (default: `default_service()`) and summarise it
    (analysed only when a phase summary is recorded: `needs_phases`); never raises (a failure
    is a row with status "error")."""
    row: dict[str, Any] = {"cache_key": config.cache_key()}
    try:
        if service is None:
            from ..service import default_service

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
