"""Compare: two runs side by side on one time grid with one cursor, and a table of what differs.

Thin: presets and the two control panels → two Configs → service (ui.runner) → figure
(viz.compare). Both configs and the display options live in the URL: `preset=<name>`, and for
a side that differs from its preset every setting that differs from the defaults with the
prefix `a.` or `b.` (`a.model.gamma=0.05`), plus `view.time_axis`, `view.radius`. A link
therefore reopens both runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dynamics.annotations import Analysis
from dynamics.config import Config, config_from_query
from dynamics.trajectory import Trajectory
from ui import controls, runner, state
from viz.compare import compare_figure, difference_rows

PA, PB = "cmp.a", "cmp.b"  # widget/session prefixes of the two control panels
URL_SIDES = {PA: "a.", PB: "b."}
PRESET_KEY = "cmp.preset"
VIEW_KEYS = {"time_axis": "cmp.view.time_axis", "radius": "cmp.view.radius",
             "presenter": "cmp.view.presenter"}
PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": False,
                 "modeBarButtonsToRemove": ["lasso2d", "select2d", "autoScale2d"],
                 "toImageButtonOptions": {"format": "png", "filename": "early-alignment-compare",
                                          "scale": 2, "width": 1500, "height": 700}}


@dataclass(frozen=True)
class Preset:
    title: str
    note: str
    a: dict[str, Any]
    b: dict[str, Any]


def _three_point(**over: Any) -> dict[str, Any]:
    """Boursier & Flammarion's Section 5 data. Their GD (lr 1e-3 on MSELoss(mean), twice our
    ½-square mean loss) makes the same iterates as our GD with lr 2e-3; our t is 2× theirs."""
    d: dict[str, Any] = {
        "data": {"kind": "three_point"}, "model": {"width": 200},
        "loss": {"kind": "square", "reduction": "mean"},
        "init": {"scheme": "balanced", "scale": 1e-3, "normalisation": "sqrt_m"},
        "integrator": {"method": "gd", "lr": 2e-3, "t_end": 600.0, "max_steps": 5_000_000},
        "record": {"frames": 100, "t_first": 0.02}}
    for path, v in over.items():
        sec, key = path.split("__")
        d[sec] = {**d[sec], key: v}
    return d


def _min_toy(**over: Any) -> dict[str, Any]:
    """Min et al.'s Appendix A.1-style toy data in R² (exponential loss, sum), α = 1e-6."""
    d: dict[str, Any] = {
        "data": {"kind": "points", "angles_deg": [10.0, 60.0, 200.0, 250.0],
                 "radii": [1.0, 0.8, 1.0, 0.9], "labels": [1.0, 1.0, -1.0, -1.0]},
        "model": {"width": 50}, "loss": {"kind": "exponential", "reduction": "sum"},
        "init": {"scheme": "balanced", "scale": 1e-6, "normalisation": "none"},
        "integrator": {"method": "gf", "t_end": 30.0, "rtol": 1e-7},
        "record": {"frames": 150, "t_first": 1e-3}}
    for path, v in over.items():
        sec, key = path.split("__")
        d[sec] = {**d[sec], key: v}
    return d


PRESETS: dict[str, Preset] = {
    "bf_leaky": Preset(
        "Trapped vs escaping: balanced ReLU vs leaky γ = 0.05 (three points)",
        "Boursier & Flammarion's three points, m = 200, λ = 1e-3. The ReLU network stays on "
        "the least-squares line (a spurious stationary point, loss ≈ 0.0875); the leaky one "
        "leaves that plateau (reference runs: their t ≈ 100–135, our t ≈ 200–270, since "
        "their MSELoss(mean) is twice our loss) and reaches zero loss.",
        _three_point(), _three_point(model__gamma=0.05)),
    "bf_gaussian": Preset(
        "Balanced vs unbalanced Gaussian initialisation (three points)",
        "The same data and ReLU. Balanced |a_j| = ‖w_j‖ is conserved, so negative neurons "
        "shrink to zero and nothing can leave the least-squares line; with independent "
        "Gaussian a_j and w_j some neurons keep a usable norm and later escape.",
        _three_point(), _three_point(init__scheme="gaussian")),
    "rich_lazy": Preset(
        "Small vs large initialisation (rich vs lazy)",
        "Four points in the plane, square loss, m = 50. From ε = 1e-6 the neurons align to a "
        "few directions long before they grow; from ε = 1 they grow at once, scattered, and "
        "the loss falls immediately.",
        {"init": {"scale": 1e-6}, "integrator": {"t_end": 100.0}},
        {"init": {"scale": 1.0}, "integrator": {"t_end": 100.0}}),
    "relu_leaky": Preset(
        "ReLU vs leaky ReLU γ = 0.2 (Min et al.'s toy data)",
        "Exponential loss, α = 1e-6. With ReLU, neurons that see no data stay dead; with a "
        "leaky slope every neuron keeps a gradient and turns.",
        _min_toy(), _min_toy(model__gamma=0.2)),
    "output_layer": Preset(
        "Trained vs fixed output layer (Min et al. A.5)",
        "Both layers trained: directions change while norms stay flat, then norms grow. Only "
        "W trained, a_j = ±1/√m fixed: no two-phase picture (Min et al., Appendix A.5).",
        _min_toy(),
        _min_toy(model__train_output=False, init__scheme="fixed_output",
                 init__output_value=1.0, init__output_norm="sqrt_m")),
}
DEFAULT_PRESET = "bf_leaky"


def preset_configs(name: str) -> tuple[Config, Config]:
    """The two configs of a preset (validated)."""
    p = PRESETS[name]
    base = Config().to_dict()

    def build(over: dict[str, Any]) -> Config:
        d = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
        for sec, val in over.items():
            if sec == "data":
                d["data"] = dict(val)
            elif isinstance(val, dict):
                d[sec] = {**d[sec], **val}
            else:
                d[sec] = val
        return Config.from_dict(d)

    return build(p.a), build(p.b)


# ----------------------------------------------------------------------------- URL ⇄ state
def _seed_side(prefix: str, config: Config, view: state.ViewOptions,
               warnings: list[str] | None = None) -> None:
    """Make `control_panel(prefix)` (re)seed its widgets from `config` on its next draw."""
    ss = st.session_state
    ss[f"{prefix}._config"], ss[f"{prefix}._view"] = config, view
    ss[f"{prefix}._url_warnings"] = list(warnings or [])
    ss[f"{prefix}._fresh"] = True


def state_from_params(params: dict[str, str]) -> tuple[str, Config, Config,
                                                        state.ViewOptions, list[str]]:
    """(preset, config A, config B, view, warnings) from URL parameters; never raises."""
    warnings: list[str] = []
    preset = params.get("preset", DEFAULT_PRESET)
    if preset not in PRESETS:
        warnings.append(f"ignored preset={preset[:40]!r}: not a preset of this page")
        preset = DEFAULT_PRESET
    cfgs = list(preset_configs(preset))
    view_params: dict[str, str] = {}
    unknown = []
    for k, v in params.items():
        if k.startswith(state.VIEW_PREFIX):
            view_params[k[len(state.VIEW_PREFIX):]] = v
        elif k != "preset" and not k.startswith(("a.", "b.")):
            unknown.append(k)
    for k in unknown:
        warnings.append(f"ignored {k}: not a setting of this page (use a. or b. prefixes)")
    for i, side in enumerate(("a.", "b.")):
        sub = {k[len(side):]: v for k, v in params.items() if k.startswith(side)}
        if sub:
            cfg, w = config_from_query(sub)
            cfgs[i] = cfg
            warnings += [f"{side[0].upper()}: {x}" for x in w]
    view, vw = state.view_from_query(view_params)
    return preset, cfgs[0], cfgs[1], view, warnings + vw


def params_from_state(preset: str, a: Config, b: Config, view: state.ViewOptions
                      ) -> dict[str, str]:
    """The short URL parameters: the preset, each side that differs from it, the view."""
    pa, pb = preset_configs(preset)
    out: dict[str, str] = {}
    if preset != DEFAULT_PRESET:
        out["preset"] = preset
    for side, cfg, ref in (("a.", a, pa), ("b.", b, pb)):
        if cfg != ref:
            q = {"data.kind": cfg.data.kind, **cfg.to_query()}  # never empty
            out.update({side + k: v for k, v in q.items()})
    out.update(state.view_to_query(view))
    return out


def _load_url_once() -> list[str]:
    ss = st.session_state
    if f"{PA}._config" in ss and PRESET_KEY in ss:
        return list(ss.get("cmp._url_warnings", []))
    params = {k: (v[-1] if isinstance(v, list) and v else v)
              for k, v in st.query_params.to_dict().items()}
    preset, a, b, view, warnings = state_from_params(params)
    _seed_side(PA, a, view)
    _seed_side(PB, b, view)
    ss[PRESET_KEY] = preset
    ss[VIEW_KEYS["time_axis"]] = view.time_axis
    ss[VIEW_KEYS["radius"]] = view.radius
    ss[VIEW_KEYS["presenter"]] = view.presenter
    ss["cmp._url_warnings"] = warnings
    return warnings


def _apply_preset() -> None:
    """Preset picked: both sides start from its configs (widgets reseeded)."""
    ss = st.session_state
    a, b = preset_configs(ss[PRESET_KEY])
    view = ss.get(f"{PA}._view", state.ViewOptions())
    _seed_side(PA, a, view)
    _seed_side(PB, b, view)
    ss["cmp._url_warnings"] = []


def _sync_url(params: dict[str, str]) -> None:
    current = {k: (v[-1] if isinstance(v, list) and v else v)
               for k, v in st.query_params.to_dict().items()}
    if current != params:
        st.query_params.from_dict(params)


# ----------------------------------------------------------------------------- figure cache
@st.cache_resource(max_entries=16, show_spinner=False)
def _figure(key: str, _a: Trajectory, _b: Trajectory, _aa: Analysis | None,
            _ab: Analysis | None, time_axis: str, radius: str, presenter: bool) -> go.Figure:
    return compare_figure(_a, _b, _aa, _ab, ("A", "B"), time_axis=time_axis,  # type: ignore
                          radius=radius, presenter=presenter)  # type: ignore[arg-type]


def _traj_key(tr: Trajectory) -> str:
    return f"{tr.config.cache_key()}:{tr.status}:{tr.n_frames}"


# ----------------------------------------------------------------------------- page
url_warnings = _load_url_once()
ss = st.session_state

try:
    from ui.presenter import apply_presenter, chart, fill_screen, session_flag_off
except ImportError:  # pragma: no cover - presenter mode is optional
    apply_presenter = chart = fill_screen = session_flag_off = None  # type: ignore[assignment]

presenter_on = bool(ss.get(VIEW_KEYS["presenter"], False))
if apply_presenter is not None:
    apply_presenter(presenter_on, on_exit=session_flag_off, args=(VIEW_KEYS["presenter"],))

with st.sidebar:
    st.selectbox("Preset pair", options=list(PRESETS), key=PRESET_KEY,
                 format_func=lambda k: PRESETS[k].title, on_change=_apply_preset,
                 help="Picks both configurations; edit either side below.")
    c1, c2 = st.columns(2)
    with c1:
        time_axis = st.radio("time axis", ["log", "linear"], key=VIEW_KEYS["time_axis"],
                             horizontal=True)
    with c2:
        radius = st.radio("radius", ["normalised", "log"], key=VIEW_KEYS["radius"],
                          horizontal=True, format_func={"normalised": "‖w‖/max",
                                                        "log": "log ‖w‖"}.get)
    st.toggle("presenter mode (large text)", key=VIEW_KEYS["presenter"])
    tab_a, tab_b = st.tabs(["Run A", "Run B"])
    with tab_a:
        panel_a = controls.control_panel(PA, display=False)
    with tab_b:
        panel_b = controls.control_panel(PB, display=False)

view = state.ViewOptions(radius=radius, time_axis=time_axis,
                         presenter=bool(ss[VIEW_KEYS["presenter"]]))
preset = ss[PRESET_KEY]

st.markdown("### Compare two runs")
st.caption("Two configurations on **one time grid with one cursor**: at each time each run "
           "shows its last recorded frame. Triangles and thin lines on the time panels mark "
           "each run's detected phase changes (hover for names); the table lists them.")
st.markdown(f"**{PRESETS[preset].title}.** {PRESETS[preset].note}")
if url_warnings:
    st.warning("Some link parameters could not be used and were replaced by the preset's "
               "values:\n\n" + "\n".join(f"- {w}" for w in url_warnings))

problems = [(lab, p) for lab, p in (("A", panel_a), ("B", panel_b)) if not p.ok]
for lab, p in problems:
    assert p.error is not None
    st.error(f"**Run {lab}** — " + controls.error_summary(p.error))

if not problems:
    cfg_a, cfg_b = panel_a.config, panel_b.config
    assert cfg_a is not None and cfg_b is not None
    edited = [lab for lab, cfg, ref in (("A", cfg_a, preset_configs(preset)[0]),
                                        ("B", cfg_b, preset_configs(preset)[1])) if cfg != ref]
    if edited:
        st.caption(f"Edited from the preset: run {' and '.join(edited)}.")
    params = params_from_state(preset, cfg_a, cfg_b, view)
    _sync_url(params)
    traj_a = runner.run_config(cfg_a, prefix=PA)
    traj_b = runner.run_config(cfg_b, prefix=PB) if traj_a is not None else None
    if traj_a is not None and traj_b is not None:
        for lab, tr in (("A", traj_a), ("B", traj_b)):
            if tr.status != "completed":
                st.warning(f"Run {lab}: **{tr.status}** — {tr.message}")
        an_a, prob_a = runner.analyse(traj_a)
        an_b, prob_b = runner.analyse(traj_b)
        for lab, prob in (("A", prob_a), ("B", prob_b)):
            if prob:
                st.warning(f"Phase detection is unavailable for run {lab}: {prob}")
        cacheable = {traj_a.status, traj_b.status} <= {"completed", "diverged", "max_steps"}
        if cacheable:
            fig = _figure(f"{_traj_key(traj_a)}|{_traj_key(traj_b)}", traj_a, traj_b, an_a,
                          an_b, view.time_axis, view.radius, view.presenter)
        else:
            fig = compare_figure(traj_a, traj_b, an_a, an_b, ("A", "B"),
                                 time_axis=view.time_axis,  # type: ignore[arg-type]
                                 radius=view.radius,  # type: ignore[arg-type]
                                 presenter=view.presenter)
        if chart is not None and fill_screen is not None:
            shown = fill_screen(go.Figure(fig)) if view.presenter else fig
            chart(shown, key="compare_figure", presenter=view.presenter, config=PLOTLY_CONFIG)
        else:  # pragma: no cover
            st.plotly_chart(fig, theme=None, config=PLOTLY_CONFIG, key="compare_figure")

        st.markdown("#### What differs")
        rows = difference_rows(traj_a, traj_b, an_a, an_b, ("A", "B"))
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                     column_config={"differs": st.column_config.TextColumn("≠", width=40)})
        st.caption("Times are gradient-flow time t (GD: t = k·η). Phases are detected from "
                   "the loss and the neuron directions (dynamics.phases); '—' means not "
                   "detected in this run. Stable rank ‖W‖²_F/‖W‖²₂; max angle between active "
                   "neurons.")

        c1, c2 = st.columns(2)
        for col, lab, cfg in ((c1, "A", cfg_a), (c2, "B", cfg_b)):
            with col:
                if st.button(f"Open run {lab} in the Explorer", key=f"cmp.open.{lab}",
                             icon=":material/open_in_new:"):
                    state.open_in_explorer(cfg, replace(view, presenter=False))
        with st.expander("Share this comparison", expanded=False):
            st.caption("This link reopens both runs and the display options.")
            st.code(state.share_link(params), language=None)
        try:
            from ui.downloads import download_panel
        except ImportError:  # pragma: no cover - downloads are optional
            download_panel = None  # type: ignore[assignment]
        if download_panel is not None:
            with st.expander("Downloads", expanded=False):
                st.markdown("**Run A** (and the comparison figure)")
                download_panel(traj_a, fig, key="cmp.dl.a")
                st.markdown("**Run B**")
                download_panel(traj_b, None, key="cmp.dl.b")
