"""Dana, Bach & Pillaud-Vivien (NeurIPS 2025, arXiv 2502.16977), "Convergence of shallow ReLU
networks on weakly interacting data", with its 2026 follow-up on mildly over-parameterised
ReLU networks on orthogonal data (arXiv 2605.27097).

What we read (docs/papers/dana.md): both abstracts and the first page of 2502.16977 [paper],
and the authors' code `leodana2000/Convergence-High-Dimension` [code]: the network
f(x) = (1/p) Σ_j a_j ReLU(⟨w_j, x⟩) with a_j = ±(‖w_j‖ + Exp(1)), the loss p·mean((y − f)²)/2,
full-batch GD, orthogonal data x_k = r_k e_k with r_k, |y_k| ~ U[1, 2], the "good
initialisation" test (every point has a neuron of its label's sign active on it) and the width
rule p = ⌊log(n/ε)/log(4/3)⌋ + 1. The theorems' statements were not readable; what is checked
is derived here from that setting, each marked [derived]:

(D1)  Orthogonal inputs decouple the flow point by point: d⟨w_j, x_k⟩/dt ∝ a_j r_k 1[⟨w_j,
      x_k⟩ > 0], so a neuron inactive on x_k stays so (σ'(0) = 0). A point no neuron of its
      label's sign covers at t = 0 is never fitted (its residual keeps |y_k|); with
      |a_j| > ‖w_j‖ (conserved a_j² − ‖w_j‖² > 0, so a_j keeps its sign) a covered point is
      fitted [the code's `is_well_init`; their convergence theorem]. So the run interpolates
      iff the start covers every point (`covered`).
(D2)  For Gaussian w_j and orthogonal x_k the events ⟨w_j, x_k⟩ > 0 are independent fair
      coins, the signs s_j too: P(covered) = Σ_{a₊ ≤ n₊, a₋ ≤ n₋} C(n₊, a₊) C(n₋, a₋)
      (−1)^{a₊+a₋} [½(2^{−a₊} + 2^{−a₋})]^p by inclusion–exclusion over the uncovered points
      (`coverage_probability`), ≥ 1 − n(3/4)^p (the union bound behind the code's width rule).
(D3)  From a start of scale λ → 0 every neuron first grows like e^{r t} at a rate r set by
      the points it covers, so its exit from the saddle at 0 comes at t ≈ T ln(1/λ) + O(1):
      in the time t/ln(1/λ) the flow becomes a jump process (the follow-up's abstract:
      "converges to a saddle-to-saddle jump process as the initialization scale tends to
      zero"), one neuron switching on at each jump.

Conventions: our loss is the mean ½(y − h)², theirs p times it, so our time is p × theirs
(their GD step 1 for T epochs is our t = p·T).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise, product
from pathlib import Path
from typing import Any

import numpy as np

from ..annotations import Analysis, Phase, PhaseText, TimeMarker
from ..config import Config, data_shape
from ..data import build_dataset
from ..figure_spec import Axis, FigureSpec, Line, Panel, Points, Rule
from ..init import init_weights
from ..phases import PhaseRules
from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
    Comparison,
    Knob,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Section,
    Showcase,
    StudySection,
    Summary,
    Tolerances,
    full_w,
    gate,
    loss_and_series,
    rate_failures,
    run_label,
    run_name,
)
from .claims import Claim, fmt
from .experiments import Experiment

_CODE = "authors' code leodana2000/Convergence-High-Dimension"
NUMBERS: dict[str, Published] = {
    "width_rule_1300": Published(36, _CODE + ", utils.nb_neurons(1300, 0.05) and the p column "
                                 "of raw_experiments/Data_exp_1_100_bis.csv"),
    "width_order": Published("log n", "abstract of 2502.16977: a width of order log(n) "
                             "neurons suffices for global convergence with high probability"),
    "jump_process": Published("one neuron per saddle", "abstract of 2605.27097: the limiting "
                              "flow converges to a saddle-to-saddle jump process as the "
                              "initialization scale tends to zero, a new neuron activating "
                              "at each saddle"),
    "norm_exponent": Published(0.5, "abstract of 2605.27097: the learned interpolator has a "
                               "squared ℓ2-norm scaling as √n, within a constant factor of the "
                               "minimal ℓ2-norm interpolator"),
}

ORTHO_TOL = 1e-9
CONVERGED = 1e-4
"""A run interpolates when its final loss is below 1e-4 L(0): an uncovered point keeps
½y_k²/n ≥ L(0)/(4n) (labels in [1, 2]), 300 times more at n = 8 and still 40 times at n = 64;
a covered run falls below it by t = 40 p (their PL rate, 1/(np) in our time)."""
PHASE_TEXT: dict[str, PhaseText] = {
    "incremental learning": PhaseText("neurons switch on one by one"),
}
"""The phase's plain words (`Phase.plain`)."""
TOLERANCES = {"jump_rel": 0.04, "share": 0.01}
"""`jump_rel`: normalised exits t_j/ln(1/λ) at two scales λ₁ > λ₂ agree within 4 % — (D3)'s
O(1) offset is a few 1/r, a few % of T ln(1/λ₁) at λ₁ = 1e-30 (ln 1/λ₁ = 69); `share`: a neuron
counts once its final ‖θ_j‖² is 1 % of the total."""


# ----------------------------------------------------------------------------- presets
def config(n: int = 8, width: int = 6, scale: float = 0.2, *, output_value: float = 1.0,
           t_end: float = 300.0, seed: int = 0, method: str = "gf", lr: float = 0.05,
           frames: int = 60, **updates: Any) -> Config:
    """Dana et al.'s orthogonal data (x_k = r_k e_k in R^n, r_k and |y_k| ~ U[1, 2], random
    signs), f = (1/p) Σ a_j σ(⟨w_j, x⟩) (output power 1), square loss (mean), the exp-margin
    start w_j ~ N(0, λ² I), a_j = ±(‖w_j‖ + output_value·Exp(1)); gf at rtol 1e-8."""
    cfg = Config.from_dict({
        "data": {"kind": "generated", "generator": "orthogonal", "labels": "dana", "n": n,
                 "d": n},
        "model": {"width": width, "output_power": 1.0},
        "loss": {"kind": "square", "reduction": "mean"},
        "init": {"scheme": "exp_margin", "scale": scale, "normalisation": "none",
                 "output_value": output_value},
        "integrator": {"method": method, "t_end": t_end, "rtol": 1e-8, "lr": lr,
                       "max_steps": 20_000_000},
        "record": {"frames": frames, "t_first": 0.1}, "seed": seed})
    return cfg.with_updates(updates) if updates else cfg


def incremental_config(scale: float = 1e-20, **kw: Any) -> Config:
    """The small start of the follow-up: both layers of scale λ (output_value = λ), 8 neurons,
    seed 1 (three neurons switch on, at two jumps)."""
    t_end = 40.0 * math.log(1.0 / scale)
    return config(8, 8, scale, output_value=scale, t_end=t_end, seed=kw.pop("seed", 1),
                  frames=kw.pop("frames", 200), **kw)


def presets(quick: bool = True) -> dict[str, Config]:
    """The incremental run (λ = 1e-20, the smallest start the Explorer offers; the jump claim
    compares 1e-30 with 1e-60), first on the page and in the lesson, and the coverage one
    (Dana et al.'s O(1) start, p = 6 for n = 8: a start that covers every point about a
    quarter of the time)."""
    return {"incremental": incremental_config(), "coverage": config(seed=4)}


# ----------------------------------------------------------------------------- theory
def covered(X: np.ndarray, y: np.ndarray, W: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per point: a neuron with sign(a_j) = sign(y_k) is active on it (the code's
    `is_well_init`, point by point)."""
    act = W @ X.T > 0.0
    return ((a[:, None] * y[None, :] > 0.0) & act).any(axis=0)


def coverage_probability(n_plus: int, n_minus: int, p: int) -> float:
    """(D2): P(every point covered) for p neurons with Gaussian w_j and signs ±1, n_plus
    positive and n_minus negative orthogonal points (exact, by inclusion–exclusion)."""
    total = 0.0
    for ap, am in product(range(n_plus + 1), range(n_minus + 1)):
        q = 0.5 * (2.0 ** -ap + 2.0 ** -am)
        total += math.comb(n_plus, ap) * math.comb(n_minus, am) * (-1) ** (ap + am) * q**p
    return float(total)


def union_bound(n: int, p: int) -> float:
    """1 − n(3/4)^p, the lower bound on P(covered) the width rule uses."""
    return 1.0 - n * 0.75**p


def width_rule(n: int, eps: float) -> int:
    """The code's `nb_neurons`: p = ⌊log(n/ε)/log(4/3)⌋ + 1, so n(3/4)^p ≤ ε."""
    return math.floor(math.log(n / eps) / math.log(4.0 / 3.0)) + 1


def start_covers(traj: Trajectory) -> bool:
    return bool(covered(np.asarray(traj.X, float), np.asarray(traj.y, float), full_w(traj, 0),
                        np.asarray(traj.a[0], float)).all())


def interpolates(traj: Trajectory) -> bool:
    return bool(np.isfinite(traj.loss[-1]) and traj.loss[-1] <= CONVERGED * traj.loss[0])


def min_norm_sq(traj: Trajectory) -> float:
    """The minimal ‖θ‖² of an interpolator with this output scale c_p = c·m^(−p) (derived, as
    Boursier et al. 2022's variation norm): ‖θ‖² ≥ 2Σ|a_j|‖w_j‖ ≥ 2V*/c_p with
    V* = ‖(|y_k|/‖x_k‖)_{y>0}‖ + ‖(|y_k|/‖x_k‖)_{y<0}‖, reached by one neuron per sign."""
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    v = np.abs(y) / np.linalg.norm(X, axis=1)
    V = float(np.linalg.norm(v[y > 0]) + np.linalg.norm(v[y < 0]))
    return 2.0 * V / traj.config.model.output_scale


def exits(traj: Trajectory, share: float = TOLERANCES["share"]) -> dict[int, float]:
    """(D3): neuron → the time its ‖θ_j‖ = √(a_j² + ‖w_j‖²) crosses √(‖θ_j(0)‖ ‖θ_j(end)‖)
    (half way in log scale, interpolated in ln between frames), for the neurons whose final
    ‖θ_j‖² is at least `share` of the total."""
    th = np.sqrt(np.asarray(traj.a, float) ** 2 + np.asarray(traj.norms, float) ** 2)
    t = np.asarray(traj.t, float)
    fin = th[-1]
    out: dict[int, float] = {}
    for j in np.flatnonzero(fin**2 >= share * float((fin**2).sum())):
        if th[0, j] <= 0.0:
            continue
        mid = math.sqrt(th[0, j] * fin[j])
        hit = np.flatnonzero(th[:, j] >= mid)
        if not hit.size or hit[0] == 0:
            continue
        k = int(hit[0])
        l0, l1 = math.log(th[k - 1, j]), math.log(th[k, j])
        frac = (math.log(mid) - l0) / (l1 - l0) if l1 > l0 else 1.0
        out[int(j)] = float(t[k - 1] + (t[k] - t[k - 1]) * frac)
    return out


# ----------------------------------------------------------------------------- hypotheses
def _orthogonality(X: np.ndarray) -> float:
    nx = np.linalg.norm(X, axis=1)
    if (nx == 0).any():
        return float("inf")
    U = X / nx[:, None]
    G = np.abs(U @ U.T)
    np.fill_diagonal(G, 0.0)
    return float(G.max()) if len(X) > 1 else 0.0


def applies_to(config: Config) -> bool:
    """The square loss on orthogonal inputs from an exp-margin start (Dana et al.'s setting)."""
    if config.loss.kind != "square" or config.init.scheme != "exp_margin":
        return False
    n, d = data_shape(config.data)
    if n > d or n > 2000:
        return False
    return _orthogonality(build_dataset(config).X) <= ORTHO_TOL


def setting_failures(traj: Trajectory) -> list[str]:
    """The setting ([] = met): orthogonal inputs, the square loss, ReLU, both layers trained,
    |a_j| > ‖w_j‖ at t = 0 (so no a_j changes sign), labels not 0."""
    cfg = traj.config
    out = []
    if _orthogonality(np.asarray(traj.X, float)) > ORTHO_TOL:
        out.append("the inputs are not orthogonal")
    if cfg.loss.kind != "square":
        out.append(f"the loss is {cfg.loss.kind}, not the square loss")
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU (the paper's network is ReLU)")
    if not cfg.model.train_output:
        out.append("the output layer is frozen (the paper trains both layers)")
    out += rate_failures(cfg)
    W0 = traj.W_at(0)
    if W0 is None:
        return [*out, "W(0) was not recorded"]
    if not (np.abs(traj.a[0]) > np.linalg.norm(W0, axis=1)).all():
        out.append(f"the start is {cfg.init.scheme}: some |a_j| ≤ ‖w_j‖ (the paper's a_j = "
                   "±(‖w_j‖ + Exp(1)))")
    if (np.asarray(traj.y) == 0).any():
        out.append("a label is 0")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
def coverage_claim(runs: Sequence[Trajectory]) -> Claim:
    """[derived, (D1)] Each run interpolates exactly when its start covers every point."""
    rows, agree = [], 0
    fails: list[str] = []
    for tr in runs:
        cov, conv = start_covers(tr), interpolates(tr)
        agree += cov == conv
        rows.append({"seed": tr.config.seed, "start covers every point": cov,
                     "interpolates": conv, "L(end)/L(0)": float(tr.loss[-1] / tr.loss[0])})
        fails += [f"seed {tr.config.seed}: {f}" for f in setting_failures(tr)]
    both = {r["interpolates"] for r in rows} == {True, False}
    ok = agree == len(runs) and both and len(runs) >= 8
    return gate(Claim(
        _name("dana.coverage", runs[0]),
        "[derived] orthogonal data: the network interpolates exactly when, at t = 0, every "
        "point has a neuron of its label's sign active on it (the code's good initialisation)",
        f"{agree} of {len(runs)} runs agree", f"{len(runs)} of {len(runs)}, both outcomes seen",
        f"every run: interpolates (loss ≤ {CONVERGED:g} L(0)) ⇔ covered at t = 0; at least 8 "
        "runs with both outcomes", ok,
        "(D1): an uncovered point keeps its label as residual; a covered one is fitted since "
        "a_j never changes sign (|a_j| > ‖w_j‖ is conserved).", rows,
        justification="exact: the decoupling makes coverage a yes/no event; an uncovered "
        "point leaves at least L(0)/(4n) of the loss, far above the 1e-4 L(0) threshold",
        integrator=run_label(runs[0].config)), sorted(set(fails))[:3])


def coverage_counts(base: Config, seeds: Sequence[int]) -> tuple[int, float, float, list[dict[
        str, Any]]]:
    """(D2) over `seeds` of the data and start of `base` (no training): how many starts
    cover every point, the sum of the exact conditional probabilities P(covered | labels) and
    of their variances."""
    hits, mean, var = 0, 0.0, 0.0
    rows: list[dict[str, Any]] = []
    for s in seeds:
        cfg = base.with_updates({"seed": int(s)})
        ds = build_dataset(cfg)
        W, a = init_weights(cfg, ds.d)
        cov = bool(covered(ds.X, ds.y, W, a).all())
        npl = int((ds.y > 0).sum())
        p = coverage_probability(npl, ds.n - npl, cfg.model.width)
        hits += cov
        mean += p
        var += p * (1.0 - p)
        if len(rows) < 12:
            rows.append({"seed": int(s), "n₊": npl, "P(covered | labels)": p, "covered": cov})
    return hits, mean, var, rows


def probability_claim(base: Config, seeds: int = 2000, sims: Sequence[Trajectory] = ()
                      ) -> Claim:
    """[derived, (D2)] The share of starts that cover every point matches the exact
    probability (a Poisson-binomial count: |z| ≤ 4), and the trained runs `sims` succeed as
    often as their starts cover. Gated on the setting (orthogonal data, exp-margin start,
    no mirrored pairs: the formula assumes independent neurons)."""
    fails = []
    if not applies_to(base):
        fails.append("not orthogonal data with an exp-margin start")
    if base.init.mirror:
        fails.append("mirrored pairs (w_j, ±a_j): the neurons are not independent")
    return gate(_probability_claim(base, seeds, sims), fails)


def _probability_claim(base: Config, seeds: int, sims: Sequence[Trajectory]) -> Claim:
    """[derived, (D2)] The share of starts that cover every point matches the exact
    probability (a Poisson-binomial count: |z| ≤ 4), and the trained runs `sims` succeed as
    often as their starts cover."""
    hits, mean, var, rows = coverage_counts(base, range(seeds))
    z = (hits - mean) / math.sqrt(max(var, 1e-300))
    n, p = data_shape(base.data)[0], base.model.width
    rule = width_rule(1300, 0.05)
    sim_ok = all(start_covers(t) == interpolates(t) for t in sims)
    ok = abs(z) <= 4.0 and rule == NUMBERS["width_rule_1300"].value and sim_ok
    return Claim(
        f"dana.probability[{run_name(presets, base)}]",
        "[derived] the probability that the network interpolates is the probability that the "
        "start covers every point: exactly Σ (−1)^{a₊+a₋} C C [½(2^{−a₊} + 2^{−a₋})]^p, "
        "at least 1 − n(3/4)^p (the width rule p = ⌊log(n/ε)/log(4/3)⌋ + 1)",
        f"{hits} of {seeds} starts cover (z = {z:.2f}); width rule at n = 1300, ε = 0.05: "
        f"p = {rule}", f"{mean:.1f} expected; p = {NUMBERS['width_rule_1300'].value} (their "
        "runs)", "|z| ≤ 4 (a Poisson-binomial count); the width rule as in the code's "
        "output", ok,
        f"n = {n}, p = {p}: union bound {union_bound(n, p):.3f}; "
        f"{len(sims)} trained runs, each interpolating iff its start covers: {sim_ok}.", rows,
        justification="(D2) is exact; over 2000 independent starts the count has standard "
        f"deviation {math.sqrt(var):.1f}, so |z| > 4 has probability 6e-5 if it holds, while "
        "treating the points as independent (the per-point ¾ of the union bound) is off by "
        "tens of standard deviations",
        integrator="no training (the start only)" + (f"; {run_label(sims[0].config)}"
                                                     if sims else ""))


def jump_claim(small: Trajectory, smaller: Trajectory,
               tol: Tolerances | None = None) -> Claim:
    """[derived, (D3)] The exits t_j/ln(1/λ) at two scales agree (a jump process in
    t/ln(1/λ)), and at least two distinct jumps happen."""
    tol = {**TOLERANCES, **(tol or {})}
    l1 = math.log(1.0 / small.config.init.scale)
    l2 = math.log(1.0 / smaller.config.init.scale)
    e1, e2 = exits(small, tol["share"]), exits(smaller, tol["share"])
    common = sorted(set(e1) & set(e2))
    rows = [{"neuron": j, "t_j/ln(1/λ₁)": e1[j] / l1, "t_j/ln(1/λ₂)": e2[j] / l2}
            for j in common]
    rel = max((abs(r["t_j/ln(1/λ₁)"] - r["t_j/ln(1/λ₂)"]) / r["t_j/ln(1/λ₂)"] for r in rows),
              default=float("inf"))
    T = sorted(r["t_j/ln(1/λ₂)"] for r in rows)
    jumps = 1 + sum(1 for a, b in pairwise(T) if b > a * (1 + 2 * tol["jump_rel"]))
    major = set(exits(small, 0.05)) | set(exits(smaller, 0.05))  # the neurons that matter
    ok = major <= set(common) and bool(common) and rel <= tol["jump_rel"] and jumps >= 2
    return gate(Claim(
        _name("dana.jumps", smaller),
        "[derived] as the start shrinks the neurons switch on at times T_j ln(1/λ): a "
        "saddle-to-saddle jump process in t/ln(1/λ), one exit after another",
        f"largest relative change {rel:.3g}; {jumps} distinct jumps", f"≤ {tol['jump_rel']:g};"
        " ≥ 2", f"|Δ(t_j/ln(1/λ))| ≤ {tol['jump_rel']:.0%} between λ = "
        f"{small.config.init.scale:g} and {smaller.config.init.scale:g}, the same neurons "
        "switching on", ok,
        f"neurons switching on: {sorted(e1)} and {sorted(e2)}; exits at ‖θ_j‖ half way (log "
        "scale) between start and end.", rows,
        justification="(D3): t_j = T_j ln(1/λ) + O(1/r_j); the O(1) part is a few % of "
        "T_j ln(1/λ₁) at λ₁ = 1e-30; exits read between log-spaced frames (0.3 % apart)",
        integrator=run_label(smaller.config)), setting_failures(smaller))


def coverage_runs(run: Run, quick: bool, **upd: Any) -> list[Trajectory]:
    """The coverage preset on seeds 0..9 (quick) or 0..39."""
    base = presets(quick)["coverage"]
    return [run(base.with_updates({"seed": s, **upd})) for s in range(10 if quick else 40)]


def claims(quick: bool, run: Run) -> list[Claim]:
    runs = coverage_runs(run, quick)
    base = presets(quick)["coverage"]
    small = run(incremental_config(1e-30))
    smaller = run(incremental_config(1e-60))  # below the Explorer's slider: claim runs only
    return [coverage_claim(runs), probability_claim(base, 2000 if quick else 20000, runs),
            jump_claim(small, smaller)]


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """This run: whether its start covers every point and whether it interpolates."""
    cov, conv = start_covers(traj), interpolates(traj)
    c = gate(Claim(
        _name("dana.coverage", traj),
        "[derived] the network interpolates exactly when the start covers every point",
        f"covers: {cov}; interpolates: {conv}", "the same", "equal", cov == conv,
        justification="exact on orthogonal data (D1)", integrator=run_label(traj.config)),
        setting_failures(traj))
    return [c]


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """Each switching-on neuron's exit (detected) and the coverage of the start."""
    out = PaperOverlay()
    W0 = traj.W_at(0)
    if W0 is None:
        return out
    cov = covered(np.asarray(traj.X, float), np.asarray(traj.y, float), W0,
                  np.asarray(traj.a[0], float))
    ex = exits(traj, float(tol.get("share", 0.01)))
    for j, t in sorted(ex.items(), key=lambda kv: kv[1]):
        out.markers.append(TimeMarker(f"neuron {j} switches on", t, "detected",
                                      "Dana et al.: ‖θ_j‖ half way (log scale) to its end"))
    if len(ex) >= 2:
        t0, t1 = min(ex.values()), max(ex.values())
        out.phases.append(Phase("incremental learning", t0, t1, "detected",
                                f"{len(ex)} neurons switch on between t = {t0:.4g} and "
                                f"{t1:.4g} (Dana et al.)",
                                PHASE_TEXT["incremental learning"].plain))
    n, p = len(traj.y), traj.width
    npl = int((np.asarray(traj.y) > 0).sum())
    prob = coverage_probability(npl, n - npl, p)
    verb = "interpolates" if interpolates(traj) else "does not interpolate"
    out.notes.append(f"orthogonal data: {int(cov.sum())} of {n} points covered at t = 0 "
                     f"(exact P(all covered) = {prob:.3f} for p = {p}); the run {verb}")
    return out


# ----------------------------------------------------------------------------- figures
def _time(traj: Trajectory) -> np.ndarray:
    return np.maximum(np.asarray(traj.t, float), float(traj.t[1]) * 0.5)


def exits_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    """‖θ_j‖ of every neuron against t (log–log) with the loss, and the detected exits."""
    if not applies_to(traj.config):
        return None
    th = np.sqrt(np.asarray(traj.a, float) ** 2 + np.asarray(traj.norms, float) ** 2)
    t = _time(traj)
    ex = exits(traj)
    sign = ["positive" if traj.a[0, j] > 0 else "negative" for j in range(traj.width)]
    lines = tuple(Line(t, th[:, j], f"{sign[j]} neurons' ‖θ_j‖", "positive" if sign[j] ==
                       "positive" else "negative", width=1.5, group=sign[j],
                       hover=(f"neuron {j}",) * len(t)) for j in range(traj.width))
    rules = tuple(Rule(v, "x", f"neuron {j} switches on", "ink", "dot") for j, v in ex.items())
    # (the panel's title names the quantity: an axis title beside the wide log labels sat
    # inside the loss panel's plot area)
    norms = Panel("‖θ_j‖ of every neuron", Axis("t", "log"), Axis("", "log"), (*lines, *rules))
    loss = Panel("loss", Axis("t", "log"), Axis("loss"), (Line(t, traj.loss, "loss", "ink"),
                                                          *rules))
    return FigureSpec("One neuron after another", (loss, norms),
                      caption="Each neuron's ‖θ_j‖ = √(a_j² + ‖w_j‖²): from a small start the "
                      "neurons covering the most label mass leave the saddle at 0 first; the "
                      "loss drops at each exit.")


def probability_spec(rows: Sequence[dict[str, Any]], n: int) -> FigureSpec:
    """Success frequency against the width, with the exact coverage probability averaged over
    the labels' signs and the union bound."""
    ps = np.array([r["width"] for r in rows], float)
    freq = np.array([r["frequency"] for r in rows], float)
    k = np.array([r["runs"] for r in rows], float)
    se = np.sqrt(np.clip(freq * (1 - freq), 1e-12, None) / np.maximum(k, 1))
    grid = np.arange(1, int(ps.max()) + 1)
    exact = np.array([sum(math.comb(n, q) / 2**n * coverage_probability(q, n - q, int(p))
                          for q in range(n + 1)) for p in grid])
    panel = Panel(f"n = {n} orthogonal points", Axis("width p"), Axis("P(interpolates)",
                  range=(-0.02, 1.02)),
                  (Line(grid, exact, "exact P(start covers every point)", "theory"),
                   Line(grid, np.clip(np.array([union_bound(n, int(p)) for p in grid]), 0, 1),
                        "1 − n(3/4)^p (union bound)", "neutral", "dash"),
                   Points(ps, freq, "trained runs that interpolate", "ink",
                          hover=tuple(f"{int(a)} runs" for a in k)),
                   Line(ps, freq, "±1 s.e.", "ink", width=0.0, err_lo=se, err_hi=se)))
    return FigureSpec("Success probability against the width", (panel,),
                      caption="Runs that reach zero loss, against the exact probability that "
                      "the start covers every point (derived) and the union bound behind "
                      "the authors' width rule.")


def measure_probability(run: Run, quick: bool = True) -> list[dict[str, Any]]:
    """Trained runs of the coverage preset over widths and seeds: the share that
    interpolates."""
    base = presets(quick)["coverage"]
    out = []
    for p in (2, 4, 6, 8, 12) if quick else (2, 3, 4, 6, 8, 10, 12, 16):
        got = [interpolates(run(base.with_updates({"model.width": p, "seed": s,
                                                   "integrator.t_end": 800.0,
                                                   "record.frames": 20})))
               for s in range(12 if quick else 60)]
        out.append({"width": p, "frequency": float(np.mean(got)), "runs": len(got)})
    return out


def _load_probability(directory: Path) -> FigureSpec | None:
    import json

    f = directory / "dana_probability.json"
    if not f.is_file():
        return None
    try:
        rows = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    return probability_spec(rows, data_shape(presets(False)["coverage"].data)[0])


def _artifacts(quick: bool, run: Run) -> dict[str, str]:
    import json

    return {"dana_probability.json": json.dumps(measure_probability(run, quick))}


def measure_norms(run: Run, quick: bool = True) -> list[dict[str, Any]]:
    """‖θ(end)‖² of the runs that interpolate and the minimal ‖θ‖² (derived, ∝ √n), by n:
    16 neurons, small start (the follow-up's setting)."""
    out = []
    for n in (8, 16, 32) if quick else (8, 16, 32, 64):
        for s in range(4 if quick else 16):
            tr = run(config(n, 16, 1e-6, output_value=1e-6, t_end=6000.0, seed=s,
                            frames=20).with_updates({"data.d": 64}))
            if interpolates(tr):
                out.append({"n": n, "seed": s, "theta_sq": float(
                    (tr.a[-1] ** 2 + tr.norms[-1] ** 2).sum()), "min_norm_sq": min_norm_sq(tr)})
    return out


def norm_spec(rows: Sequence[dict[str, Any]]) -> FigureSpec:
    """log ‖θ(end)‖² against log n with the minimal ‖θ‖² and the fitted slope."""
    n = np.array([r["n"] for r in rows], float)
    th = np.array([r["theta_sq"] for r in rows], float)
    mn = np.array([r["min_norm_sq"] for r in rows], float)
    slope = float(np.polyfit(np.log(n), np.log(th), 1)[0]) if len(set(n)) > 1 else float("nan")
    order = np.argsort(n)
    ticks = tuple(float(v) for v in sorted(set(n)))
    panel = Panel("‖θ‖² at the end", Axis("n", "log", tickvals=ticks,
                                          ticktext=tuple(f"{v:g}" for v in ticks)),
                  Axis("‖θ‖²", "log"),
                  (Points(n, th, f"runs that interpolate (fitted slope {slope:.2f})", "ink"),
                   Points(n[order], mn[order], "minimal ‖θ‖² of an interpolator (∝ √n)",
                          "theory", "diamond", 7)))
    return FigureSpec("‖θ‖² against n", (panel,),
                      caption="The follow-up's claim: ‖θ‖² ∝ √n (slope ½), within a constant "
                      "factor of the minimal interpolator (derived: 2V*/c).")


def report_figure(quick: bool = True) -> ReportFigure:
    return ReportFigure(incremental_config(), loss_and_series(
        "dana", "‖θ_j‖", lambda tr: {f"‖θ_{j}‖": np.sqrt(tr.a[:, j] ** 2 + tr.norms[:, j] ** 2)
                                     for j in range(min(tr.width, 8))}))


# ----------------------------------------------------------------------------- sweeps
def _interp(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    return float(interpolates(tr)) if applies_to(tr.config) else float("nan")


def _covers(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    return float(start_covers(tr)) if applies_to(tr.config) else float("nan")


def _theta_ratio(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    if not applies_to(tr.config) or not interpolates(tr):
        return float("nan")
    return float((tr.a[-1] ** 2 + tr.norms[-1] ** 2).sum()) / min_norm_sq(tr)


SUMMARIES = (
    Summary("dana_interpolates", "Dana et al.: 1 when the run reaches zero loss (orthogonal "
            "data, exp-margin start)", _interp),
    Summary("dana_covered", "Dana et al.: 1 when every point has a neuron of its sign active "
            "on it at t = 0", _covers),
    Summary("dana_norm_ratio", "Dana et al.: ‖θ(end)‖² over the minimal ‖θ‖² of an "
            "interpolator (NaN when the run does not interpolate)", _theta_ratio),
)


def _sweep_success(quick: bool) -> dict[str, Any]:
    base = config(t_end=800.0).to_dict()
    base["data"]["d"] = 32
    base["record"] = {"frames": 20, "t_first": 0.1}
    return {"name": "success probability vs (n, width)",
            "description": "Orthogonal data: the share of seeds that reach zero loss, by the "
                           "number of points n and the width p — it follows the exact "
                           "probability that the start covers every point (Dana et al.'s good "
                           "initialisation); the width needed grows like log n.",
            "base": base,
            "axes": [{"field": "data.n", "values": [4, 16] if quick else [4, 8, 16, 32]},
                     {"field": "model.width", "values": [2, 4, 8, 16] if quick
                      else [2, 3, 4, 6, 8, 10, 12, 16, 20]}],
            "seeds": 4 if quick else 60, "record": ["final_loss", "dana_interpolates",
                                                    "dana_covered"]}


def _sweep_norm(quick: bool) -> dict[str, Any]:
    base = config(n=8, width=16, scale=1e-6, output_value=1e-6, t_end=6000.0).to_dict()
    base["data"]["d"] = 64
    base["record"] = {"frames": 20, "t_first": 1.0}
    return {"name": "‖θ‖² vs n",
            "description": "Orthogonal data, 16 neurons, small start: ‖θ(end)‖² of the runs "
                           "that interpolate over the minimal ‖θ‖² (∝ √n), by n — a constant "
                           "factor (the follow-up's ‖θ‖² ∝ √n).",
            "base": base, "axes": [{"field": "data.n", "values": [8, 16, 32] if quick
                                    else [8, 16, 32, 64]}],
            "seeds": 4 if quick else 16, "record": ["final_loss", "theta_sq",
                                                    "dana_interpolates", "dana_norm_ratio"]}


# ----------------------------------------------------------------------------- experiments
EXPERIMENTS = {
    "coverage": (
        Experiment("seed", "Another start (seed 6)", {"seed": 6},
                   "Whether the loss reaches zero is decided at t = 0: count the points that "
                   "have a neuron of their label's sign active on them — if one has none, "
                   "its error never moves.", "dana.coverage"),
        Experiment("wider", "Twice the width: p = 12", {"model.width": 12},
                   "More neurons cover more points: most seeds now interpolate (exact "
                   "probability 0.79 against 0.25 at p = 6).", "dana.probability"),
        Experiment("leaky", "Leaky ReLU γ = 0.1", {"model.gamma": 0.1},
                   "Inactive neurons now move too, so an uncovered point can still be "
                   "fitted: the paper's setting (ReLU) is left and the claim becomes an "
                   "illustration.", "dana.coverage"),
    ),
    "incremental": (
        Experiment("larger", "Larger start: λ = 10⁻⁶",
                   {"init.scale": 1e-6, "init.output_value": 1e-6,
                    "integrator.t_end": 3000.0},
                   "The exits come sooner (at T_j ln(1/λ)) and closer together in t/ln(1/λ):"
                   " the jumps blur into each other.", "dana.jumps"),
        Experiment("seed", "Another data set (seed 2)", {"seed": 2},
                   "Four neurons switch on at three different times: one exit per saddle, "
                   "in the order of the label mass each one covers.", "dana.jumps"),
    ),
}


PAPER = Paper(
    key="dana",
    order=50,
    title="Dana, Bach & Pillaud-Vivien (NeurIPS 2025, 2026) — few neurons on orthogonal data",
    short="Dana et al. 2025",
    text=(
        "Orthogonal inputs, square loss, f = (1/p) Σⱼ aⱼ σ(⟨wⱼ, x⟩) with aⱼ = ±(‖wⱼ‖ + Exp(1)). "
        "Each point only talks to the neurons active on it, so the run **interpolates "
        "exactly when the start covers every point** with a neuron of its label's sign: a "
        "width of order **log n** suffices with high probability. From a small start the "
        "neurons **switch on one at a time**, each leaving the saddle at 0 at a time "
        "proportional to ln(1/λ): a saddle-to-saddle jump process. Below: each neuron's "
        "‖θⱼ‖ with its exit, and the success probability against the width."),
    presets=presets,
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    phase_text=PHASE_TEXT,
    applies_to=applies_to,
    tolerances=TOLERANCES,
    report_figure=report_figure,
    numbers=NUMBERS,
    summaries=SUMMARIES,
    sections=(
        Section("One neuron after another", "‖θⱼ‖ of every neuron: exits (dotted) one after "
                "another, each with a drop of the loss.", exits_figure),
        StudySection("Success probability against the width",
                     "Trained runs reaching zero loss against the exact probability that the "
                     "start covers every point.", _load_probability,
                     lambda run: probability_spec(measure_probability(run, True), 8),
                     "Run the quick width study",
                     "No reproduction file in reports/ (`python -m dynamics reproduce dana` "
                     "writes it). The quick study is 60 small runs, a few seconds."),
        StudySection("‖θ‖² against n", "The squared norm of the interpolators found from a "
                     "small start, and the minimal one, by n.", lambda _d: None,
                     lambda run: norm_spec(measure_norms(run, True)), "Run the quick norm study",
                     "12 small runs, a few seconds."),
    ),
    artifacts=_artifacts,
    experiments=EXPERIMENTS,
    knobs=(
        Knob("width", "width p (hidden neurons)", "model.width", min_value=1, max_value=64,
             step=1, convert=int, back=int,
             help="Hidden neurons; of order log n suffice when they cover the data."),
        Knob("seed", "seed", "seed", min_value=0, max_value=10_000, step=1, convert=int,
             back=int, help="Another draw of the data and the start."),
    ),
    preset_titles={
        "incremental": "Orthogonal data, tiny start · one neuron switches on at a time",
        "coverage": "Orthogonal data, few neurons · coverage decides interpolation",
    },
    showcases=(
        Showcase("incremental", "Dana et al. 2025 · one neuron at a time",
                 "Orthogonal data from a tiny start: neurons switch on one after another, the "
                 "loss steps down at each."),
    ),
    comparisons={
        "dana_coverage": Comparison(
            "Orthogonal data: a start that covers every point vs one that does not",
            "The same data and width; seed 4's start covers every point and interpolates, "
            "seed 0's leaves a point uncovered and its error never moves.",
            config(seed=4), config(seed=0)),
    },
    builtin_sweeps=(
        BuiltinSweep("dana_success_vs_width", "Success probability against the width",
                     "Dana, Bach & Pillaud-Vivien (2025)",
                     "a width of order log n suffices with high probability",
                     _sweep_success),
        BuiltinSweep("dana_norm_vs_n", "‖θ‖² against n over the minimal norm",
                     "Dana et al. (2026 follow-up)",
                     "‖θ‖² ∝ √n, within a constant factor of the minimal ℓ2 interpolator",
                     _sweep_norm),
    ),
)

# `fmt` is part of the claims' vocabulary here too
__all__ = ["PAPER", "coverage_probability", "covered", "exits", "fmt", "width_rule"]
