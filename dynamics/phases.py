"""Phase detection: deterministic, documented rules that turn a Trajectory into
`annotations.Phase` objects (source "detected") with the evidence that fired.

Times are our gradient-flow times. Every threshold is a field of `PhaseRules`.

Rules
-----
* **alignment** [0, t_a]: directions move while norms stay small. Needs a small start
  (max_j ‖w_j(0)‖ < `small_init`). t_a is the earliest of
  (i) the first frame where ln(max‖w‖(t)/max‖w‖(0)) ≥ `norm_log_fraction` · ln(1/max‖w‖(0)) —
  with the default ½ this is max‖w‖ ≈ √(max‖w‖(0)), the scale of Min et al.'s Lemma 3
  (‖w_j‖² ≲ ε for t ≤ T); (ii) the first dense sample where Min et al.'s norm diagnostic
  Σ_j d‖w_j‖²/dt overtakes their direction diagnostic Σ_j ‖P⊥(−∇_{w_j}L)‖/‖w_j‖
  (`scalars["norm_rate"] ≥ scalars["dir_rate"]`); (iii) the saddle escape below.
* **saddle escape** (marker) and **fitting** [t_e, t_c]: t_e is the first frame with
  |L(t) − L(0)| > `escape_rel`·L(0); fitting lasts until convergence or the end.
* **convergence** [t_c, end]: from the first frame after which L ≤ `converged_rel`·L(0).
* **settled** [t_s, end]: a loss plateau (below) that lasts to the end of the run, after the
  escape, without convergence: the loss stopped falling above zero (a trap, or the linear
  estimator's level). Fitting then ends at t_s.
* **plateau**: a maximal run of frames (t > 0) where the log-log slope |Δln L/Δln t| ≤
  `plateau_slope`, lasting ≥ `plateau_decades` decades of t, above the convergence level. The
  first one, if it starts at the first frame, is the initial (saddle) plateau; the end of a
  later one is a "plateau escape" marker. **accuracy plateau**: a run of frames with constant
  training accuracy below 1 lasting ≥ `plateau_decades` decades.
* **activation changes**: from `trajectory.events`, per frame and per output sign, the number of
  (neuron, point) pairs switched off and on; markers at the last change of each sign group.
* **cone time** (Min et al.'s end of alignment, the one rule used by the claims and the sweep
  summaries): see `cone_time`.

A paper's own phases are detected in its module (`papers/wang_ma.py`: phases I–IV;
`papers/boursier.py`: the OLS plateau), from these rules and `loss_derivative`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .annotations import Phase, TimeMarker
from .trajectory import Trajectory

_TINY = 1e-300


PLAIN: dict[str, str] = {
    "alignment": "neurons turn, norms tiny",
    "fitting": "norms grow, loss falls",
    "convergence": "fitted: the loss creeps to zero",
    "settled": "loss settles above zero",
    "initial plateau": "loss flat at the start",
    "plateau": "loss flat: stuck at a saddle",
    "accuracy plateau": "accuracy stuck",
}
"""Each phase detected here in plain words (`Phase.plain`: the labels a student reads); the
paper's own name stays `Phase.name` (hovers). A paper's own phases are named in its module
(`Paper.phase_text`)."""


@dataclass(frozen=True)
class PhaseRules:
    """Thresholds of the detection rules (see the module docstring)."""

    small_init: float = 1e-2
    norm_log_fraction: float = 0.5
    use_rate_crossing: bool = True
    escape_rel: float = 0.01
    converged_rel: float = 1e-3
    plateau_slope: float = 0.02
    plateau_decades: float = 0.5


DEFAULT_RULES = PhaseRules()


# ----------------------------------------------------------------------------- basic times
def alignment_end(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES
                  ) -> tuple[float | None, str]:
    """End time of the alignment phase and the evidence, or (None, reason) when the start is
    not small. See rule "alignment" in the module docstring."""
    mx = traj.norms.max(axis=1)
    m0 = float(mx[0])
    if not (0 < m0 < rules.small_init):
        return None, f"no alignment phase: initial max ‖w_j‖ = {m0:.3g} is not small " \
                     f"(< {rules.small_init:g})"
    target = rules.norm_log_fraction * np.log(1.0 / m0)
    grow = np.log(np.maximum(mx, _TINY) / m0)
    hit = np.flatnonzero(grow >= target)
    t_norm = float(traj.t[hit[0]]) if hit.size else None
    t_rate = None
    sc = traj.scalars
    if rules.use_rate_crossing and sc.get("t") is not None and len(sc["t"]):
        over = np.flatnonzero(np.asarray(sc["norm_rate"]) >= np.asarray(sc["dir_rate"]))
        if over.size:
            t_rate = float(sc["t"][over[0]])
    t_esc = saddle_escape(traj, rules)
    cands = {"norm": t_norm, "rates": t_rate, "escape": t_esc}
    valid = {k: v for k, v in cands.items() if v is not None}
    if not valid:
        return float(traj.t[-1]), "alignment lasts the whole run (norms stayed small)"
    key = min(valid, key=lambda k: valid[k])
    t = valid[key]
    why = {"norm": f"max‖w‖ reached {np.exp(target) * m0:.3g} = max‖w(0)‖^"
                   f"{1 - rules.norm_log_fraction:g} (Min et al.'s Lemma 3 scale)",
           "rates": "norm-change rate Σd‖w_j‖²/dt overtook direction-change rate",
           "escape": "the loss left its initial plateau"}[key]
    return t, f"alignment ends at t = {t:.4g}: {why}"


def saddle_escape(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES) -> float | None:
    """First frame time with |L(t) − L(0)| > escape_rel · L(0), or None."""
    L0 = float(traj.loss[0])
    hit = np.flatnonzero(np.abs(traj.loss - L0) > rules.escape_rel * max(abs(L0), _TINY))
    return float(traj.t[hit[0]]) if hit.size else None


def convergence_start(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES) -> float | None:
    """First frame from which L ≤ converged_rel · L(0) for the rest of the run, or None."""
    below = traj.loss <= rules.converged_rel * max(float(traj.loss[0]), _TINY)
    if not below[-1]:
        return None
    k = len(below) - 1
    while k > 0 and below[k - 1]:
        k -= 1
    return float(traj.t[k])


def true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs [i, j] (inclusive) of True."""
    out, i, n = [], 0, len(mask)
    while i < n:
        if mask[i]:
            j = i
            while j + 1 < n and mask[j + 1]:
                j += 1
            out.append((i, j))
            i = j + 1
        else:
            i += 1
    return out


def loss_plateaus(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES
                  ) -> list[tuple[float, float, float]]:
    """(start, end, level) of loss plateaus: runs of frame intervals with |Δln L/Δln t| ≤
    plateau_slope spanning ≥ plateau_decades decades, with level above the convergence level."""
    t, L = traj.t[1:], np.maximum(traj.loss[1:], _TINY)
    if len(t) < 3:
        return []
    slope = np.diff(np.log(L)) / np.maximum(np.diff(np.log(t)), _TINY)
    flat = np.abs(slope) <= rules.plateau_slope
    conv = rules.converged_rel * max(float(traj.loss[0]), _TINY)
    out = []
    for i, j in true_runs(flat):
        t0, t1 = float(t[i]), float(t[j + 1])
        level = float(np.median(L[i:j + 2]))
        if np.log10(t1 / t0) >= rules.plateau_decades and level > conv:
            out.append((t0, t1, level))
    return out


def accuracy_plateaus(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES
                      ) -> list[tuple[float, float, float]]:
    """(start, end, accuracy) of runs of constant training accuracy < 1 lasting ≥
    plateau_decades decades (frames with t > 0; classification only)."""
    if not traj.classification:
        return []
    t, acc = traj.t[1:], traj.accuracy[1:]
    out = []
    same = np.r_[np.isclose(acc[1:], acc[:-1]), False]
    for i, j in true_runs(same):
        t0, t1 = float(t[i]), float(t[j + 1]) if j + 1 < len(t) else float(t[j])
        if acc[i] < 1.0 and t0 > 0 and np.log10(max(t1, t0) / t0) >= rules.plateau_decades:
            out.append((t0, t1, float(acc[i])))
    return out


# ----------------------------------------------------------------------------- activation events
def activation_changes(traj: Trajectory) -> dict[str, np.ndarray]:
    """Per frame: number of (neuron, point) activations switched off / on, split by the sign of
    the neuron's output weight at that frame. Keys pos_off, pos_on, neg_off, neg_on (F,)."""
    F = traj.n_frames
    out = {k: np.zeros(F, dtype=np.int64) for k in ("pos_off", "pos_on", "neg_off", "neg_on")}
    ev = traj.events
    if ev is None or len(ev.get("t", ())) == 0:
        return out
    fr = np.searchsorted(traj.t, ev["t"])
    fr = np.clip(fr, 0, F - 1)
    pos = traj.a[fr, ev["neuron"]] > 0
    on = ev["on"].astype(bool)
    for key, sel in (("pos_off", pos & ~on), ("pos_on", pos & on), ("neg_off", ~pos & ~on),
                     ("neg_on", ~pos & on)):
        np.add.at(out[key], fr[sel], 1)
    return out


def activation_markers(traj: Trajectory) -> list[TimeMarker]:
    """Markers at the last activation change of each output-sign group (patterns settled)."""
    ch = activation_changes(traj)
    out = []
    for sign, name in (("pos", "a > 0"), ("neg", "a < 0")):
        tot = ch[f"{sign}_off"] + ch[f"{sign}_on"]
        nz = np.flatnonzero(tot)
        if nz.size:
            k = int(nz[-1])
            out.append(TimeMarker(f"last activation change ({name})", float(traj.t[k]),
                                  "detected", f"{int(tot.sum())} switches in all; "
                                  f"{int(ch[sign + '_off'].sum())} off, "
                                  f"{int(ch[sign + '_on'].sum())} on"))
    return out


# ----------------------------------------------------------------------------- generic phases
def detect_phases(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES
                  ) -> tuple[list[Phase], list[TimeMarker]]:
    """Alignment, fitting, convergence or settling, loss and accuracy plateaus; markers for
    the saddle escape, plateau escapes and the time the activation patterns stop changing."""
    phases: list[Phase] = []
    markers: list[TimeMarker] = []
    t_end = float(traj.t[-1])
    t_a, why = alignment_end(traj, rules)
    if t_a is not None:
        phases.append(Phase("alignment", 0.0, t_a, "detected", why, PLAIN["alignment"]))
    t_e = saddle_escape(traj, rules)
    t_c = convergence_start(traj, rules)
    plateaus = loss_plateaus(traj, rules)
    # a plateau to the end of the run, after the escape and without convergence: the loss
    # has stopped falling above zero (it was "norms grow, loss falls" to the end before)
    final = plateaus[-1] if plateaus else None
    t_s = (final[0] if final is not None and t_e is not None and t_c is None
           and final[0] > t_e and final[1] >= t_end * (1 - 1e-9) else None)
    if t_e is not None:
        markers.append(TimeMarker("saddle escape", t_e, "detected",
                                  f"loss left L(0) by more than {100 * rules.escape_rel:g} %"))
        end = t_c if (t_c is not None and t_c > t_e) else (t_s if t_s is not None else t_end)
        phases.append(Phase("fitting", t_e, end, "detected",
                            f"loss falls from the escape at t = {t_e:.4g}", PLAIN["fitting"]))
    if t_c is not None:
        phases.append(Phase("convergence", t_c, t_end, "detected",
                            f"L ≤ {rules.converged_rel:g}·L(0) from t = {t_c:.4g} on",
                            PLAIN["convergence"]))
    for k, (t0, t1, lev) in enumerate(plateaus):
        first = k == 0 and t0 <= float(traj.t[1]) * (1 + 1e-12)
        if t_s is not None and t0 == t_s:
            phases.append(Phase("settled", t0, t1, "detected",
                                f"|d ln L/d ln t| ≤ {rules.plateau_slope:g} from t = {t0:.4g} "
                                f"to the end, at L ≈ {lev:.4g} (above "
                                f"{rules.converged_rel:g}·L(0))", PLAIN["settled"]))
            continue
        name = "initial plateau" if first else "plateau"
        phases.append(Phase(name, t0, t1, "detected",
                            f"|d ln L/d ln t| ≤ {rules.plateau_slope:g} over "
                            f"{np.log10(t1 / t0):.2g} decades at L ≈ {lev:.4g}", PLAIN[name]))
        if not first and t1 < t_end * (1 - 1e-9):
            markers.append(TimeMarker("plateau escape", t1, "detected",
                                      f"loss leaves the plateau at L ≈ {lev:.4g}"))
    for t0, t1, acc in accuracy_plateaus(traj, rules):
        phases.append(Phase("accuracy plateau", t0, t1, "detected",
                            f"training accuracy constant at {acc:.3g} over "
                            f"{np.log10(t1 / t0):.2g} decades", PLAIN["accuracy plateau"]))
    # one marker, not one per output sign, keeps the time axes readable on a projector
    settled = activation_markers(traj)
    if settled:
        last = max(settled, key=lambda m: m.time)
        markers.append(TimeMarker("patterns settle", last.time, "detected",
                                  "; ".join(f"{m.name} at t = {m.time:.4g}" for m in settled)))
    return phases, markers


# ----------------------------------------------------------------------------- Min et al.'s cones
def cone_frames(traj: Trajectory) -> np.ndarray:
    """(F,) bool: at frame f every neuron is dead (⟨w_j, x_i⟩ ≤ 0 for all i), or in S₊ with
    a_j > 0, or in S₋ with a_j < 0 — S₊ = active exactly on the points with y_i > 0, S₋ =
    active exactly on the others (`theory.min_cones`). The activation pattern is the recorded
    one (`traj.active`) when present, else ⟨w_j, x_i⟩ > 0 from the full W of that frame; a
    frame with neither is False (nothing to confirm)."""
    pos = np.asarray(traj.y) > 0
    ok = np.zeros(traj.n_frames, bool)
    for f in range(traj.n_frames):
        if traj.active is not None:
            act = np.asarray(traj.active[f], bool)
        else:
            W = traj.W_at(f)
            if W is None:
                continue
            act = (W @ traj.X.T) > 0
        a = np.asarray(traj.a[f])
        dead = ~act.any(axis=1)
        in_plus = np.all(act == pos, axis=1)
        in_minus = np.all(act == ~pos, axis=1)
        ok[f] = bool(np.all(dead | (in_plus & (a > 0)) | (in_minus & (a < 0))))
    return ok


def cone_time(traj: Trajectory) -> float | None:
    """Min et al.'s alignment time t₁: the first recorded time from which, to the end of the
    run, every neuron is in its cone (`cone_frames`: dead, S₊ with a_j > 0 or S₋ with
    a_j < 0); None when the last frame is not. "For good": a frame that passes and is
    followed by one that fails does not count (Theorem 1 states that the neurons stay)."""
    ok = cone_frames(traj)
    if not ok.size or not ok[-1]:
        return None
    k = len(ok) - 1
    while k > 0 and ok[k - 1]:
        k -= 1
    return float(traj.t[k])


# ----------------------------------------------------------------------------- losses
def loss_derivative(loss: str, h: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∂ℓ/∂ŷ at ŷ = h: square h − y; logistic −y/(1 + e^{yh}); exponential −y e^{−yh}."""
    h, y = np.asarray(h, float), np.asarray(y, float)
    if loss == "square":
        return h - y
    if loss == "logistic":
        return -y / (1.0 + np.exp(np.clip(y * h, -700, 700)))
    if loss == "exponential":
        return -y * np.exp(np.clip(-y * h, -700, 700))
    raise ValueError(f"unknown loss {loss!r}")
