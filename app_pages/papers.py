"""Papers: a section per paper — its claim in plain words, the knobs that matter (bound to the
URL), its preset run with the right theory overlays, and the claims table (measured vs expected,
tolerance, pass/fail), computed through the service, with a CSV download.

Thin: presets (dynamics.scenarios) + knobs → Config → service (ui.runner) → figures (viz).
URL: `paper`, `<paper>.preset`, `<paper>.<knob>`, `view.presenter`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dynamics import scenarios, theory
from dynamics.config import Config, ConfigError
from dynamics.trajectory import Trajectory
from ui import downloads, presenter, runner, state
from ui.state import ViewOptions
from viz.paper_figures import three_point_fit_figure

PREFIX = "pp"
PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": False}
TITLES = {
    "min": "Min, Mallada & Vidal (ICLR 2024) — early neuron alignment with small initialisation",
    "wang_ma": "Wang & Ma (NeurIPS 2023) — multi-phase dynamics of ReLU networks",
    "chistikov": "Chistikov, Englert & Lazić (NeurIPS 2023) — learning a neuron, implicit bias",
    "boursier": "Boursier & Flammarion (JMLR 2025) — early alignment is a two-edged sword",
}
SHORT = {"min": "Min et al.", "wang_ma": "Wang & Ma", "chistikov": "Chistikov et al.",
         "boursier": "Boursier & Flammarion"}
CLAIMS_TEXT = {
    "min": (
        "Binary classification, exponential or logistic loss summed over the data, both layers "
        "trained from a balanced start of scale ε. For a time T ≈ log(1/(√h ε))/(4 n X_max) "
        "the norms stay O(ε) while every neuron turns: those with aⱼ > 0 toward the cone S₊ "
        "of the class sum **x₊** = Σ_{yᵢ=+1} xᵢ, those with aⱼ < 0 toward **x₋**. Then the "
        "loss falls, and the final first layer is low-rank (stable rank ≤ 2). Overlays: x₊ "
        "and x₋ (grey dash-dot), extremal vectors, and T (dashed line)."),
    "wang_ma": (
        "Two signals x₊, x₋ at a small angle, exponential loss, the output layer frozen. "
        "Training goes through **four phases** (alignment/condensation, then phases where "
        "neurons change which signals they activate, ending in a max-margin-like solution). "
        "**The paper's phase-time formulas are not available to us** (only the reviewers' "
        "description): this section shows the phases *detected* in the run, with the rule "
        "that detected each, and no predicted times."),
    "chistikov": (
        "A teacher neuron v* and correlated inputs, square loss, balanced start of scale λ. "
        "Phase 1: positive neurons align to **γ_[n]** = (1/n) Σᵢ yᵢ xᵢ (cos ≥ 1 − λ^ε) and "
        "negative neurons deactivate, in time ≈ ln(1/λ)/‖γ_[n]‖. Phase 2: they grow and "
        "converge to the rank-1 solution aligned with **v***: nuclear norm of W → ‖v*‖, and "
        "‖θ‖² → 2. The final angle spread scales like λ. Overlays: γ_[n] (green) and v* "
        "(black long dash), the time scale (dashed line)."),
    "boursier": (
        "Three points in 1-D with a bias, square loss, ReLU, balanced start of scale λ = 10⁻³. "
        "Early alignment sends all useful neurons to the single extremal vector (polar angle "
        "111.2°) and the network gets **stuck at the least-squares fit** — a spurious "
        "stationary point whose loss we compute exactly. A large start (λ = 1), a leaky ReLU "
        "or an unbalanced start **escapes** and reaches zero loss. Overlays: extremal vectors, "
        "the least-squares direction, the OLS loss level; below, h(x) against the "
        "least-squares line."),
}
EPS_OPTIONS = ["preset", "1e-20", "1e-12", "1e-8", "1e-6", "1e-4", "1e-3", "1e-2", "0.1", "1"]


def _knobs(paper: str) -> dict[str, Any]:
    """The paper's widgets (bound to the URL); returns config updates for the preset."""
    upd: dict[str, Any] = {}
    c1, c2, c3 = st.columns(3)
    if paper in ("min", "boursier"):
        with c1:
            eps = st.select_slider("init scale ε (λ)", options=EPS_OPTIONS, value="preset",
                                   key=f"{paper}.eps", bind="query-params",
                                   help="'preset': the paper's value. Smaller: longer alignment.")
        if eps != "preset":
            upd["init.scale"] = float(eps)
        with c2:
            width = st.number_input("width m (0: preset)", min_value=0, max_value=2000,
                                    value=0, step=10, key=f"{paper}.width",
                                    bind="query-params")
        if width:
            upd["model.width"] = int(width)
        with c3:
            gamma = st.number_input("leaky slope γ (−1: preset)", min_value=-1.0,
                                    max_value=1.0, value=-1.0, step=0.05, format="%g",
                                    key=f"{paper}.gamma", bind="query-params")
        if gamma >= 0:
            upd["model.gamma"] = float(gamma)
    elif paper == "chistikov":
        with c1:
            k = st.select_slider("λ = 4^k, k =", options=list(range(-9, -1)), value=-6,
                                 key="chistikov.log4_lambda", bind="query-params",
                                 help="Chistikov et al.'s init scale λ (Table 1 uses 4⁻⁴…4⁻⁸).")
        upd["init.scale"] = 4.0 ** int(k)
        with c2:
            seed = st.number_input("seed", min_value=0, max_value=999, value=0, step=1,
                                   key="chistikov.seed", bind="query-params")
        upd["seed"] = int(seed)
    elif paper == "wang_ma":
        with c1:
            ang = st.number_input("angle between x₊ and x₋ (°)", min_value=1.0,
                                  max_value=89.0, value=17.19, step=1.0, format="%g",
                                  key="wang_ma.angle", bind="query-params")
        upd["data.angle_deg"] = float(ang)
        with c2:
            std = st.select_slider("first-layer init std", key="wang_ma.std",
                                   options=["1e-5", "1e-4", "1e-3", "1e-2"], value="1e-3",
                                   bind="query-params")
        upd["init.scale"] = float(std)
    return upd


def _claims_table(df: pd.DataFrame) -> None:
    show = df.drop(columns=["passed"], errors="ignore")
    st.dataframe(show, hide_index=True, width="stretch",
                 column_config={"statement": st.column_config.TextColumn(width="large"),
                                "details": st.column_config.TextColumn(width="medium")})


def _full_checks(paper: str) -> None:
    """The paper's claims on its own presets (fast versions), through the service."""
    key = f"{PREFIX}.claims.{paper}"
    st.markdown("**Claims on the paper's presets** (fast versions, all runs through the "
                "cached service)")
    if st.button("Check the claims", key=f"{PREFIX}.check.{paper}", icon=":material/checklist:",
                 type="primary" if key not in st.session_state else "secondary"):
        service = runner.get_service()
        status = st.status("Running the presets…", expanded=False)
        n = {"runs": 0}

        def run(cfg: Config) -> Trajectory:
            n["runs"] += 1
            status.update(label=f"Run {n['runs']}: {cfg.data.kind}, m = {cfg.model.width}, "
                                f"ε = {cfg.init.scale:.2g}…")
            return service.run(cfg)

        try:
            claims = scenarios.check_claims(paper, fast=True, run=run)
        except Exception as e:  # a failed check is a message, not a stack trace
            status.update(label="The check failed", state="error")
            st.error(f"The claims could not be checked: {type(e).__name__}: {e}")
            return
        status.update(label=f"{n['runs']} runs done", state="complete")
        st.session_state[key] = downloads.claims_table(claims)
    df = st.session_state.get(key)
    if df is None:
        st.caption("Press the button to run them (a few seconds when cached, up to a minute "
                   "the first time).")
        return
    n_pass = int((df["result"] == "pass").sum())
    n_fail = int((df["result"] == "FAIL").sum())
    st.caption(f"{n_pass} pass · {n_fail} fail · {len(df) - n_pass - n_fail} shown only")
    _claims_table(df)
    st.download_button("Claims table (.csv)", data=downloads.claims_csv(df),
                       file_name=f"claims_{paper}.csv", mime="text/csv",
                       key=f"{PREFIX}.csv.{paper}", on_click="ignore", icon=":material/table:")


def _paper_selector() -> str:
    """The paper, bound to the URL's `paper` by hand (a bound widget with format_func would
    put the label, not the id, in the URL). The URL wins when it changed from outside (a link,
    the Overview's buttons); the widget wins otherwise."""
    ss = st.session_state
    k, k_url = f"{PREFIX}.paper", f"{PREFIX}._paper_url"
    url = st.query_params.get("paper")
    if url is not None and url != ss.get(k_url):
        if url in TITLES:
            ss[k] = url
        else:
            st.warning(f"Unknown paper {url[:40]!r} in the link: showing {SHORT['min']}. "
                       f"Choose one of {', '.join(TITLES)}.")
            ss[k] = "min"
    ss.setdefault(k, "min")
    paper = st.segmented_control("Paper", options=list(TITLES), format_func=SHORT.get,
                                 required=True, key=k) or "min"
    if st.query_params.get("paper") != paper:
        st.query_params["paper"] = paper
    ss[k_url] = paper
    return paper


# ----------------------------------------------------------------------------- the page
on = st.toggle("Presenter mode", key=presenter.PARAM, bind="query-params",
               help="Hides the controls and enlarges text and figures, for a projector.")
presenter.apply_presenter(on, on_exit=presenter.session_flag_off, args=(presenter.PARAM,))
raw_params = st.query_params.to_dict()

st.title("The papers")
paper = _paper_selector()
st.subheader(TITLES[paper])
st.markdown(CLAIMS_TEXT[paper])

P = scenarios.presets(fast=True)[paper]
names = list(P)
preset = st.selectbox("Preset", options=names, key=f"{paper}.preset", bind="query-params")
updates = _knobs(paper)
bad = [f"{k}={v!r}" for k, v in raw_params.items()
       if k in st.session_state and k not in (presenter.PARAM, "paper")
       and str(st.query_params.get(k, "")) != str(v)]
if bad:
    st.warning("Some link parameters could not be used and were reset: " + ", ".join(bad))

try:
    config = P[preset or names[0]].with_updates(updates) if updates else P[preset or names[0]]
except (ConfigError, ValueError) as e:
    st.error(f"These knobs give an invalid run: {e}")
    st.stop()

view = ViewOptions(presenter=on)
got = runner.run_and_analyse(config, prefix=PREFIX)
if got is not None:
    traj, analysis = got
    fig = runner.figure_for(traj, analysis, view)
    presenter.chart(fig, key=f"papers_figure_{paper}", presenter=on, config=PLOTLY_CONFIG)
    if paper == "wang_ma":
        st.info("Phase-time formulas of Wang & Ma are **not available**: the bands are phases "
                "*detected* in this run (hover a band for its rule); no dashed predicted times.")
    if config.data.kind == "three_point":
        fit = theory.ols_fit(config)
        st.plotly_chart(three_point_fit_figure(traj, fit.beta, fit.loss, presenter=on),
                        theme=None, config=PLOTLY_CONFIG, key=f"papers_fit_{paper}")
    checks = scenarios.claims_for_run(traj, paper)
    if checks:
        st.markdown("**This run** (current knobs)")
        _claims_table(downloads.claims_table(checks))
    c1, c2 = st.columns([1, 3])
    with c1:
        if st.button("Open in Explorer", key=f"{PREFIX}.open.{paper}", icon=":material/explore:"):
            state.open_in_explorer(config, view)
    with c2:
        st.caption("The Explorer opens with this run's full settings in its URL, to change "
                   "anything else.")
    with st.expander("Download this run", expanded=False):
        downloads.download_panel(traj, fig, checks or None, key=f"{PREFIX}.{paper}")

_full_checks(paper)

with st.expander("Share this view", expanded=False):
    st.caption("Copy this link (icon at its right): it reopens this paper with these knobs"
               + (", in presenter mode." if on else "."))
    st.code(state.share_link(st.query_params.to_dict()), language=None, wrap_lines=True)
