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
* **Wang & Ma phases I–IV** (two-signal data, frozen output layer): see `wang_ma_phases`;
  which neurons are active on x₊ / x₋ comes from the side of each kink and the Filippov
  sliding condition (`kink_states`), the predicted start of IV from h(x₊) + h(x₋)
  (`predicted_reactivation`).
* **cone time** (Min et al.'s end of alignment, the one rule used by the claims and the sweep
  summaries): see `cone_time`.
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
    "Phase I": "I: neurons bunch up, loss starts to fall",
    "Phase II": "II: accuracy stuck on a plateau",
    "Phase III": "III: positive neurons let go of x₋",
    "Phase IV": "IV: negative neurons come back to x₊",
}
"""Each detected phase in plain words (`Phase.plain`: the labels a student reads); the
paper's own name stays `Phase.name` (hovers)."""


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
    condensed_deg: float = 10.0  # Wang & Ma: spread of active directions per sign group
    count_drop: int = 1  # Wang & Ma: change of a neuron count that starts phase III / IV
    kink_cos: float = 5e-3  # Wang & Ma: |cos∠(w_j, s)| ≤ this is "on the kink" of signal s


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
    last = plateaus[-1] if plateaus else None
    t_s = (last[0] if last is not None and t_e is not None and t_c is None
           and last[0] > t_e and last[1] >= t_end * (1 - 1e-9) else None)
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


# ----------------------------------------------------------------------------- Wang & Ma
# With the output layer frozen, a neuron whose direction field points across the kink
# ⟨w_j, s⟩ = 0 of a signal s from both sides *slides* along it (a Filippov sliding mode): under
# the flow it sits on the kink, under GD (or an adaptive integrator's finite steps) it chatters
# across it with an amplitude that shrinks with the step. Whether it is "active on s" is decided
# by that dynamics, not by a fixed cosine margin: see `kink_states`.
def _signal_vectors(traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    d = traj.directions
    if "x₊ signal" in d and "x₋ signal" in d:
        return np.asarray(d["x₊ signal"], float), np.asarray(d["x₋ signal"], float)
    return traj.X[traj.y > 0].mean(axis=0), traj.X[traj.y < 0].mean(axis=0)


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


@dataclass(frozen=True)
class KinkStates:
    """Per frame f and neuron j, for the two signals s ∈ {x₊, x₋} (`kink_states`):
    `active_*` (F, m) — the neuron is active on s; `sliding_*` (F, m) — it sits on the kink
    ⟨w_j, s⟩ = 0 and the flow holds it there (counted inactive); `filippov` (F,) — the frame's
    full W gave the one-sided velocities (False: the cosine-only fallback was used)."""

    active_plus: np.ndarray
    active_minus: np.ndarray
    sliding_plus: np.ndarray
    sliding_minus: np.ndarray
    filippov: np.ndarray


def _step_scale(traj: Trajectory) -> tuple[float, float]:
    """(η, b): the chatter across a kink of a run is ≲ η·ρ_j + b in cos, ρ_j the neuron's rate
    of change of cos near the kink. GD: one step of its fixed η (b = 0). `gf`: its kink-floor
    steps h = KINK_REL·rtol^(1/3)/max_k(‖∇θ_k L‖/‖θ_k‖) (dynamics.kernels.gf) set the scale
    KINK_REL·rtol^(1/3); the chatter measured on the two-signal grid (δ ≤ 30°, p ≤ 4, init std
    1e-4…1e-2, rtol 1e-6, t ≥ 1) reaches 2.9 times it, so b = 2.5 × that scale (the band is
    twice b: 5e-3 at rtol 1e-6)."""
    it = traj.config.integrator
    if it.method == "gd":
        return float(it.lr), 0.0
    from .kernels.gf import KINK_REL

    return 0.0, float(2.5 * KINK_REL * it.rtol ** (1.0 / 3.0))


def _side_of_kink(W: np.ndarray, a: np.ndarray, s: np.ndarray, cls: np.ndarray, X: np.ndarray,
                  r: np.ndarray, gamma: float, c: float, band: float,
                  step: tuple[float, float] = (0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """(active, sliding) of each row of W with respect to the kink of signal s, whose class
    (the points lying on s) is `cls`; W (k, m, d), a (k, m) and r (k, n) for k frames at once.
    r_i = −R s_i ∂ℓ(h_i, y_i) are the residual weights, so dw_j/dt = c a_j Σ_i r_i
    σ'(⟨w_j, x_i⟩) x_i. The one-sided velocities of ⟨w_j, s⟩ with the class of s taken active
    (σ' = 1) or inactive (σ' = γ), the other points as they are: v_act, v_in. On the kink —
    |cos∠(w_j, s)| ≤ max(band, 2(η ρ_j + b)) with (η, b) = `step` and ρ_j = max(|v_act|,
    |v_in|)/(‖w_j‖‖s‖), twice one step's chatter — the neuron slides iff v_act ≤ 0 (the active
    side pushes it back); otherwise it is active when it is on the positive side or both sides
    carry it there (v_in > 0)."""
    G = X @ s
    Zo = np.einsum("kjd,nd->kjn", W, X[~cls])
    other = np.einsum("kjn,kn->kj", np.where(Zo > 0, 1.0, gamma), r[:, ~cls] * G[~cls])
    own = (r[:, cls] @ G[cls])[:, None]
    v_act = c * a * (own + other)
    v_in = c * a * (gamma * own + other)
    ws = W @ s
    scale = np.maximum(np.linalg.norm(W, axis=2) * np.linalg.norm(s), _TINY)
    cos = ws / scale
    rho = np.maximum(np.abs(v_act), np.abs(v_in)) / scale
    kink = np.abs(cos) <= np.maximum(band, 2.0 * (step[0] * rho + step[1]))
    sliding = kink & (v_act <= 0)
    active = (cos > band) | (kink & (v_act > 0) & ((ws > 0) | (v_in > 0)))
    return active, sliding


def kink_states(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES) -> KinkStates:
    """Which neurons are active on x₊ and on x₋ at every frame, by the side of each kink and
    the Filippov sliding condition.

    A neuron is *active on s* when cos∠(w_j, s) > `rules.kink_cos`, inactive when it is below
    −kink_cos. Inside the band |cos| ≤ kink_cos it is *on the kink*: it slides (inactive: it
    contributes nothing to h(s)) while the Filippov condition holds — the velocity of ⟨w_j, s⟩
    on the active side points back to the kink — and it is active (entering the active side)
    once that velocity points away from the kink, from the outputs h(x_i) of the frame. For
    the two-signal exponential loss (x_i on the signals, class weight p on x₊) the condition
    reads: a negative neuron on x₊'s kink that is active on x₋ slides iff
    h(x₊) + h(x₋) < ln(p ‖x₊‖² / ⟨x₊, x₋⟩) (`reactivation_threshold`); a positive neuron on
    x₋'s kink that is active on x₊ slides iff h(x₊) + h(x₋) > ln(p ⟨x₊, x₋⟩ / ‖x₋‖²).

    The band only has to contain the chatter across the kink, which the discretisation sets:
    it is max(kink_cos, twice one step's move of cos) — GD: 2η·ρ_j (ρ_j the neuron's rate of
    change of cos at the kink; large early, while ‖w_j‖ is small); `gf`: 5·KINK_REL·rtol^(1/3)
    (`_step_scale`; 5e-3 at the default rtol, measured chatter ≤ 2.9e-3 for t ≥ 1). The same
    floor kink_cos = 5e-3 (0.29°) for every integrator keeps their phase times comparable; a
    neuron still approaching a kink is counted on it that much early (≈ 10 % of the Phase III
    time on the preset). Frames without a stored full W fall back to the cosines: active iff
    cos > kink_cos (`filippov` False there)."""
    xp, xm = _signal_vectors(traj)
    F, m = traj.a.shape
    out = {k: np.zeros((F, m), bool) for k in ("ap", "am", "sp", "sm")}
    fil = np.zeros(F, bool)
    cfg = traj.config
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    R = 1.0 / len(y) if cfg.loss.reduction == "mean" else 1.0
    gamma, c = float(cfg.model.gamma), cfg.model.output_scale
    band = rules.kink_cos
    step = _step_scale(traj)
    cp = traj.cosines.get("x₊ signal")
    cm = traj.cosines.get("x₋ signal")
    from .readouts import OUTPUT_CHUNK, network_outputs

    frames, H = network_outputs(traj, X)
    frames, first = np.unique(frames, return_index=True)
    H = H[first]
    W_all = np.asarray(traj.W, float)[first]
    sw = np.asarray(traj.sw, float)
    step_k = max(1, OUTPUT_CHUNK // max(m * X.shape[0], 1))
    for lo in range(0, frames.size, step_k):  # frames with a stored full W, in chunks
        fr = frames[lo:lo + step_k]
        W, a = W_all[lo:lo + step_k], np.asarray(traj.a, float)[fr]
        r = -R * sw[None] * loss_derivative(cfg.loss.kind, H[lo:lo + step_k], y[None])
        out["ap"][fr], out["sp"][fr] = _side_of_kink(W, a, xp, y > 0, X, r, gamma, c, band,
                                                     step)
        out["am"][fr], out["sm"][fr] = _side_of_kink(W, a, xm, y < 0, X, r, gamma, c, band,
                                                     step)
        fil[fr] = True
    rest = np.flatnonzero(~fil)
    if rest.size:  # the cosine-only fallback
        if cp is None or cm is None:
            raise ValueError("need the full W or the signals' cosines at every frame")
        cp, cm = np.asarray(cp)[rest], np.asarray(cm)[rest]
        out["ap"][rest], out["am"][rest] = cp > band, cm > band
        out["sp"][rest], out["sm"][rest] = np.abs(cp) <= band, np.abs(cm) <= band
    return KinkStates(out["ap"], out["am"], out["sp"], out["sm"], fil)


def wang_ma_counts(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES
                   ) -> dict[str, np.ndarray]:
    """Per frame: positive neurons (a_j > 0) active on x₊ ("pos_on_plus") and on x₋
    ("pos_on_minus"), negative neurons active on x₊ ("neg_on_plus") and on x₋
    ("neg_on_minus"), active as decided by `kink_states` (side of the kink and sliding)."""
    ks = kink_states(traj, rules)
    pos = traj.a > 0
    neg = traj.a < 0
    return {
        "pos_on_plus": (ks.active_plus & pos).sum(axis=1),
        "pos_on_minus": (ks.active_minus & pos).sum(axis=1),
        "neg_on_plus": (ks.active_plus & neg).sum(axis=1),
        "neg_on_minus": (ks.active_minus & neg).sum(axis=1),
    }


def reactivation_threshold(traj: Trajectory) -> float | None:
    """ln(p ‖x₊‖² / ⟨x₊, x₋⟩) = ln(p / cos δ) for unit signals: the value of h(x₊) + h(x₋) at
    which a negative neuron sliding on x₊'s kink (active on x₋) leaves it for the active side
    (the Filippov condition p e^{−h(x₊)} ‖x₊‖² > e^{h(x₋)} ⟨x₊, x₋⟩ fails; exponential loss,
    p = Σ_{y_i>0} s_i / Σ_{y_i<0} s_i). None for other losses or when ⟨x₊, x₋⟩ ≤ 0 (no
    sliding there: such a neuron is pushed away from x₊ on both sides)."""
    if traj.config.loss.kind != "exponential":
        return None
    xp, xm = _signal_vectors(traj)
    dot = float(xp @ xm)
    sw, y = np.asarray(traj.sw, float), np.asarray(traj.y, float)
    p = float(sw[y > 0].sum() / max(sw[y < 0].sum(), _TINY))
    if dot <= 0 or p <= 0:
        return None
    return float(np.log(p * float(xp @ xp) / dot))


def signal_output_sum(traj: Trajectory) -> np.ndarray:
    """h(x₊) + h(x₋) at every frame (the kernels' forward pass on the two signals; NaN at
    frames without a stored full W)."""
    from .readouts import network_outputs

    xp, xm = _signal_vectors(traj)
    out = np.full(traj.n_frames, np.nan)
    frames, h = network_outputs(traj, np.stack([xp, xm]))
    out[frames] = h.sum(axis=1)
    return out


def predicted_reactivation(traj: Trajectory) -> tuple[float | None, str]:
    """The first logged time with h(x₊) + h(x₋) ≥ `reactivation_threshold`: from then on
    negative neurons sliding on x₊'s kink are carried onto its active side (Phase IV, derived
    from the Filippov condition; not the paper's formula). (None, why) when the condition is not
    defined, already holds at t = 0 (nothing slides) or is not reached in the run."""
    thr = reactivation_threshold(traj)
    if thr is None:
        return None, "no reactivation condition (needs exponential loss and ⟨x₊, x₋⟩ > 0)"
    hs = signal_output_sum(traj)
    ok = np.isfinite(hs)
    if not ok.any():
        return None, "no stored full W: h(x±) unknown"
    hit = np.flatnonzero(ok & (hs >= thr))
    if hit.size and hit[0] == 0:
        return None, f"h(x₊) + h(x₋) ≥ {thr:.4g} from t = 0: nothing slides on x₊'s kink"
    if not hit.size:
        return None, (f"h(x₊) + h(x₋) stays below ln(p/cos δ) = {thr:.4g} (max "
                      f"{np.nanmax(hs):.4g})")
    f = int(hit[0])
    return float(traj.t[f]), (f"h(x₊) + h(x₋) = {hs[f]:.4g} ≥ ln(p ‖x₊‖²/⟨x₊,x₋⟩) = "
                              f"{thr:.4g}: the Filippov sliding condition of the negative "
                              "neurons on x₊'s kink fails")


def _group_spread(traj: Trajectory, sel: np.ndarray, frame: int) -> float:
    """Max angle (degrees) between a group's neurons' projected directions and their mean."""
    P = traj.proj[frame][sel]
    nrm = np.linalg.norm(P, axis=1)
    P = P[nrm > 0] / nrm[nrm > 0, None]
    if len(P) < 2:
        return 0.0
    mean = P.sum(axis=0)
    if np.linalg.norm(mean) <= _TINY:
        return 180.0
    mean /= np.linalg.norm(mean)
    return float(np.degrees(np.arccos(np.clip(P @ mean, -1, 1))).max())


def condensation_time(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES,
                      states: KinkStates | None = None) -> float | None:
    """First frame at which, within each output-sign group, the neurons active on some signal
    (`kink_states`) lie within `condensed_deg` of their group's mean direction (in the
    recorded plane)."""
    ks = kink_states(traj, rules) if states is None else states
    act = ks.active_plus | ks.active_minus
    for f in range(1, traj.n_frames):
        if all(_group_spread(traj, (traj.a[f] * sgn > 0) & act[f], f) <= rules.condensed_deg
               for sgn in (1, -1)):
            return float(traj.t[f])
    return None


WANG_MA_RULES = (
    ("Phase I", "condensation and saddle escape: ends when, per output sign, the neurons "
     "active on a signal lie within 10° of their mean direction and the loss has left L(0) "
     "by 1 %, whichever is later"),
    ("Phase II", "accuracy plateau: from the end of I while the training accuracy keeps its "
     "value"),
    ("Phase III", "self-simplification: starts when the number of positive neurons active on "
     "x₋ falls — a neuron counts as inactive once it sits on x₋'s kink and the flow holds it "
     "there (Filippov sliding)"),
    ("Phase IV", "self-complication: starts when the number of negative neurons active on x₊ "
     "rises — neurons that slid along x₊'s kink are carried onto its active side; predicted "
     "(dashed) where h(x₊) + h(x₋) reaches ln(p/cos δ)"),
)
"""Each phase's rule in words (the Papers page and the hover of the bands)."""


def wang_ma_phases(traj: Trajectory, rules: PhaseRules = DEFAULT_RULES
                   ) -> tuple[list[Phase], dict[str, np.ndarray], str]:
    """Wang & Ma's four phases from logged quantities [reviews' picture; rules derived]:

    * I (condensation, saddle escape): [0, t_I], t_I = max(condensation time, saddle escape).
    * II (accuracy plateau): from t_I while the training accuracy keeps its value at t_I; ends
      at the first frame where it changes. None when the accuracy is already 1 at t_I.
    * III (positive neurons deactivate on x₋): starts at the first frame after t_I where the
      count of positive neurons active on x₋ (`kink_states`: sliding on the kink is inactive)
      has fallen by ≥ count_drop below its value at t_I; ends where that count reaches its
      minimum after the start (or where IV starts).
    * IV (negative neurons reactivate on x₊): starts at the first frame after III's start where
      the count of negative neurons active on x₊ exceeds its running minimum by ≥ count_drop;
      lasts to the end of the run.

    Returns (phases found, the four counts over frames, a one-line summary with the order)."""
    ks = kink_states(traj, rules)
    pos, neg = traj.a > 0, traj.a < 0
    counts = {"pos_on_plus": (ks.active_plus & pos).sum(axis=1),
              "pos_on_minus": (ks.active_minus & pos).sum(axis=1),
              "neg_on_plus": (ks.active_plus & neg).sum(axis=1),
              "neg_on_minus": (ks.active_minus & neg).sum(axis=1)}
    t = traj.t
    t_end = float(t[-1])
    phases: list[Phase] = []
    t_cond = condensation_time(traj, rules, ks)
    t_esc = saddle_escape(traj, rules)
    if t_cond is None or t_esc is None:
        return phases, counts, "phase I not completed (no condensation or no saddle escape)"
    t_I = max(t_cond, t_esc)
    phases.append(Phase("Phase I", 0.0, t_I, "detected",
                        f"condensed (≤ {rules.condensed_deg:g}°) at t = {t_cond:.4g}; loss left "
                        f"L(0) at t = {t_esc:.4g}", PLAIN["Phase I"]))
    fI = int(np.searchsorted(t, t_I))
    acc0 = traj.accuracy[fI]
    order = "I"
    if acc0 < 1.0:  # at accuracy 1 already there is no plateau to escape: no Phase II
        diff = np.flatnonzero(~np.isclose(traj.accuracy[fI:], acc0))
        if diff.size == 0:
            phases.append(Phase("Phase II", t_I, t_end, "detected",
                                f"accuracy stays at {acc0:.3g} to the end", PLAIN["Phase II"]))
            return phases, counts, "I → II (no escape from the accuracy plateau)"
        fII = fI + int(diff[0])
        phases.append(Phase("Phase II", t_I, float(t[fII]), "detected",
                            f"training accuracy constant at {acc0:.3g} for "
                            f"{np.log10(max(t[fII], 1e-300) / max(t_I, 1e-300)):.2g} decades",
                            PLAIN["Phase II"]))
        order += " → II"
    pm = counts["pos_on_minus"]
    drop = np.flatnonzero(pm[fI:] <= pm[fI] - rules.count_drop)
    if drop.size == 0:
        return phases, counts, order + " (no deactivation of positive neurons on x₋)"
    fIII = fI + int(drop[0])
    fmin = fIII + int(np.argmin(pm[fIII:]))
    nm = counts["neg_on_plus"]
    run_min = np.minimum.accumulate(nm[fIII:])
    rise = np.flatnonzero(nm[fIII:] >= run_min + rules.count_drop)
    end_III = float(t[fmin])
    if rise.size:
        fIV = fIII + int(rise[0])
        end_III = min(end_III, float(t[fIV])) if fmin > fIII else float(t[fIV])
    slid = int((ks.sliding_minus[fmin] & pos[fmin]).sum())
    phases.append(Phase("Phase III", float(t[fIII]), max(end_III, float(t[fIII])), "detected",
                        f"positive neurons active on x₋: {int(pm[fI])} → {int(pm[fmin])} "
                        f"({slid} sliding on x₋'s kink)", PLAIN["Phase III"]))
    order += " → III"
    if rise.size == 0:
        return phases, counts, order + " (no reactivation of negative neurons on x₊)"
    phases.append(Phase("Phase IV", float(t[fIV]), t_end, "detected",
                        f"negative neurons active on x₊: {int(run_min[rise[0]])} → "
                        f"{int(nm[-1])} at the end (left x₊'s kink: the sliding condition "
                        "failed)", PLAIN["Phase IV"]))
    return phases, counts, order + " → IV"
