"""Wang & Ma (NeurIPS 2023): understanding multi-phase optimisation dynamics and rich
nonlinear behaviours of ReLU networks.

Two signals x₊, x₋ at a small angle δ, exponential loss with class weight p on x₊, frozen
output layer a_j = ±1/√m: training goes through four phases (detected by
`phases.wang_ma_phases`; which neuron is active on a signal comes from the side of its kink
and the Filippov sliding condition, `phases.kink_states`). The paper's phase-time formulas are
not available to us (only the reviewers' description); the one predicted time is derived, not
the paper's: Phase IV starts when h(x₊) + h(x₋) reaches ln(p/cos δ), where negative neurons
sliding on x₊'s kink stop being held there (`phases.predicted_reactivation`).

That prediction is checked on the neurons themselves, apart from the sliding test the
detector uses (`reactivation`): the first visible departure of a held neuron from x₊'s kink
(cos∠(w_j, x₊) > 0.01) comes after it, when the leaving speed — zero at the predicted time,
growing with h(x₊) + h(x₋) − ln(p/cos δ) — says it should; the lag is reported.

The preset integrates the flow (`gf` at rtol 1e-8), the setting of the paper's statements.
Whether GD is in the flow limit is derived per run (`flow_step`: halve η until the phase
times move less than 5 %), not fixed: GD at the preset's former η = 5e-3 is far from it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import phases, theory
from ..annotations import Direction, TimeMarker
from ..config import Config, ConfigError
from ..phases import PhaseRules
from ..readouts import network_output
from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
    Knob,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Showcase,
    Summary,
    Tolerances,
    dataset_view,
    gate,
    loss_and_series,
    run_label,
    run_name,
)
from .claims import Claim, fmt
from .experiments import Experiment, Times

PHASES = ("Phase I", "Phase II", "Phase III", "Phase IV")
ORDER = "I → II → III → IV"
NUMBERS: dict[str, Published] = {
    # no published phase times: the order is what the reviewers describe
    "phase_order": Published(ORDER, "OpenReview reviews (forum konBXvt2iS)", "reviews"),
    "angle_deg": Published(17.19, "the preset's 0.3 rad between the signals", "derived"),
    "p": Published(2.0, "the preset's class weight", "derived"),
}
REL_TOL = 0.10
"""Phase starts agree within 10 %: one frame of the 300-frame log grid is 4.7 %."""
FRAMES = 300


# ----------------------------------------------------------------------------- presets
def config(angle_deg: float = 17.19, scale: float = 1e-3, t_end: float = 2000.0,
           lr: float = 5e-3, method: str = "gf", p: float = 2.0) -> Config:
    """Two signals at `angle_deg` with class weight `p`, m = 200, a_j = ±1/√m frozen,
    first-layer std `scale`, exponential loss (mean); `gf` at rtol 1e-8 or GD with step `lr`
    (the paper's step is not available; its statements are for the flow). rtol 1e-8: at the
    default 1e-6 the flow's kink floor lets neurons on x₊'s kink drift off it early (the
    visible departure 12 % before GD's η → 0 limit; at 1e-8: 2.2 %)."""
    return Config.from_dict({
        "data": {"kind": "two_signals", "angle_deg": angle_deg, "p": p},
        "model": {"width": 200, "train_output": False},
        "loss": {"kind": "exponential", "reduction": "mean"},
        "init": {"scheme": "fixed_output", "scale": scale, "normalisation": "none",
                 "output_value": 1.0, "output_norm": "sqrt_m"},
        "integrator": {"method": method, "lr": lr, "t_end": t_end, "rtol": 1e-8,
                       "max_steps": 20_000_000},
        "record": {"frames": FRAMES, "t_first": t_end * 1e-6}})


def presets(quick: bool = True) -> dict[str, Config]:
    """The flow (the paper's setting) and GD at η = 5e-3, which leaves the flow limit."""
    return {"four_phases": config(), "four_phases_gd": config(method="gd")}


# ----------------------------------------------------------------------------- checks
def phase_starts(traj: Trajectory, rules: PhaseRules = phases.DEFAULT_RULES
                 ) -> tuple[dict[str, float], str]:
    """Detected start of each phase found (name → t) and the order summary."""
    ph, _c, summary = phases.wang_ma_phases(traj, rules)
    return {p.name: p.start for p in ph}, summary


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


def setting_failures(traj: Trajectory) -> list[str]:
    """The setting of the four-phase picture ([] = met): two-signal data, the output layer
    frozen at a_j = ±c₀ (fixed_output), the exponential loss, ReLU."""
    cfg = traj.config
    out = []
    if cfg.data.kind != "two_signals":
        return [f"the data are {cfg.data.kind}, not the two signals x₊, x₋"]
    if cfg.model.train_output or cfg.init.scheme != "fixed_output":
        out.append("the output layer is trained (the setting freezes it)")
    if cfg.loss.kind != "exponential":
        out.append(f"the loss is {cfg.loss.kind}, not exponential")
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU (the setting is ReLU)")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


def check_four_phases(traj: Trajectory) -> Claim:
    """The four phases detected in the reviewers' order (gated by `setting_failures`)."""
    ph, _c, summary = phases.wang_ma_phases(traj)
    starts = [p.start for p in ph]
    ok = summary == ORDER and starts == sorted(starts)
    return gate(Claim(
        _name("wang_ma.four_phases", traj), "two signals, frozen output, exponential loss: "
        "phases I–IV are detected in the reviewers' order", summary, ORDER,
        "the exact order, starts increasing", ok,
        "; ".join(f"{p.name}: [{p.start:.4g}, {p.end:.4g}] ({p.evidence})" for p in ph),
        justification="the reviewers' description of the four phases; the paper's phase times "
        "are not available, so the order is what can be checked",
        integrator=run_label(traj.config)), setting_failures(traj))


# ----------------------------------------------------------------------------- reactivation
DEPART_COS = 0.01
"""A negative neuron has *visibly* left x₊'s kink once cos∠(w_j, x₊) > 0.01: twice the band
(5e-3) within which sitting on the kink stays — the flow's own chatter there is ≤ 2.9e-3 under
gf at the default rtol and η·ρ_j under GD (`phases.kink_states`)."""
REACT_TOL = 0.10
"""The visible departure is read on the frames (log grid, 4.7 % apart on the 300-frame
preset) and the leaving speed is integrated from frame values of h(x±): two frames' worth."""


@dataclass(frozen=True)
class Reactivation:
    """Phase IV read on the neurons, apart from the sliding test that detects it
    (`reactivation`): `t_pred` — h(x₊) + h(x₋) reaches ln(p/cos δ) (between frames, linearly);
    `n_held` — negative neurons active on x₋ inside x₊'s kink band (|cos| ≤ kink_cos) at
    t_pred; `t_visible` — the first time one of them has cos∠(w_j, x₊) > `theta` (between
    frames, linearly); `t_visible_pred` — when that neuron should get there: from t_pred its
    ⟨w_j, x₊⟩ grows at the leaving speed c|a_j|R(e^{h(x₋)}⟨x₊, x₋⟩ − p e^{−h(x₊)}‖x₊‖²)
    (zero at t_pred, since that is where the sliding condition fails), integrated on the
    frames' h(x±) (16 sub-steps per frame interval) until it reaches theta·‖w_j‖‖x₊‖."""

    t_pred: float | None
    n_held: int
    t_visible: float | None
    t_visible_pred: float | None
    neuron: int | None
    theta: float
    why: str

    @property
    def lag(self) -> float | None:
        """t_visible − t_pred: how long after the condition fails the departure shows."""
        if self.t_visible is None or self.t_pred is None:
            return None
        return self.t_visible - self.t_pred

    @property
    def lag_pred(self) -> float | None:
        if self.t_visible_pred is None or self.t_pred is None:
            return None
        return self.t_visible_pred - self.t_pred


def _cross(t: np.ndarray, v: np.ndarray, level: float, start: int = 1) -> float | None:
    """The first time v reaches `level` from below at or after frame `start`, linear between
    frames."""
    hit = np.flatnonzero((v >= level) & (np.arange(len(v)) >= max(start, 1)))
    if not hit.size:
        return None
    g = int(hit[0])
    if v[g - 1] >= level or v[g] == v[g - 1]:
        return float(t[g])
    return float(t[g - 1] + (t[g] - t[g - 1]) * (level - v[g - 1]) / (v[g] - v[g - 1]))


def reactivation(traj: Trajectory, theta: float = DEPART_COS,
                 rules: PhaseRules = phases.DEFAULT_RULES) -> Reactivation:
    """Phase IV measured on the neurons' cosines and predicted from h(x±) (see
    `Reactivation`); needs the full W at every frame (the presets record it)."""
    nothing = Reactivation(None, 0, None, None, None, theta, "")
    thr = phases.reactivation_threshold(traj)
    if thr is None or traj.config.data.kind != "two_signals":
        return replace(nothing, why="no reactivation condition (needs the two signals, the "
                       "exponential loss and ⟨x₊, x₋⟩ > 0)")
    xp = np.asarray(traj.directions["x₊ signal"], float)
    xm = np.asarray(traj.directions["x₋ signal"], float)
    t = np.asarray(traj.t, float)
    Ws = [traj.W_at(f) for f in range(traj.n_frames)]
    if any(W is None for W in Ws):
        return replace(nothing, why="the full W is not stored at every frame")
    W = np.stack([w for w in Ws if w is not None])
    S = np.stack([xp, xm])
    outs = [network_output(traj, f, S) for f in range(traj.n_frames)]
    H = np.stack([h if h is not None else np.full(2, np.nan) for h in outs])
    t_p = _cross(t, H.sum(axis=1), thr)
    if t_p is None or t_p <= 0:
        return replace(nothing, why=f"h(x₊) + h(x₋) does not reach ln(p/cos δ) = {thr:.4g} "
                       "after t = 0")
    f_p = int(np.searchsorted(t, t_p))  # first frame at or after t_pred
    nrm = np.maximum(np.linalg.norm(W, axis=2), 1e-300)
    cos = (W @ xp) / (nrm * np.linalg.norm(xp))
    neg = traj.a[f_p] < 0
    held = np.flatnonzero(neg & (np.abs(cos[f_p - 1]) <= rules.kink_cos) & (W[f_p - 1] @ xm > 0))
    if not held.size:
        return replace(nothing, t_pred=t_p, why="no negative neuron sits on x₊'s kink at "
                       "t_pred (nothing to reactivate)")
    firsts = [(tv, int(j)) for j in held
              if (tv := _cross(t, cos[:, j], theta, f_p)) is not None]
    if not firsts:
        return replace(nothing, t_pred=t_p, n_held=int(held.size),
                       why=f"no held neuron reaches cos > {theta:g} by t = {t[-1]:.4g}")
    t_vis, j = min(firsts)
    # the leaving speed, on a fine grid of the frames' h(x±) (linear between frames)
    grid = np.concatenate([[t_p], t[f_p:]])
    fine = np.unique(np.concatenate([np.linspace(a, b, 17)
                                     for a, b in itertools.pairwise(grid)] or [grid]))
    hp, hm = np.interp(fine, t, H[:, 0]), np.interp(fine, t, H[:, 1])
    cfg = traj.config
    R = 1.0 / len(traj.y) if cfg.loss.reduction == "mean" else 1.0
    sw, y = np.asarray(traj.sw, float), np.asarray(traj.y, float)
    s_plus, s_minus = float(sw[y > 0].sum()), float(sw[y < 0].sum())
    speed = np.maximum(R * (s_minus * np.exp(hm) * float(xp @ xm)
                            - s_plus * np.exp(-hp) * float(xp @ xp)), 0.0)
    speed *= float(cfg.model.c) * abs(float(traj.a[f_p, j]))
    u = max(float(W[f_p - 1, j] @ xp), 0.0) + np.concatenate(
        [[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(fine))])
    need = theta * np.interp(fine, t, nrm[:, j]) * float(np.linalg.norm(xp))
    k = np.flatnonzero(u >= need)
    t_vp = float(fine[k[0]]) if k.size else None
    return Reactivation(t_p, int(held.size), t_vis, t_vp, j, theta,
                        f"{held.size} negative neurons held on x₊'s kink at t_pred = "
                        f"{t_p:.4g}; neuron {j} shows first")


def check_reactivation(traj: Trajectory, theta: float = DEPART_COS) -> Claim:
    """Phase IV read on the neurons, independently of the sliding test: the first visible
    departure from x₊'s kink comes after h(x₊) + h(x₋) reaches ln(p/cos δ), at the time the
    leaving speed predicts (within REACT_TOL); gated by `setting_failures`."""
    r = reactivation(traj, theta)
    ok = (r.t_visible is not None and r.t_visible_pred is not None and r.t_pred is not None
          and r.t_visible >= r.t_pred
          and abs(r.t_visible - r.t_visible_pred) <= REACT_TOL * r.t_visible_pred)
    starts, _s = phase_starts(traj)
    det = starts.get("Phase IV")
    lag = (f"lag {r.lag:.4g} after t_pred = {r.t_pred:.4g} (predicted lag {fmt(r.lag_pred)})"
           if r.lag is not None and r.t_pred is not None else r.why)
    return gate(Claim(
        _name("wang_ma.reactivation", traj),
        f"[derived] negative neurons held on x₊'s kink leave it once h(x₊) + h(x₋) reaches "
        f"ln(p/cos δ): the first visible departure (cos∠(w_j, x₊) > {theta:g}) comes after "
        "that time, when the leaving speed predicts",
        r.t_visible if r.t_visible is not None else r.why,
        r.t_visible_pred if r.t_visible_pred is not None else "—",
        f"visible departure within {REACT_TOL:.0%} of its predicted time, after t_pred", ok,
        f"{lag}. Why a lag: at t_pred the sliding condition fails with zero margin, so the "
        "neuron leaves the kink with zero speed; ⟨w_j, x₊⟩ then grows about quadratically in "
        f"the time since (speed ∝ h(x₊) + h(x₋) − ln(p/cos δ)) until cos reaches {theta:g}. "
        f"{r.why}. The sliding test (the phase detector) starts Phase IV at {fmt(det)}: it "
        "reads the same inequality as t_pred, so only this measurement on the cosines is "
        "independent of the prediction.",
        justification=f"cos > {theta:g} is twice the kink band (the flow's chatter stays "
        f"inside it); {REACT_TOL:.0%} is two frames of the 300-frame log grid, the "
        "resolution of both the cosines and the integrated speed",
        integrator=run_label(traj.config)), setting_failures(traj))


# ----------------------------------------------------------------------------- flow limit
FLOW_TOL = 0.05
"""GD is in the flow limit at η when halving η moves t_pred and the visible departure by
less than 5 % (both are read between frames, so they move continuously with η). Once there,
GD at η and η/2 agree within 0.1 %; gf at rtol 1e-8 is within 2.2 % of that limit on the
preset (its kink floor: accuracy ∝ rtol^⅓); GD at η = 1e-3 on the δ = 22°, p = 3 case starts
Phase IV 10 % early, which 5 % flags."""
ETA0 = 5e-3
"""The first GD step tried (the preset's former η), halved until the flow limit."""


def flow_times(traj: Trajectory) -> dict[str, float]:
    """The continuous phase times the flow-limit check compares: t_pred (h(x₊) + h(x₋) reaches
    ln(p/cos δ)) and the first visible departure from x₊'s kink (NaN: not reached)."""
    r = reactivation(traj)
    nan = float("nan")
    return {"IV predicted": r.t_pred if r.t_pred is not None else nan,
            "IV visible": r.t_visible if r.t_visible is not None else nan}


def _moved(a: dict[str, float], b: dict[str, float]) -> float:
    """The largest relative move between two runs' flow times (inf when one is missing where
    the other has it)."""
    out = 0.0
    for k in a:
        x, y = a[k], b.get(k, float("nan"))
        if np.isnan(x) and np.isnan(y):
            continue
        if np.isnan(x) or np.isnan(y):
            return float("inf")
        out = max(out, _rel(x, y))
    return out


def gd_at(config: Config, eta: float) -> Config:
    """`config` under GD at step η with the step bound that reaches its t_end: max_steps =
    round(t_end/η) + 1 (raises ConfigError past the server's step limit, EAE_MAX_STEPS)."""
    return config.with_updates({"integrator.method": "gd", "integrator.lr": eta,
                                "integrator.max_steps": round(config.integrator.t_end / eta) + 1})


def flow_step(flow: Trajectory, run: Run, eta0: float = ETA0, tol: float = FLOW_TOL,
              max_halvings: int = 6) -> tuple[float | None, list[tuple[float, Trajectory]]]:
    """The GD step in the flow limit for `flow`'s config, derived from the runs: GD at eta0,
    eta0/2, … (through `run`) until halving η moves the flow times (`flow_times`) by less than
    `tol`; returns (that η — the larger of the last pair —, every GD run) or (None, runs)
    when `max_halvings` do not get there."""
    runs: list[tuple[float, Trajectory]] = []
    eta = eta0
    prev: dict[str, float] | None = None
    for _ in range(max_halvings + 1):
        try:  # the server's step limit (EAE_MAX_STEPS) ends the halving: no flow limit found
            cfg = gd_at(flow.config, eta)
        except ConfigError:
            return None, runs
        tr = run(cfg)
        runs.append((eta, tr))
        now = flow_times(tr)
        if prev is not None and _moved(prev, now) <= tol:
            return 2 * eta, runs
        prev, eta = now, eta / 2
    return None, runs


def check_flow_limit(flow: Trajectory, run: Run, eta0: float = ETA0, tol: float = FLOW_TOL
                     ) -> Claim:
    """The phase times under GD approach the flow's as η → 0, with η derived from the run
    (`flow_step`, not a fixed step): GD at the derived η agrees with gf within `tol` and
    detects the same order; every η tried is in the table."""
    eta, runs = flow_step(flow, run, eta0, tol)
    ref = flow_times(flow)
    _st, ref_order = phase_starts(flow)
    rows: list[dict[str, Any]] = [{"integrator": run_label(flow.config), "order": ref_order,
                                   **ref, "vs flow": 0.0}]
    dev = float("inf")
    same_order = False
    for e, tr in runs:
        times = flow_times(tr)
        _s, order = phase_starts(tr)
        moved = _moved(times, ref)
        rows.append({"integrator": run_label(tr.config), "order": order, **times,
                     "vs flow": moved})
        if eta is not None and e == eta:
            dev, same_order = moved, order == ref_order
    ok = eta is not None and dev <= tol and same_order
    coarse = [r["integrator"] for r in rows[1:] if r["vs flow"] > tol]
    return gate(Claim(
        _name("wang_ma.flow_limit", flow),
        "the phase times under GD approach the flow's as η → 0 (η derived by halving until "
        "they move less than the tolerance)",
        dev, 0.0, f"at the derived η: t_pred and the visible departure within {tol:.0%} of the "
        "flow's, same detected order", ok,
        (f"derived flow-limit step η = {eta:g}" if eta is not None else
         f"no flow limit within {len(runs)} halvings from η = {eta0:g}")
        + (f"; not in the flow limit: {', '.join(coarse)} — the chatter across the kinks "
           "biases h(x₊) + h(x₋) upward, so the condition is crossed early" if coarse else ""),
        rows, justification="the paper's statements are for the flow; GD converges to it as "
        f"η → 0, at a rate that depends on the run, so η is derived per run. {tol:.0%}: both "
        "times are interpolated between frames, so they move continuously with η",
        integrator=", ".join(r["integrator"] for r in rows)), setting_failures(flow))


SMALL_ANGLE = 17.19


def check_sweep(rows: list[dict[str, Any]], t_end: float) -> Claim:
    """Across a grid of (angle, init std): at every setting the detected phases keep the
    reviewers' order, and the visible departure from x₊'s kink comes where the leaving speed
    predicts it (within REACT_TOL; neither: fine) — measured on the cosines, not the sliding
    test; at δ ≤ 17.19° all four phases appear."""
    bad: list[str] = []
    for r in rows:
        names = [n for n in PHASES if n in r["starts"]]
        st = [r["starts"][n] for n in names]
        tag = f"{r['angle (°)']}°/{r['init std']:g}"
        if st != sorted(st):
            bad.append(f"{tag}: out of order")
        vis, vp = r["IV visible"], r["IV visible predicted"]
        if (vis is None) != (vp is None or vp > t_end) or (
                vis is not None and vp is not None and abs(vis - vp) > REACT_TOL * vp):
            bad.append(f"{tag}: visible departure {fmt(vis)} vs predicted {fmt(vp)}")
        if r["angle (°)"] <= SMALL_ANGLE and r["order"] != ORDER:
            bad.append(f"{tag}: {r['order']}")
    n_ok = len(rows) - len({b.split(':')[0] for b in bad})
    table = [{k: v for k, v in r.items() if k != "starts"}
             | {f"{n} start": r["starts"].get(n, float("nan")) for n in PHASES[1:]}
             for r in rows]
    for row in table:
        for k in ("IV predicted", "IV visible", "IV visible predicted"):
            row[k] = float("nan") if row[k] is None else row[k]
    return Claim(
        "wang_ma.sweep", "across angles and init scales: the four phases in order at small "
        "angles, and the visible departure from x₊'s kink where the leaving speed predicts it",
        f"{n_ok} of {len(rows)} settings", f"{len(rows)} of {len(rows)}",
        f"every setting: order kept, visible departure within {REACT_TOL:.0%} of its "
        f"predicted time (or neither by t = {t_end:g}); δ ≤ {SMALL_ANGLE}°: all four phases",
        not bad and bool(rows),
        ("; ".join(bad) if bad else "all settings consistent") + ". At larger angles h(x₊) + "
        "h(x₋) may stay below ln(p/cos δ) within the run: then no Phase IV is expected.", table,
        justification="the reviewers describe the four phases for signals at a small angle; "
        "the departure is measured on the neurons' cosines, independent of the prediction",
        integrator=f"gf rtol {config().integrator.rtol:g}")


def sweep_row(tr: Trajectory) -> dict[str, Any]:
    cfg = tr.config
    st, sm = phase_starts(tr)
    r = reactivation(tr)
    return {"angle (°)": cfg.data.angle_deg, "init std": cfg.init.scale,  # type: ignore[union-attr]
            "order": sm, "starts": st, "IV predicted": r.t_pred, "IV visible": r.t_visible,
            "IV visible predicted": r.t_visible_pred}


# ----------------------------------------------------------------------------- claims
def claims(quick: bool, run: Run) -> list[Claim]:
    tr = run(config())
    out = [check_four_phases(tr), check_reactivation(tr), check_flow_limit(tr, run)]
    grid = ([(17.19, 1e-3), (10.0, 1e-3), (30.0, 1e-3), (17.19, 1e-2)] if quick else
            [(a, s) for a in (10.0, 17.19, 30.0, 45.0) for s in (1e-4, 1e-3, 1e-2)])
    rows = [sweep_row(tr if (a, s) == (17.19, 1e-3) else run(config(a, s))) for a, s in grid]
    out.append(check_sweep(rows, float(tr.t[-1])))
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """The order of the phases detected in this run, and its visible departure from x₊'s
    kink against the leaving speed (the claims' own names: the run they got)."""
    return [check_four_phases(traj), check_reactivation(traj)]


# ----------------------------------------------------------------------------- analysis
def applies_to(config: Config) -> bool:
    """Wang & Ma's two-signal data."""
    return config.data.kind == "two_signals"


def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """Two-signal data: the derived directions of `theory.wang_ma_geometry`; with the output
    layer frozen, the detected phases I–IV, their summary, and the predicted start of IV."""
    out = PaperOverlay()
    cfg = traj.config
    if cfg.data.kind != "two_signals":
        return out
    geo = theory.wang_ma_geometry(dataset_view(traj))
    out.directions += [Direction(dd.name, dd.vector, "target", dd.note)
                       for dd in geo.directions]
    if not cfg.model.train_output:
        wp, _counts, summary = phases.wang_ma_phases(traj, rules)
        out.phases.extend(wp)
        out.notes.append("Wang & Ma phases: " + summary)
        t_pred, why = phases.predicted_reactivation(traj)
        if t_pred is not None:
            out.markers.append(TimeMarker("Phase IV (predicted)", t_pred, "predicted",
                                          "[derived] " + why))
        else:
            out.notes.append("predicted Phase IV: " + why)
    return out


def report_figure(quick: bool = True) -> ReportFigure:
    return ReportFigure(config(), loss_and_series("wang_ma", "neuron counts",
                                                  phases.wang_ma_counts))


# ----------------------------------------------------------------------------- sweep summaries
def _phase_time(name: str, end: bool, *, before_end: bool = False) -> Any:
    def compute(tr: Trajectory, detected: Sequence[Any], _o: object) -> float:
        t_last = float(tr.t[-1]) if tr.n_frames else float("nan")
        for p in detected:
            if p.name == name and not (before_end and p.end >= t_last * (1 - 1e-9)):
                return float(p.end if end else p.start)
        return float("nan")
    return compute


def _pred_iv(tr: Trajectory, _p: object, _o: object) -> float:
    if tr.config.data.kind != "two_signals":
        return float("nan")
    t_pred = phases.predicted_reactivation(tr)[0]
    return float("nan") if t_pred is None else float(t_pred)


SUMMARIES = (
    Summary("t_phase_I", "end of Wang & Ma's Phase I (two-signal data)",
            _phase_time("Phase I", True), needs_phases=True),
    Summary("t_phase_II", "end of Wang & Ma's Phase II, the accuracy plateau (NaN: no escape)",
            _phase_time("Phase II", True, before_end=True), needs_phases=True),
    Summary("t_phase_III", "start of Wang & Ma's Phase III, positive neurons leave x₋ "
            "(detected)", _phase_time("Phase III", False), needs_phases=True),
    Summary("t_phase_IV", "start of Wang & Ma's Phase IV, negative neurons return to x₊ "
            "(detected)", _phase_time("Phase IV", False), needs_phases=True),
    Summary("t_phase_IV_pred", "Phase IV predicted: first h(x₊) + h(x₋) ≥ ln(p/cos δ) "
            "[derived]", _pred_iv),
)


# ----------------------------------------------------------------------------- sweeps
def _sweep_phase1_vs_angle(quick: bool) -> dict[str, Any]:
    angles = [20.0, 40.0, 60.0, 80.0] if quick else [10.0, 17.19, 25.0, 35.0, 45.0, 55.0,
                                                      65.0, 75.0, 85.0]
    return {
        "name": "Phase I time vs angle between x₊ and x₋",
        "description": "Wang & Ma's two-signal data, frozen output layer, exponential loss: "
                       "the detected end of Phase I (condensation and saddle escape) by the "
                       "angle between the signals. The paper's phase-time formulas are not "
                       "available: measured only.",
        "base": {"data": {"kind": "two_signals", "angle_deg": 17.19, "p": 2.0},
                 "model": {"width": 50, "train_output": False},
                 "init": {"scheme": "fixed_output", "normalisation": "none", "scale": 1e-2,
                          "output_value": 1.0, "output_norm": "sqrt_m"},
                 "loss": {"kind": "exponential", "reduction": "sum"},
                 "integrator": {"method": "gd", "lr": 0.01, "t_end": 200},
                 "record": {"frames": 120, "scalars": 400}},
        "axes": [{"field": "data.angle_deg", "values": angles}],
        "seeds": 2 if quick else 6,
    }


def _sweep_phase_times(quick: bool) -> dict[str, Any]:
    """Detected starts of Phases III and IV (and the predicted IV) against δ, p and the init
    std, under the flow. Quick: 3 × 2 × 2 = 12 runs of ≈ 0.3 s each."""
    t_end = 2000.0 if quick else 3000.0
    base = config(t_end=t_end).to_dict()
    return {
        "name": "Wang & Ma phase times vs angle, class weight and init scale",
        "description": "Two signals, frozen output layer, exponential loss, gradient flow "
                       "(gf): the detected starts of Phase III (positive neurons leave x₋) and "
                       "IV (negative neurons return to x₊), and IV predicted by "
                       "h(x₊) + h(x₋) = ln(p/cos δ) [derived], by the angle δ, the class weight "
                       "p and the first-layer init std. NaN: the phase is not reached by "
                       f"t = {t_end:g}.",
        "base": base,
        "axes": [{"field": "data.angle_deg",
                  "values": [10.0, 17.19, 30.0] if quick else [10.0, 17.19, 25.0, 30.0]},
                 {"field": "data.p", "values": [2.0, 4.0] if quick else [1.5, 2.0, 4.0]},
                 {"field": "init.scale",
                  "values": [1e-3, 1e-2] if quick else [1e-4, 1e-3, 1e-2]}],
        "seeds": 1,
        "record": ["final_loss", "t_phase_I", "t_phase_II", "t_phase_III", "t_phase_IV",
                   "t_phase_IV_pred", "phases"],
    }


# ----------------------------------------------------------------------------- experiments
EXPERIMENTS = {
    "four_phases": (
        Experiment("wide", "Wider angle: δ = 30°", {"data.angle_deg": 30.0},
                   "h(x₊) + h(x₋) now stays below ln(p/cos δ): the negative neurons held on "
                   "x₊'s kink are never released, so there is no Phase IV.",
                   "wang_ma.sweep"),
        Experiment("heavier", "Heavier class weight: p = 4", {"data.p": 4.0},
                   "The release level ln(p/cos δ) rises, so Phase IV — negative neurons "
                   "leaving x₊'s kink — comes later (dashed line moves right).",
                   "wang_ma.reactivation"),
        Experiment("coarse_gd", "Gradient descent with η = 5·10⁻³",
                   {"integrator.method": "gd", "integrator.lr": 5e-3},
                   "Phases III and IV come much earlier: the steps jump back and forth across "
                   "the kinks, which pushes h(x₊) + h(x₋) up. This is not the flow.",
                   "wang_ma.flow_limit"),
    ),
    "four_phases_gd": (
        Experiment("smaller_step", "Four times smaller step", {"integrator.lr": Times(0.25)},
                   "Phases III and IV move later, toward the flow's times; halving again "
                   "barely moves them once η is in the flow limit.", "wang_ma.flow_limit"),
        Experiment("flow", "Integrate the flow (gf)", {"integrator.method": "gf"},
                   "The phases keep their order but III and IV start hundreds of time units "
                   "later than under this coarse GD.", "wang_ma.flow_limit"),
    ),
}


# ----------------------------------------------------------------------------- the paper
_RULES_MD = "\n".join(f"- **{name}** — {rule}." for name, rule in phases.WANG_MA_RULES)

PAPER = Paper(
    key="wang_ma",
    order=40,
    title="Wang & Ma (NeurIPS 2023) — multi-phase dynamics of ReLU networks",
    short="Wang & Ma",
    text=(
        "Two signals x₊, x₋ at a small angle δ, exponential loss with class weight p on x₊, "
        "the output layer frozen, gradient flow. Training goes through **four phases**. "
        "**The paper's phase-time formulas are not available to us** (only the reviewers' "
        "description): this section shows the phases *detected* in the run, each by the rule "
        "below, and one *derived* prediction — a negative neuron sliding along x₊'s kink "
        "(active on x₋) is held there while p·e^{−h(x₊)} > cos δ·e^{h(x₋)} (the Filippov "
        "condition), so Phase IV starts when h(x₊) + h(x₋) reaches ln(p/cos δ) (dashed).\n\n"
        + _RULES_MD + "\n\nA neuron is active on a signal when it is on the positive side of "
        "its kink; a neuron on the kink (|cos| ≤ 0.005, or the step's chatter) counts as "
        "active only when the flow carries it to the positive side."),
    note=("Bands: phases *detected* in this run (hover for the rule). Dashed: Phase IV "
          "predicted from h(x₊) + h(x₋) = ln(p/cos δ) [derived, not the paper's formula]. "
          "GD with a coarse step (η = 5e-3) reaches III and IV early: not the flow."),
    presets=presets,
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    applies_to=applies_to,
    report_figure=report_figure,
    numbers=NUMBERS,
    summaries=SUMMARIES,
    experiments=EXPERIMENTS,
    knobs=(
        Knob("angle", "angle between x₊ and x₋ (°)", "data.angle_deg", 17.19, min_value=1.0,
             max_value=89.0, step=1.0, format="%g"),
        Knob("std", "first-layer init std", "init.scale", "1e-3",
             options=("1e-5", "1e-4", "1e-3", "1e-2")),
    ),
    showcases=(
        Showcase("four_phases", "Wang & Ma · four phases",
                 "Two signals, frozen output layer: four detected phases of the dynamics."),
    ),
    builtin_sweeps=(
        BuiltinSweep("phase1_vs_angle", "Phase I time against the angle of the two signals",
                     "Wang & Ma (two-signal data)",
                     "measured only: the paper's phase-time formulas are not available",
                     _sweep_phase1_vs_angle),
        BuiltinSweep("phase_times", "Wang & Ma phase times against δ, p and the init scale",
                     "Wang & Ma (two-signal data)",
                     "measured phase starts; Phase IV also predicted from "
                     "h(x₊) + h(x₋) = ln(p/cos δ) [derived]", _sweep_phase_times),
    ),
)
