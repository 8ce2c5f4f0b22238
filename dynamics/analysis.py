"""analyse(trajectory) -> annotations.Analysis: detected phases, the theory's predictions for
this config (only what theory derives for it), named directions and activation-cone normals.

Pure (reads the trajectory only) and fast: the extremal-vector search is exact in d = 2 and
capped by a work budget for d > 2 (see `theory.extremal_vectors`).

Predicted markers (dashed in the figures), in our time units:
* Min et al.'s T = log(1/(√h ε))/(4 n X_max) — classification (±1 labels) with a trained output
  layer; ε and the time conversion as in `theory.min_alignment_bound`.
* Chistikov et al.'s ln(1/λ)/‖γ_[n]‖ — teacher data, square loss.
Predicted levels: the least-squares (OLS) loss of Boursier & Flammarion's trap for three-point
data (and any regression data whose OLS fit one ReLU unit can represent); a detected phase
"OLS plateau" marks where the loss sits within `ols_tol` of it.
"""

from __future__ import annotations

import numpy as np

from . import theory
from .annotations import Analysis, Direction, Phase, TimeMarker
from .phases import DEFAULT_RULES, PhaseRules, _runs, detect_phases, wang_ma_phases
from .trajectory import Trajectory

_KIND = {"max": "extremal_max", "min": "extremal_min", "saddle": "extremal_saddle"}


def _dataset_view(traj: Trajectory) -> theory.Dataset:
    return theory.Dataset(X=traj.X, y=traj.y, sw=traj.sw, classification=traj.classification,
                          directions=dict(traj.directions), meta=dict(traj.meta))


def ols_plateau(traj: Trajectory, level: float, tol: float = 1e-3) -> tuple[float, float] | None:
    """The longest run of frames with |L − level| ≤ tol (absolute), as (start, end)."""
    close = np.abs(traj.loss - level) <= tol
    runs = _runs(close)
    if not runs:
        return None
    i, j = max(runs, key=lambda r: traj.t[r[1]] - traj.t[r[0]])
    return float(traj.t[i]), float(traj.t[j])


def analyse(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES, *,
            extremal_budget: float = 5e7, ols_tol: float = 1e-3) -> Analysis:
    """Phases, predicted markers, directions and cone normals for one trajectory."""
    cfg = traj.config
    ds = _dataset_view(traj)
    d = traj.X.shape[1]
    phases, markers = detect_phases(traj, rules)
    notes: list[str] = []
    directions: list[Direction] = []

    # extremal vectors of G for this data, loss, reduction and γ
    b = theory.field_weights(traj.y, traj.sw, cfg.loss.kind, cfg.loss.reduction)
    try:
        ex = theory.extremal_vectors(traj.X, b, float(cfg.model.gamma), budget=extremal_budget)
    except (ValueError, np.linalg.LinAlgError) as e:  # pragma: no cover - defensive
        ex = []
        notes.append(f"extremal vectors not computed: {e}")
    for k, e in enumerate(ex):
        where = "on the boundary ⟨w, x_i⟩ = 0 for i in " + str(list(e.boundary)) \
            if e.boundary else "inside an activation cone"
        directions.append(Direction(f"extremal {e.kind} {k + 1}", e.vector, _KIND[e.kind],
                                    f"G = {e.value:.4g}, {where}"))
    if d > 2:
        notes.append("extremal vectors for d > 2 come from a capped multi-start search; "
                     "some may be missing")

    # named data directions
    if traj.classification:
        xp, xm = theory.min_signals(traj.X, traj.y)
        directions.append(Direction("x₊", xp, "signal", "Min et al.: Σ_{y_i=+1} x_i"))
        directions.append(Direction("x₋", xm, "signal", "Min et al.: Σ_{y_i=−1} x_i"))
    if "v*" in traj.directions:
        directions.append(Direction("v*", np.asarray(traj.directions["v*"]), "teacher",
                                    "teacher neuron (Chistikov et al.)"))
    if cfg.data.kind == "teacher" or cfg.loss.kind == "square":
        g = theory.gamma_n(traj.X, traj.y, traj.sw)
        if np.linalg.norm(g) > 0:
            directions.append(Direction("γ_[n]", g, "target",
                                        "Chistikov et al.: (1/n) Σ s_i y_i x_i, the alignment "
                                        "target of positive neurons"))
    if cfg.data.kind == "two_signals":
        geo = theory.wang_ma_geometry(ds)
        for dd in geo.directions:
            directions.append(Direction(dd.name, dd.vector, "target", dd.note))

    # predicted markers
    trained = cfg.model.train_output
    if traj.classification and trained:
        W0 = traj.W_at(0)
        mb = theory.min_alignment_bound(cfg, ds, W0)
        if np.isfinite(mb.T_ours) and mb.T_ours > 0:
            markers.append(TimeMarker(
                "Min et al. T bound", mb.T_ours, "predicted",
                f"T = log(1/(√h ε))/(4 n X_max) = {mb.T_theirs:.4g} (their time, sum loss), "
                f"ε = {mb.epsilon:.3g}; Lemma 1 condition "
                f"{'holds' if mb.lemma_condition else 'fails'}; stated for balanced starts"))
    if cfg.data.kind == "teacher" and cfg.loss.kind == "square":
        ta = theory.chistikov_alignment_time(cfg, ds)
        if np.isfinite(ta) and ta > 0:
            markers.append(TimeMarker(
                "ln(1/λ)/‖γ_[n]‖", ta, "predicted",
                f"Chistikov et al.'s alignment time scale, λ = "
                f"{theory.chistikov_lambda(cfg, d):.3g}"))
    if not traj.classification and cfg.loss.kind == "square":
        fit = theory.ols_fit(cfg, ds)
        notes.append(f"least-squares fit: β = {np.round(fit.beta, 4).tolist()}, loss "
                     f"{fit.loss:.6g} ({cfg.loss.reduction} of ½(ŷ−y)²); "
                     + ("one ReLU unit can represent it (all fitted values > 0)"
                        if fit.all_positive else "not representable by one ReLU unit"))
        if fit.all_positive:
            directions.append(Direction("OLS direction", fit.beta, "target",
                                        f"least-squares fit; plateau loss {fit.loss:.6g}"))
            # an interpolating least-squares fit (e.g. n ≤ d teacher data) is the global
            # minimum, not a trap: label a plateau only at a nonzero OLS loss
            trap_level = fit.loss > 1e-9 * max(float(traj.loss[0]), 1e-300)
            pl = ols_plateau(traj, fit.loss, ols_tol) if trap_level else None
            if pl is not None and pl[1] > pl[0]:
                phases.append(Phase("OLS plateau", pl[0], pl[1], "detected",
                                    f"|L − L_OLS| ≤ {ols_tol:g} with L_OLS = {fit.loss:.6g} "
                                    "(Boursier & Flammarion's trap level, computed)"))

    # Wang & Ma
    if cfg.data.kind == "two_signals" and not trained:
        wp, _counts, summary = wang_ma_phases(traj, rules)
        phases.extend(wp)
        notes.append("Wang & Ma phases: " + summary)

    Xn = traj.X[np.linalg.norm(traj.X, axis=1) > 0]
    normals = np.unique(np.round(Xn, 12), axis=0)[:500] if len(Xn) else None
    return Analysis(phases=tuple(phases), markers=tuple(markers),
                    directions=tuple(directions), cone_normals=normals, notes=tuple(notes))
