"""Real data: Min et al.'s two-digit experiment (their Figure 5) on scikit-learn's 8×8 digits,
or on an uploaded CSV/NPZ of points and ±1 labels.

Thin: widgets → Config → service (ui.runner) → figure (viz.real_data). The binder (ui.state)
keeps in the URL the settings that differ from this page's defaults
(`data.classes=3,8&model.width=80`) and the view (`source=upload`, `view.*`); an uploaded file
itself is not (a link cannot carry it).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import streamlit as st
from pydantic import Field

import runtime
from dynamics.annotations import Analysis
from dynamics.config import Config, ConfigError, InitConfig, IntegratorConfig, LossConfig
from dynamics.papers.min import digits_config
from dynamics.trajectory import Trajectory
from dynamics.uploads import UploadError, example_csv, parse_upload
from ui import charts, downloads, figures, presenter, runner, share, state, text
from ui.controls import (
    METHOD_LABELS,
    ReadableError,
    error_summary,
    number_rules,
)
from ui.inputs import number_field, plain
from ui.settings import SETTINGS, eps_ladder
from ui.view import TimeAxis, View, field_options, page_view, view_default

P = "rd"
FIG_KEY = "real_data_figure"
# Min et al.'s digits 0 vs 1 preset (all images, their Figure 5), to t = 2 for a first look
DEFAULT = digits_config(quick=False).with_updates({"integrator.t_end": 2.0})
# settings this page edits (URL keys); everything else stays at DEFAULT
PATHS = ("data.classes", "data.n_per_class", "data.centre", "model.width", "model.gamma",
         "init.scheme", "init.scale", "loss.kind", "loss.reduction", "integrator.method",
         "integrator.lr", "integrator.t_end", "integrator.rtol", "record.frames", "seed")
Source = Literal["digits", "upload"]


@page_view(globals())
class RealDataView(View):
    """Where the data comes from and the time axis (the run itself is the Config)."""

    source: Source = Field("digits", alias="source")
    time_axis: TimeAxis = Field(view_default("view.time_axis"), alias="view.time_axis")
B = state.Binder(P, RealDataView, {"run": state.ConfigSlot(base=lambda _v: DEFAULT,
                                                           paths=PATHS)})


def _key(path: str) -> str:
    return f"{P}.{path}"


def _seed(cfg: Config, view: RealDataView, fresh: bool) -> None:
    """Put the state the binder read into the widgets (when fresh or not drawn yet)."""
    d = cfg.data if cfg.data.kind == "digits" else DEFAULT.data
    flat = {"model.width": cfg.model.width, "model.gamma": cfg.model.gamma,
            "init.scheme": cfg.init.scheme, "init.scale": cfg.init.scale,
            "loss.kind": cfg.loss.kind, "loss.reduction": cfg.loss.reduction,
            "integrator.method": cfg.integrator.method, "integrator.lr": cfg.integrator.lr,
            "integrator.t_end": cfg.integrator.t_end, "record.frames": cfg.record.frames,
            "seed": cfg.seed, "data.classes.0": d.classes[0],  # type: ignore[union-attr]
            "data.classes.1": d.classes[1],  # type: ignore[union-attr]
            "data.n_per_class": d.n_per_class or 0,  # type: ignore[union-attr]
            "data.centre": d.centre,  # type: ignore[union-attr]
            "source": view.source, "view.time_axis": view.time_axis}
    for path, value in flat.items():
        B.seed(_key(path), value, fresh)
RULES = number_rules()
LABELS = {"data.classes": "digits", "init.scale": "α (init scale)"}


def _help(path: str) -> str:
    """The settings table's help of `path` (`ui.settings`: one wording on every page)."""
    return SETTINGS[path].help


def _number(problems: list[tuple[str, str]], path: str, label: str, *,
            step: float | None = None, default: float = 0.0) -> float:
    """A number field that takes what is typed (stepping by the settings table's step unless
    `step` says otherwise); a rejected value gets its message right under the field (and the
    run waits: it joins `problems`), the page's default standing in."""
    value, problem = number_field(label, _key(path), RULES[path], help=_help(path),
                                  step=SETTINGS[path].step if step is None else step)
    if problem:
        problems.append((path, problem))
        st.error(problem)
        return default
    return value


def _parsed_upload(up: Any, loss: str, map_01: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """The uploaded file's arrays and summary (None and the reasons when it cannot be used),
    parsed once per file and setting and kept in this session only: the previous file's
    arrays are dropped before a new one is parsed, a refused file keeps just its messages,
    and nothing is shared between sessions (a parse is as large as its arrays)."""
    ss = st.session_state
    slot = _key("upload_parsed")
    key = (getattr(up, "file_id", "") or up.name, up.size, loss, bool(map_01))
    held = ss.get(slot)
    if held is not None and held["key"] == key:
        return held["data"], held["msgs"]
    ss.pop(slot, None)
    runtime.current().pages.divert()  # a parse (≤ 164 MB): other visitors' pages go on
    data: dict[str, Any] | None = None
    msgs: list[str] = []
    try:
        parsed = parse_upload(up.name, up.getvalue(), loss=loss, map_01=map_01)
    except UploadError as e:
        msgs = [plain(m) for m in e.messages]
    else:
        labels = set(np.unique(parsed.y).tolist())
        if labels != {-1.0, 1.0}:
            msgs = [f"This page needs two classes labelled −1 and +1; the file's labels are "
                    f"{', '.join(f'{v:g}' for v in sorted(labels)[:6])}."]
        else:  # the arrays themselves (read-only, never copied into the config)
            data = {"X": parsed.X, "y": parsed.y,
                    "summary": parsed.summary + "".join(f" {n}" for n in parsed.notes)}
    ss[slot] = {"key": key, "data": data, "msgs": msgs}
    return data, msgs


def _data_inputs(problems: list[tuple[str, str]], w: dict[str, Any]) -> None:
    """The data widgets (digit classes, or the upload), into `w`."""
    w["source"] = st.radio("Data", RealDataView.options("source"), key=_key("source"),
                           horizontal=True, help="Scikit-learn's 8×8 images of handwritten "
                           "digits (two classes, Min et al.'s Figure 5), or your own file of "
                           "points with ±1 labels.",
                           format_func={"digits": "8×8 digits", "upload": "upload CSV/NPZ"}.get)
    if w["source"] == "digits":
        c1, c2 = st.columns(2)
        with c1:
            w["cls_a"] = st.selectbox("digit (+1)", list(range(10)),
                                      key=_key("data.classes.0"), help=_help("data.classes.0"))
        with c2:
            w["cls_b"] = st.selectbox("digit (−1)", list(range(10)),
                                      key=_key("data.classes.1"), help=_help("data.classes.1"))
        w["n_per"] = _number(problems, "data.n_per_class", "images per class (0: all, ≈180)")
        w["centre"] = st.checkbox("centre (subtract the mean image)", key=_key("data.centre"),
                                  help=_help("data.centre"))
        return
    st.caption("A CSV with a label column (y, label or target; else the last column) or "
               "an .npz with arrays X and y. Labels must be −1 and +1 (or 0/1 mapped). "
               "The file is not part of the page's link.")
    w["up"] = st.file_uploader("points and labels", type=["csv", "txt", "npz"],
                               key=_key("upload"), help=_help("data.X"))
    w["map_01"] = st.checkbox("map labels 0 → −1, 1 → +1", key=_key("map01"),
                              help="For a file labelled 0 and 1: read 0 as −1 and 1 as +1 "
                                   "(this page needs ±1 labels).")
    st.download_button("Example CSV", data=example_csv(), file_name="example_points.csv",
                       mime="text/csv", key=_key("example"), on_click="ignore",
                       icon=":material/download:",
                       help="A small file in the format this page reads, to start from.")


def _model_inputs(problems: list[tuple[str, str]], w: dict[str, Any]) -> None:
    """Width, γ, the initialisation and the loss, into `w`."""
    c1, c2 = st.columns(2)
    with c1:
        w["width"] = _number(problems, "model.width", "width m", default=DEFAULT.model.width)
    with c2:
        w["gamma"] = _number(problems, "model.gamma", "leaky slope γ")
    c1, c2 = st.columns(2)
    with c1:
        w["scheme"] = st.selectbox("initialisation",  # the two schemes of Min et al.'s setting
                                   [s for s in field_options(InitConfig, "scheme")
                                    if s in ("gaussian", "balanced")],
                                   key=_key("init.scheme"),
                                   help="gaussian: w and a independent N(0, α²) (Min et al.'s "
                                        "experiments); balanced: |a_j| = ‖w_j‖.")
    with c2:
        options = eps_ladder(st.session_state[_key("init.scale")])
        w["scale"] = st.select_slider("α (init scale)", options=options,
                                      key=_key("init.scale"), format_func=lambda v: f"{v:.3g}",
                                      help="Size of the initial weights (Min et al. call it "
                                           "α): smaller α keeps the neurons aligning longer "
                                           "before they grow.")
    c1, c2 = st.columns([3, 2])  # "exponential" needs the room
    with c1:
        w["loss_kind"] = st.selectbox("loss", field_options(LossConfig, "kind"),
                                      key=_key("loss.kind"), help=_help("loss.kind"))
    with c2:
        w["reduction"] = st.selectbox("reduction", field_options(LossConfig, "reduction"),
                                      key=_key("loss.reduction"), help=_help("loss.reduction"))


def _training_inputs(problems: list[tuple[str, str]], w: dict[str, Any]) -> None:
    """The integrator, end time, step, frames, seed and the time axis, into `w`."""
    w["method"] = method = st.radio("integrator", field_options(IntegratorConfig, "method"),
                                    key=_key("integrator.method"), horizontal=True,
                                    format_func=METHOD_LABELS.get,
                                    help=_help("integrator.method"))
    c1, c2 = st.columns(2)
    with c1:
        # the page's runs end by t = 2: finer steps than the table's 10
        w["t_end"] = _number(problems, "integrator.t_end", "end time t", step=0.5,
                             default=DEFAULT.integrator.t_end)
    with c2:
        if method == "gd":
            w["lr"] = _number(problems, "integrator.lr", "step η", default=DEFAULT.integrator.lr)
        else:
            w["lr"] = float(st.session_state.get(_key("integrator.lr"), DEFAULT.integrator.lr))
    c1, c2 = st.columns(2)
    with c1:
        w["frames"] = _number(problems, "record.frames", "frames", default=DEFAULT.record.frames)
    with c2:
        w["seed"] = _number(problems, "seed", "seed")
    w["time_axis"] = st.radio("time axis", RealDataView.options("time_axis"),
                              key=_key("view.time_axis"), horizontal=True,
                              help=_help("view.time_axis"))


def _header(presenter_on: bool, warnings: list[str]) -> None:
    """The title, the experiment in a few lines, the link's dropped values."""
    if presenter_on:  # compact header: the figure comes first on a projector
        st.markdown("**Real data: two digit classes (Min et al., Figure 5)**")
    else:
        st.markdown("### Real data: two digit classes (Min et al., Figure 5)")
    with presenter.intro(presenter_on, "About this experiment"):
        st.caption(
            "Min, Mallada & Vidal train a width-50 two-layer ReLU net on MNIST 0 vs 1 from a tiny "
            "Gaussian start (α = 1e-6, GD η = 2e-3): the neurons first **align** — those with "
            "a_j > 0 with x₊ = Σ of the +1 images, those with a_j < 0 with x₋ — while ‖W‖ stays "
            "tiny; then ‖W‖₂² **grows**, the loss falls and the stable rank sits near 1. Here the "
            "same experiment runs on scikit-learn's 8×8 digits (about 180 images per class), so "
            "its times are those of this data, not MNIST's.")
    if warnings:
        st.warning(text.with_list("Some link parameters could not be used and were replaced by "
                                  "defaults:", warnings))


def _data_section(w: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """The run's data section from the widgets (the digits, or the parsed upload: None while
    there is none to use) and the upload's problems, with the page's notes about the file."""
    ss = st.session_state
    if w["source"] == "digits":
        ss.pop(_key("upload_parsed"), None)  # an upload's arrays are not kept for later
        return {"kind": "digits", "classes": [int(w["cls_a"]), int(w["cls_b"])],
                "n_per_class": int(w["n_per"]) or None, "centre": bool(w["centre"]),
                "bias": False}, []
    upload_msgs: list[str] = []
    upload_data: dict[str, Any] | None = None
    upload_summary = ""
    if w["up"] is None:
        ss.pop(_key("upload_parsed"), None)
        st.info("Upload a CSV or NPZ file of points and ±1 labels in the sidebar (or download "
                "the example CSV there), or switch back to the digits.")
    else:
        got, upload_msgs = _parsed_upload(w["up"], w["loss_kind"], bool(w["map_01"]))
        if got is not None:
            upload_data = {"kind": "array", "X": got["X"], "y": got["y"], "bias": False}
            upload_summary = got["summary"]
    if upload_msgs:
        st.error(text.with_list("The uploaded file cannot be used:", upload_msgs))
    if upload_data is not None:
        st.caption(f"Uploaded: {text.literal(upload_summary)} The file is not stored in the "
                   "link: "
                   "whoever opens it uploads it again. The default end time suits the "
                   "digits; other data may need a longer run (end time t in the sidebar).")
    return upload_data, upload_msgs


def _run_dict(w: dict[str, Any], data: dict[str, Any] | None) -> dict[str, Any]:
    """The run's settings as a dict: the page's default with the widgets' values (and `data`
    when there is one)."""
    d: dict[str, Any] = DEFAULT.to_dict()
    if data is not None:
        d["data"] = data
    d["model"] = {**d["model"], "width": int(w["width"]), "gamma": float(w["gamma"])}
    d["init"] = {**d["init"], "scheme": w["scheme"], "scale": float(w["scale"])}
    d["loss"] = {"kind": w["loss_kind"], "reduction": w["reduction"]}
    d["integrator"] = {**d["integrator"], "method": w["method"], "t_end": float(w["t_end"]),
                       "lr": float(w["lr"])}
    d["record"] = {**d["record"], "frames": int(w["frames"])}
    d["seed"] = int(w["seed"])
    if float(w["t_end"]) <= d["record"]["t_first"]:
        d["record"]["t_first"] = None  # let recording pick its first time
    return d


def _facts(traj: Trajectory, analysis: Analysis | None, config: Config) -> list[str]:
    """The run's detected phase times (with GD's iteration) and its final stable rank."""
    phases = {p.name: p for p in (analysis.phases if analysis else ()) if p.source == "detected"}
    facts = []
    gd, lr_used = config.integrator.method == "gd", config.integrator.lr

    def it(t: float) -> str:
        return f" (iteration {round(t / lr_used):,})" if gd else ""

    if "alignment" in phases:
        t_a = phases["alignment"].end
        facts.append(f"alignment detected until t = {t_a:.3g}{it(t_a)}")
    if "fitting" in phases:
        t_f = phases["fitting"].start
        facts.append(f"the loss starts to fall at t = {t_f:.3g}{it(t_f)}")
    sr = traj.frame_metrics.get("stable_rank")
    if sr is not None and len(sr):
        facts.append(f"final stable rank {float(sr[-1]):.3g}")
    return facts


def _show_run(config: Config, view: RealDataView, params: dict[str, str]) -> None:
    """Run the config and show its figure, what this run did, downloads and the share box."""
    got = runner.run_and_analyse(config, prefix=P, what="Phase detection and theory")
    if got is None:
        return
    traj, analysis = got
    fig = figures.real_data(traj, analysis, charts.options_of(view))
    charts.animated(fig, key=FIG_KEY, presenter=view.presenter,
                    filename="early-alignment-digits")
    facts = _facts(traj, analysis, config)
    if facts:
        st.markdown("**This run:** " + "; ".join(facts) + ".")
    st.caption(
        "The strip above the time panels names the detected phases (hover for details); "
        "the panels are tinted by them. V₊ and V₋ are taken from sign(a_j(t)) at each "
        "time, as Min et al. do for their unbalanced start (a_j can change sign early "
        "on). Pictures: each of w̄₊, "
        "w̄₋, x̄₊ = x₊/|I₊|, x̄₋ is divided by its own largest |entry|. "
        "**Loss:** Min et al. do not say whether they used the exponential or the "
        "logistic loss; the default here is the exponential loss with a sum over the "
        "data (their L is a sum), and both are offered.")
    with st.expander("Downloads", expanded=False):
        downloads.download_panel(traj, fig, key="rd.dl")
    share.share_box(f"{P}.share", "This link reopens these settings"
                    + (" (not the uploaded file: upload it again)."
                       if view.source == "upload" else "."), state.share_link(params))


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level):
    widgets → the run's settings → the link → the run and its figure."""
    problems: list[tuple[str, str]] = []  # (setting, message) of values the page cannot take
    bound = B.load()
    _seed(bound.configs["run"], bound.view, bound.fresh)
    presenter.mode(_key("view.presenter"), bound.view.presenter, bound.fresh)
    w: dict[str, Any] = {}
    with st.sidebar:
        presenter_on = bool(presenter.switch(_key("view.presenter")))  # first: found at once
        _data_inputs(problems, w)
        st.divider()
        _model_inputs(problems, w)
        _training_inputs(problems, w)
    _header(presenter_on, bound.warnings)
    data, upload_msgs = _data_section(w)
    d = _run_dict(w, data)
    waiting = w["source"] == "upload" and data is None
    ready = not waiting and not problems
    config: Config | None = None
    if problems:
        st.error(error_summary(ReadableError(problems)))
    elif ready:
        try:
            config = Config.from_dict(d)
        except ConfigError as e:
            st.error(error_summary(e, LABELS))
    if config is None and (problems or upload_msgs or ready):  # keep the last good figure
        charts.stale(FIG_KEY, presenter=presenter_on)
    url_config = config
    if url_config is None and waiting and not problems:  # no file yet: keep the other settings
        try:
            url_config = Config.from_dict({**d, "data": DEFAULT.to_dict()["data"]})
        except ConfigError:
            url_config = None
    params: dict[str, str] = {}
    view = RealDataView(source=w["source"], time_axis=w["time_axis"], presenter=presenter_on)
    if url_config is not None:
        params = B.sync(view, {"run": url_config})
    if config is not None:
        _show_run(config, view, params)


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
