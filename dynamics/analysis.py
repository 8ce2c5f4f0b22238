"""analyse(trajectory) -> annotations.Analysis: detected phases, the theory's predictions for
this config (only what theory derives for it), named directions and activation-cone normals.

Pure (reads the trajectory only) and bounded before it runs, whatever the size: the
extremal-vector search is an O(n log n) sweep in d = 2 and keeps to `extremal_budget`
multiply-adds for d > 2 (`theory.plan_search`; on a sample of the points when n·d is large, said
in a note); the cone normals come from at most `NORMALS_SCAN` data points; each paper bounds its
own part (e.g. Boursier & Flammarion's least squares, `papers.boursier.OLS_MAX_WORK`; Lyu et
al.'s max-margin solve, `papers.solvers`, planned from a multiply-add budget and certified by
a bracket, and their O(n log n) symmetry test; Boursier, Pillaud-Vivien & Flammarion's
overlay needs no solve), and a solve that stops at its bound says so in a note.

Generic parts here: the detected phases and markers of `phases.detect_phases`, the extremal
vectors of G and the cone normals. Each paper that applies to the run (`Paper.applies_to`)
adds its own overlay (`Paper.overlay`: its `annotate` with its own tolerances, in registry
order), e.g. Min et al.'s T bound and Chistikov et al.'s ln(1/λ)/‖γ_[n]‖ as predicted markers
(dashed in the figures), Boursier & Flammarion's OLS plateau, Wang & Ma's phases I–IV.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from . import theory
from .annotations import Analysis, Direction
from .papers import PAPERS, Tolerances
from .phases import DEFAULT_RULES, PhaseRules, detect_phases
from .trajectory import Trajectory

_KIND = {"max": "extremal_max", "min": "extremal_min", "saddle": "extremal_saddle"}
NORMALS_SCAN = 4000  # data points scanned for distinct cone normals
NORMALS_MAX = 500  # cone normals kept
EXTREMAL_SHOWN = 24  # extremal vectors of each kind drawn (the largest |G|); a note says more


def analyse(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES, *,
            extremal_budget: float = 1e8,
            tolerances: Mapping[str, Tolerances] | None = None) -> Analysis:
    """Phases, predicted markers, directions and cone normals for one trajectory.
    `tolerances` overrides papers' own thresholds, by paper key (e.g. {"boursier":
    {"ols": 1e-4}})."""
    cfg = traj.config
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
    shown = [x for kind in ("max", "min", "saddle")
             for x in [e for e in ex if e.kind == kind][:EXTREMAL_SHOWN]]
    if len(shown) < len(ex):
        notes.append(f"{len(ex)} extremal vectors; the {EXTREMAL_SHOWN} of each kind with the "
                     "largest |G| are drawn")
    for k, x in enumerate(shown):
        where = "on the boundary ⟨w, x_i⟩ = 0 for i in " + str(list(x.boundary)) \
            if x.boundary else "inside an activation cone"
        directions.append(Direction(f"extremal {x.kind} {k + 1}", x.vector, _KIND[x.kind],
                                    f"G = {x.value:.4g}, {where}"))
    if d > 2:
        plan = theory.plan_search(traj.X.shape[0], d, extremal_budget)
        notes.append("extremal vectors for d > 2 come from a capped multi-start search; "
                     "some may be missing" + (f" ({plan.note()})" if plan.sampled else ""))

    # each applicable paper's directions, predicted markers, phases and notes
    paper_notes: list[tuple[str, str]] = []
    for paper in PAPERS.values():
        add = paper.overlay(traj, rules, (tolerances or {}).get(paper.key))
        phases += [p if p.by else replace(p, by=paper.short) for p in add.phases]
        markers += add.markers
        directions += add.directions
        notes += add.notes
        paper_notes += [(paper.key, n) for n in add.notes]

    X = traj.X[:NORMALS_SCAN]
    Xn = X[np.linalg.norm(X, axis=1) > 0]
    normals = np.unique(np.round(Xn, 12), axis=0)[:NORMALS_MAX] if len(Xn) else None
    return Analysis(phases=tuple(phases), markers=tuple(markers),
                    directions=tuple(directions), cone_normals=normals, notes=tuple(notes),
                    paper_notes=tuple(paper_notes))
