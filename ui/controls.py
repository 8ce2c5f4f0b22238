"""The control panel: widgets for every setting of a run, held in session state (seeded from
the page's binder, `ui.state`), that build a validated `Config` (and the figure's view).

Reusable by other pages: `control_panel(prefix, base, fresh=...)` draws the widgets where it is
called (e.g. inside `with st.sidebar:`) and returns a `Controls` result holding the Config or
the ConfigError; messages are shown next to the control they belong to. Option lists come from
the config's `Literal` types (`ui.view.field_options`), never spelled out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from dynamics.config import (
    DATA_CLASSES,
    Config,
    ConfigError,
    InitConfig,
    IntegratorConfig,
    LossConfig,
    RecordConfig,
    TeacherData,
)
from dynamics.limits import get_limits
from dynamics.uploads import UploadError, example_csv, parse_upload

from .state import EXPLORER_KEY as KEY_PREFIX
from .text import bullets, literal
from .view import LABELS, FigureView, field_options

DATA_LABELS = {
    "points": "points (edit angles)",
    "clusters": "clusters with noise",
    "two_signals": "two signals x₊, x₋ (Wang & Ma)",
    "teacher": "teacher neuron (Chistikov et al.)",
    "three_point": "three points, 1-D with bias (Boursier & Flammarion)",
    "digits": "two digit classes, 8×8 images (Min et al.)",
    "array": "upload a file (CSV or NPZ)",
}
EPS_CHOICES = tuple(float(f"{10.0 ** (k / 2):.3g}") for k in range(-16, 1))  # 1e-8 … 1
RTOL_CHOICES = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
NORMALISATION_LABELS = {"none": "ε", "sqrt_m": "ε/√m", "sqrt_dm": "ε/√(dm)"}
METHOD_LABELS = {"gf": "gradient flow (adaptive)", "gd": "gradient descent"}


def widget_key(path: str, prefix: str = KEY_PREFIX) -> str:
    """Session-state key of the widget bound to a dotted config path (or `view.*`)."""
    return f"{prefix}.{path}"


@dataclass
class Controls:
    """What the panel built: a Config (or the error), the display options, and the widgets'
    error slots (dotted path → placeholder)."""

    config: Config | None
    view: FigureView | None
    error: ConfigError | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    slots: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.config is not None


def _get(d: dict[str, Any], path: str) -> Any:
    cur: Any = d
    for p in path.split("."):
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _set(d: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    cur = d
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value


class _Panel:
    """Draws widgets seeded from a base config; collects their values into a config dict."""

    def __init__(self, base: Config, prefix: str, fresh: bool):
        self.base = base.to_dict()
        self.prefix = prefix
        self.fresh = fresh
        self.values: dict[str, Any] = {}
        self.slots: dict[str, Any] = {}

    def key(self, path: str) -> str:
        return widget_key(path, self.prefix)

    def seed(self, path: str, value: Any) -> str:
        k = self.key(path)
        if self.fresh or k not in st.session_state:
            st.session_state[k] = value
        return k

    def slot(self, path: str) -> None:
        self.slots[path] = st.empty()

    def widget(self, path: str, make: Callable[..., Any], label: str, *,
               to_widget: Callable[[Any], Any] = lambda v: v,
               from_widget: Callable[[Any], Any] = lambda v: v,
               default: Any = None, **kw: Any) -> Any:
        """A widget bound to `path`: seeded from the base config, value stored back."""
        base = _get(self.base, path)
        k = self.seed(path, to_widget(default if base is None and default is not None
                                      else base))
        value = make(label, key=k, **kw)
        self.values[path] = from_widget(value)
        self.slot(path)
        return value


def _none_if_zero(v: Any) -> Any:
    return None if v in (0, 0.0, None) else v


def _with_choice(choices: tuple[float, ...], value: float) -> list[float]:
    out = set(choices)
    out.add(float(value))
    return sorted(out)


def _table(p: _Panel, kind: str, columns: dict[str, str], base_rows: dict[str, list[Any]],
           help_text: str) -> pd.DataFrame:
    """An editable table (st.data_editor) seeded from the base config's lists."""
    ss = st.session_state
    base_key = f"{p.prefix}._table_base.{kind}"
    version_key = f"{p.prefix}._table_version.{kind}"
    if p.fresh or base_key not in ss:
        ss[base_key] = pd.DataFrame({label: base_rows[col] for col, label in columns.items()})
        ss[version_key] = ss.get(version_key, 0) + 1
    st.caption(help_text)
    df = st.data_editor(
        ss[base_key], key=f"{p.prefix}.data.table.{kind}.{ss[version_key]}",
        num_rows="dynamic", width="stretch", hide_index=True,
        column_config={label: st.column_config.NumberColumn(label, format="%g")
                       for label in columns.values()})
    return df


def _column(df: pd.DataFrame, label: str) -> list[Any]:
    """A table column as a list: numbers as floats, blanks left as None (validation names them)."""
    out: list[Any] = []
    for v in df[label].tolist():
        out.append(None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v))
    return out


def _data_controls(p: _Panel) -> None:
    kinds = list(DATA_CLASSES)
    kind = p.widget("data.kind", st.selectbox, "Data", options=kinds,
                    format_func=lambda k: DATA_LABELS.get(k, k))
    if kind != p.base["data"]["kind"]:  # switch: seed this kind's widgets from its defaults
        p.base["data"] = DATA_CLASSES[kind]().model_dump(mode="json")
    d = p.base["data"]
    if kind == "points":
        df = _table(p, kind, {"angles_deg": "angle (°)", "radii": "radius", "labels": "label"},
                    d, "One row per data point x = r(cos θ, sin θ). Labels ±1 classify; other "
                    "labels regress (square loss). Add or delete rows at the bottom.")
        p.values["data.angles_deg"] = _column(df, "angle (°)")
        p.values["data.radii"] = _column(df, "radius")
        p.values["data.labels"] = _column(df, "label")
        p.slot("data.angles_deg")
        p.slot("data.radii")
        p.slot("data.labels")
    elif kind == "clusters":
        df = _table(p, kind, {"angles_deg": "angle (°)", "labels": "label"}, d,
                    "One row per cluster centre on the circle, with its label.")
        p.values["data.angles_deg"] = _column(df, "angle (°)")
        p.values["data.labels"] = _column(df, "label")
        p.slot("data.angles_deg")
        p.slot("data.labels")
        c1, c2, c3 = st.columns(3)
        with c1:
            p.widget("data.radius", st.number_input, "radius", format="%g")
        with c2:
            p.widget("data.n_per", st.number_input, "per cluster", step=1)
        with c3:
            p.widget("data.noise", st.number_input, "noise", format="%g", step=0.05)
    elif kind == "two_signals":
        p.widget("data.angle_deg", st.number_input, "angle between x₊ and x₋ (°)",
                 format="%g", step=1.0)
        c1, c2, c3 = st.columns(3)
        with c1:
            p.widget("data.p", st.number_input, "class weight p", format="%g", step=0.5)
        with c2:
            p.widget("data.norm_plus", st.number_input, "‖x₊‖", format="%g", step=0.1)
        with c3:
            p.widget("data.norm_minus", st.number_input, "‖x₋‖", format="%g", step=0.1)
        c1, c2 = st.columns(2)
        with c1:
            p.widget("data.n_per", st.number_input, "copies of each", step=1)
        with c2:
            p.widget("data.noise", st.number_input, "noise", format="%g", step=0.05)
    elif kind == "teacher":
        c1, c2 = st.columns(2)
        with c1:
            p.widget("data.d", st.number_input, "dimension d", step=1)
        with c2:
            p.widget("data.n", st.number_input, "samples n (0: n = d)", step=1,
                     to_widget=lambda v: 0 if v is None else v, from_widget=_none_if_zero)
        c1, c2 = st.columns(2)
        with c1:
            p.widget("data.scheme", st.selectbox, "scheme",
                     options=field_options(TeacherData, "scheme"))
        with c2:
            p.widget("data.rho", st.number_input, "ρ (0: the scheme's)", format="%g",
                     step=0.1, to_widget=lambda v: 0.0 if v is None else float(v),
                     from_widget=_none_if_zero)
    elif kind == "three_point":
        df = _table(p, kind, {"x": "x", "y": "y"}, d,
                    "Univariate inputs x (a bias coordinate 1 is appended) and targets y.")
        p.values["data.x"] = _column(df, "x")
        p.values["data.y"] = _column(df, "y")
        p.slot("data.x")
        p.slot("data.y")
    elif kind == "digits":
        c1, c2 = st.columns(2)
        with c1:
            a = p.widget("data.classes.0", st.selectbox, "digit +1", options=list(range(10)),
                         to_widget=lambda _: int(d["classes"][0]))
        with c2:
            b = p.widget("data.classes.1", st.selectbox, "digit −1", options=list(range(10)),
                         to_widget=lambda _: int(d["classes"][1]))
        del p.values["data.classes.0"], p.values["data.classes.1"]
        p.values["data.classes"] = [a, b]
        p.slot("data.classes")
        p.widget("data.n_per_class", st.number_input, "images per class (0: all)", step=10,
                 to_widget=lambda v: 0 if v is None else v, from_widget=_none_if_zero)
        p.widget("data.centre", st.checkbox, "centre the images")
    else:
        _upload_controls(p, d)
    p.widget("data.bias", st.checkbox, "append a bias coordinate 1",
             help="A constant input coordinate, i.e. a hidden-layer bias.")


def _upload_controls(p: _Panel, d: dict[str, Any]) -> None:
    """Points and labels from a CSV/NPZ file (dynamics.uploads validates it). The parsed array
    is kept in the session; links do not carry uploaded data (see ui.state.UPLOAD_PATHS)."""
    store = p.key("data._uploaded")
    up = st.file_uploader("CSV or NPZ of points and labels", type=["csv", "txt", "npz"],
                          key=p.key("data._file"),
                          help="CSV: one row per point, the label in the last column (or a "
                          "column named y/label/target). NPZ: arrays X and y. Limits: "
                          f"{get_limits().max_upload_mb:g} MB, {get_limits().max_points} rows, "
                          f"{get_limits().max_dim} columns.")
    if up is not None and st.session_state.get(p.key("data._name")) != (up.name, up.size):
        try:
            parsed = parse_upload(up.name, up.getvalue(), loss=p.base["loss"]["kind"])
        except UploadError as e:
            st.session_state.pop(store, None)
            st.error("This file cannot be used:\n\n" + bullets(e.messages))
        else:
            st.session_state[store] = {"X": parsed.data.X, "y": parsed.data.y,  # arrays, no copy
                                       "summary": parsed.summary}
        st.session_state[p.key("data._name")] = (up.name, up.size)
    got = st.session_state.get(store)
    if got is None:
        st.caption("No file yet: showing a two-point placeholder. Links do not carry uploaded "
                   "data; upload the file again after opening a shared link.")
        got = {"X": d.get("X", [[1.0, 0.0], [0.0, 1.0]]), "y": d.get("y", [1.0, -1.0])}
    else:
        st.caption(literal(got.get("summary", "")))
    p.values["data.X"] = got["X"]
    p.values["data.y"] = got["y"]
    p.slot("data.X")
    p.slot("data.y")
    st.download_button("example CSV", example_csv(), file_name="example_points.csv",
                       mime="text/csv", key=p.key("data._example"))


def _model_controls(p: _Panel) -> None:
    lim = get_limits()
    c1, c2 = st.columns(2)
    with c1:
        p.widget("model.width", st.number_input, "width m", step=10, min_value=1,
                 help=f"Hidden neurons (at most {lim.max_width}).")
    with c2:
        p.widget("model.gamma", st.number_input, "leaky slope γ", format="%g", step=0.05,
                 help="σ(u) = max(u, γu); γ = 0 is ReLU.")
    c1, c2 = st.columns(2)
    with c1:
        p.widget("loss.kind", st.selectbox, "loss", options=field_options(LossConfig, "kind"))
    with c2:
        p.widget("loss.reduction", st.selectbox, "reduction",
                 options=field_options(LossConfig, "reduction"),
                 help="L = (1/n) Σ ℓ_i (mean) or Σ ℓ_i (sum); time scales with it.")
    c1, c2 = st.columns(2)
    with c1:
        p.widget("model.train_output", st.checkbox, "train output layer a")
    with c2:
        p.widget("model.c", st.number_input, "output scale c", format="%g", step=0.5)


def _init_controls(p: _Panel) -> None:
    scale = float(p.base["init"]["scale"])
    p.widget("init.scale", st.select_slider, "init scale ε",
             options=_with_choice(EPS_CHOICES, scale), format_func=lambda v: f"{v:.3g}",
             help="Small ε: the neurons align long before their norms grow.")
    c1, c2 = st.columns(2)
    with c1:
        scheme = p.widget("init.scheme", st.selectbox, "scheme",
                          options=field_options(InitConfig, "scheme"))
    with c2:
        p.widget("init.normalisation", st.selectbox, "entry std",
                 options=field_options(InitConfig, "normalisation"),
                 format_func=NORMALISATION_LABELS.get)
    if scheme == "fixed_output":
        c1, c2 = st.columns(2)
        with c1:
            p.widget("init.output_value", st.number_input, "|a_j| value", format="%g")
        with c2:
            p.widget("init.output_norm", st.selectbox, "divided by",
                     options=field_options(InitConfig, "output_norm"))


def _training_controls(p: _Panel) -> None:
    method = p.widget("integrator.method", st.radio, "integrator",
                      options=sorted(field_options(IntegratorConfig, "method"), reverse=True),
                      horizontal=True, format_func=METHOD_LABELS.get)
    c1, c2 = st.columns(2)
    with c1:
        p.widget("integrator.t_end", st.number_input, "end time t", format="%g", step=10.0)
    with c2:
        if method == "gd":
            p.widget("integrator.lr", st.number_input, "step η", format="%g", step=0.001)
        else:
            rtol = float(p.base["integrator"]["rtol"])
            p.widget("integrator.rtol", st.select_slider, "tolerance rtol",
                     options=_with_choice(RTOL_CHOICES, rtol), format_func=lambda v: f"{v:g}")
    c1, c2 = st.columns(2)
    with c1:
        p.widget("record.frames", st.number_input, "frames", step=20, min_value=2)
    with c2:
        p.widget("seed", st.number_input, "seed", step=1, min_value=0)
    c1, c2 = st.columns(2)
    with c1:
        p.widget("record.spacing", st.selectbox, "frame spacing",
                 options=field_options(RecordConfig, "spacing"))
    with c2:
        p.widget("record.plane", st.selectbox, "drawing plane",
                 options=field_options(RecordConfig, "plane"))


def view_controls(view: FigureView, prefix: str, fresh: bool) -> FigureView:
    """Radios for the figure's display options (options and labels from `FigureView`) and
    the presenter switch; returns the view they describe."""
    vals: dict[str, Any] = {}
    for name, label in (("radius", "radius"), ("time_axis", "time axis"),
                        ("time_scale", "time unit")):
        k = widget_key(f"view.{name}", prefix)
        if fresh or k not in st.session_state:
            st.session_state[k] = getattr(view, name)
        vals[name] = st.radio(label, options=FigureView.options(name), key=k, horizontal=True,
                              format_func=LABELS[name].get)
    k = widget_key("view.presenter", prefix)
    if fresh or k not in st.session_state:
        st.session_state[k] = view.presenter
    vals["presenter"] = st.toggle("presenter mode (large text)", key=k)
    return FigureView(**vals)


def control_panel(prefix: str, base: Config, *, fresh: bool,
                  view: FigureView | None = None) -> Controls:
    """Draw every control, seeded from `base` when `fresh` (the binder's state was just read
    from a link or replaced) or when a widget has no value yet, and build the Config. Errors
    are shown next to their controls by `show_errors`. With `view`, a "Display" expander
    holds the figure's options and `Controls.view` is what they say."""
    p = _Panel(base, prefix, fresh)
    with st.expander("Data", expanded=True):
        _data_controls(p)
    with st.expander("Model and loss", expanded=True):
        _model_controls(p)
    with st.expander("Initialisation", expanded=True):
        _init_controls(p)
    with st.expander("Training and recording", expanded=False):
        _training_controls(p)
    shown: FigureView | None = None
    if view is not None:
        with st.expander("Display", expanded=True):
            shown = view_controls(view, prefix, fresh)
    raw = dict(p.base)
    raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    kind = p.values.get("data.kind", raw["data"]["kind"])
    if kind != raw["data"]["kind"]:
        raw["data"] = DATA_CLASSES[kind]().model_dump(mode="json")
    for path, value in p.values.items():
        _set(raw, path, value)
    try:
        config = Config.from_dict(raw)
    except ConfigError as e:
        res = Controls(None, shown, e, raw, p.slots)
        show_errors(res)
        return res
    return Controls(config, shown, None, raw, p.slots)


def show_errors(res: Controls) -> None:
    """Each message in the slot of the control it names; the rest only in the summary."""
    if res.error is None:
        return
    for path, slot in res.slots.items():
        msgs = res.error.for_field(path)
        if msgs:
            slot.error("\n\n".join(msgs))


def error_summary(err: ConfigError) -> str:
    """A Markdown list of every problem, with the setting it belongs to."""
    lines = [f"- **{path or 'settings'}**: {msg}" for path, msg in err.errors]
    return "These settings need a change before the run can start:\n\n" + "\n".join(lines)
