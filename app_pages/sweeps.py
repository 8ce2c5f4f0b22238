"""Sweeps: run a grid of configurations on Dask and see a paper's scaling claim as a picture.

Thin: widgets → Sweep spec (dynamics.sweeps) → run on this server process's Dask cluster
(started and warmed in the background when the page opens, `sw.prestart`; a worker thread
submits, seed by seed over the grid) → while it runs, a fragment redraws every second the
progress ("12 of 40 points"), a Cancel button and the figure of the points finished so far →
figures (viz.sweeps), the table and downloads. The binder (ui.state) keeps the chosen built-in
and its size in the URL (`sweep=…&size=full`, `SweepsView`).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import plotly.graph_objects as go
import streamlit as st
from pydantic import Field

from dynamics import sweeps as sw
from ui import charts, presenter, sessions, state, text
from ui.inputs import Rule, number_field
from ui.view import View, page_view
from viz import sweeps as vs

KEY = "sweeps"
REDRAW_S = 1.0  # the running sweep's progress and figure are redrawn this often
# Sizes of pasted text refused with a message before it is parsed (no `max_chars`: a widget's
# cap cuts a paste short without a word)
VALUES_MAX_CHARS = 20_000  # an axis's comma-separated values
BASE_MAX_CHARS = 200_000  # the base configuration's JSON
Q_HELP = "What each run measured (one column of the table), on the vertical axis."
RANGE_HELP = {"start": "The axis's first value.", "stop": "The axis's last value.",
              "count": "How many values from start to stop (1 to 200)."}
SweepName = Literal[(*sw.BUILTINS, "custom")]  # type: ignore[valid-type]


@page_view(globals())
class SweepsView(View):
    """The sweep shown: a built-in (or "custom", composed on the page) and its size."""

    sweep: SweepName = Field("trap_probability", alias="sweep")  # type: ignore[valid-type]
    size: Literal["quick", "full"] = Field("quick", alias="size")
B = state.Binder(KEY, SweepsView)
FIELDS = ["init.scale", "init.scheme", "init.normalisation", "model.width", "model.gamma",
          "model.c", "model.output_power", "init.imbalance", "init.a_power", "init.w_power",
          "data.angle_deg", "data.p", "data.n", "data.d", "data.noise", "loss.kind",
          "loss.reduction", "integrator.t_end", "integrator.lr", "integrator.lr_w",
          "integrator.lr_a", "integrator.rtol", "integrator.method", "other…"]


@dataclass
class Job:
    """A sweep running in a background thread; the script thread only reads it. `rows` fills
    in as points finish (index → row), for the figure drawn while it runs."""

    spec: sw.Sweep
    total: int
    cancel: threading.Event = field(default_factory=threading.Event)
    done: int = 0
    last: str = ""
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    result: sw.SweepResult | None = None
    error: str = ""
    started: float = field(default_factory=time.monotonic)
    thread: threading.Thread | None = None
    _drawn: tuple[int, go.Figure | None] = (-1, None)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def partial(self) -> sw.SweepResult:
        """The table so far (points not finished yet: status "cancelled", not drawn)."""
        return sw.SweepResult(sweep=self.spec, frame=sw.make_frame(self.spec, dict(self.rows)),
                              elapsed_s=time.monotonic() - self.started)

    def partial_figure(self) -> go.Figure | None:
        """The figure of the points finished so far, rebuilt only when more have finished
        (an unchanged figure is not drawn again); None while it cannot be drawn yet."""
        n = len(self.rows)
        if self._drawn[0] != n:
            try:
                self._drawn = (n, _figure(self.partial()))
            except Exception:  # too few points for this figure yet: the next redraw
                self._drawn = (n, None)
        return self._drawn[1]


def _start(spec: sw.Sweep) -> Job:
    """Run `spec` in a background thread on this server process's Dask client (the
    LocalCluster started and warmed when the page first opened: `sw.prestart`; a remote
    scheduler when DASK_SCHEDULER_ADDRESS is set)."""
    job = Job(spec=spec, total=spec.n_points())

    def progress(done: int, total: int, row: dict[str, Any]) -> None:
        job.rows[int(row["index"])] = row
        job.done = done
        job.last = f"last finished: point {row.get('index')}, {row.get('status')}"

    def notice(text: str) -> None:  # "the cluster has no workers: …" (and when they are back)
        job.last = text

    def work() -> None:
        try:
            job.last = "starting the Dask cluster…"
            client = sw.get_client()  # waits for a start in progress
            n = sw.n_workers_of(client)
            job.last = (f"the first {min(n, job.total)} running on {n} Dask worker"
                        f"{'s' if n != 1 else ''}" if n else "running")
            job.result = sw.run_sweep(spec, client=client, progress=progress,
                                      cancel=job.cancel, notice=notice)
        except Exception as e:  # shown on the page, never a traceback
            job.error = f"{type(e).__name__}: {e}"

    job.thread = threading.Thread(target=work, daemon=True, name="eae-sweep-page")
    job.thread.start()
    sessions.on_end("sweep", job.cancel.set)  # a closed tab does not keep the workers busy
    return job


def _figure(res: sw.SweepResult) -> go.Figure:
    """The scaling plot of a built-in (else lines/heatmap of the final loss) of `res`."""
    name, df = res.sweep.builtin, res.frame
    if name and name in vs.BUILTIN_FIGURES:
        return vs.builtin_figure(name, df)
    y = "final_loss" if "final_loss" in res.sweep.record else next(
        c for c in res.sweep.record if c != "phases")
    return vs.default_figure(df, list(res.sweep.axis_fields), y)
# ----------------------------------------------------------------------------- the spec
def _builtin_panel() -> tuple[sw.Sweep | None, str, str]:
    names = list(sw.BUILTINS)
    name = st.selectbox("Built-in sweep", names, format_func=lambda n: sw.BUILTINS[n].title,
                        key=f"{KEY}.builtin",
                        help="A paper's scaling claim as a grid of runs: what it varies and "
                             "what it measures is said under the choice.")
    size = st.radio("Size", SweepsView.options("size"), horizontal=True, key=f"{KEY}.size",
                    help="quick: seconds to half a minute on 2 cores; full: the paper's grid "
                         "(hours on 2 cores; meant for a cluster)")
    b = sw.BUILTINS[name]
    st.caption(f"**{b.paper}** — {b.claim}")
    return sw.builtin_sweep(name, quick=size == "quick"), name, size


def _axis_widgets(i: int) -> dict[str, Any] | None:
    cols = st.columns([2, 1.2, 3])
    choice = cols[0].selectbox(f"Axis {i + 1} field", FIELDS, key=f"{KEY}.ax{i}.field",
                               index=i if i < 3 else 0,
                               help="The setting this axis varies (the dotted name a link "
                                    "uses); other…: type any setting's dotted name.")
    fld = (cols[0].text_input("dotted field", key=f"{KEY}.ax{i}.other",
                              placeholder="e.g. data.n_per",
                              help="A setting's dotted name, as in the Explorer's links "
                                   "(data.n_per, model.c, …).")
           if choice == "other…" else choice)
    mode = cols[1].radio("as", ["values", "log", "linear"], key=f"{KEY}.ax{i}.mode",
                         horizontal=False,
                         help="values: the list you type; log / linear: a count of values "
                              "from start to stop, evenly spaced in log or in plain scale.")
    if mode == "values":
        text = cols[2].text_input("values (comma-separated)", key=f"{KEY}.ax{i}.values",
                                  value={0: "1e-3, 1e-2, 0.1, 1", 1: "balanced, gaussian, "
                                         "dominated", 2: "0, 0.05"}.get(i, ""),
                                  help="The axis's values, separated by commas: numbers "
                                       "(1e-3) or words (balanced).")
        problem = _values_problem(text)
        if problem:  # refused by its size, before it is split or parsed
            cols[2].error(problem)
            return {"field": fld, "invalid": True}
        vals = [_parse_scalar(v) for v in text.split(",") if v.strip()]
        return {"field": fld, "values": vals} if fld else None
    c = cols[2].columns(3)
    got = []
    for col, (name, default, rule) in zip(c, (
            ("start", 1e-3, Rule("start")), ("stop", 1.0, Rule("stop")),
            ("count", 4, Rule("count", 1, 200, integer=True))), strict=True):
        k = f"{KEY}.ax{i}.{ {'start': 'lo', 'stop': 'hi', 'count': 'n'}[name] }"
        st.session_state.setdefault(k, default)
        with col:
            v, problem = number_field(name, k, rule, help=RANGE_HELP[name])
            if problem:
                st.error(problem)
        got.append(v)
    if any(v is None for v in got):
        return {"field": fld, "invalid": True}
    lo, hi, n = got
    return {"field": fld, mode: [lo, hi, int(n)]} if fld else None


def _values_problem(text: str) -> str:
    """Why a pasted list of values is too large to read ("" when it is not): over
    `VALUES_MAX_CHARS` characters or the sweep's point limit in values, counted by its commas
    before anything is split or parsed."""
    cap = sw.max_points()
    if len(text) > VALUES_MAX_CHARS:
        return (f"This list is {len(text):,} characters long; give at most "
                f"{VALUES_MAX_CHARS:,} (a sweep has at most {cap:,} points).")
    n = text.count(",") + 1
    if n > cap:
        return f"This list has {n:,} values; a sweep has at most {cap:,} points."
    return ""


def _parse_scalar(text: str) -> Any:
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def _compose_panel() -> tuple[sw.Sweep | None, str]:
    start = st.selectbox("Start from the base of", list(sw.BUILTINS),
                         format_func=lambda n: sw.BUILTINS[n].title, key=f"{KEY}.basefrom",
                         index=list(sw.BUILTINS).index("trap_probability"),
                         help="The configuration every point starts from (a built-in's); "
                              "edit it below as JSON, the axes then change one setting each.")
    base = sw.builtin_sweep(start, quick=True).base
    with st.expander("Base configuration (JSON)", expanded=False):
        base_text = st.text_area("base", value=json.dumps(base.to_dict(), indent=1),
                                 height=260, key=f"{KEY}.base.{start}",
                                 label_visibility="collapsed",
                                 help="Every setting of the runs the axes do not vary "
                                      "(the Explorer's download gives a run's JSON).")
    n_axes = st.radio("Axes", [1, 2, 3], index=1, horizontal=True, key=f"{KEY}.naxes",
                      help="How many settings vary: every combination of their values is "
                           "one point (times the seeds).")
    axes = [a for a in (_axis_widgets(i) for i in range(n_axes)) if a]
    st.session_state.setdefault(f"{KEY}.seeds", 2)
    seeds, problem = number_field("Seeds per point", f"{KEY}.seeds",
                                  Rule("seeds per point", 1, 50, integer=True),
                                  help="Runs per point, each with another random start; "
                                       "the plots show their spread.")
    if problem:
        st.error(problem)
    if problem or any(a.get("invalid") for a in axes):
        return None, "custom"
    if len(base_text) > BASE_MAX_CHARS or sw.json_nesting(base_text) > sw.MAX_NESTING:
        st.error(f"The base configuration is too large: at most {BASE_MAX_CHARS:,} characters "
                 f"and {sw.MAX_NESTING} levels of brackets.")
        return None, "custom"
    try:
        base_d = json.loads(base_text)
    except (ValueError, RecursionError) as e:
        st.error(f"The base configuration is not valid JSON: {text.literal(e)}")
        return None, "custom"
    try:
        return sw.Sweep.from_dict({"name": "custom sweep", "base": base_d, "axes": axes,
                                   "seeds": int(seeds)}), "custom"
    except sw.SweepError as e:
        st.error(text.with_list("The sweep is not valid:", (f"{p}: {m}" for p, m in e.errors)))
        return None, "custom"


@st.fragment(run_every=REDRAW_S)
def _progress() -> None:
    """While the sweep runs: a progress bar, a Cancel button, and the figure of the points
    finished so far (redrawn every REDRAW_S)."""
    j: Job | None = st.session_state.get(f"{KEY}.job")
    if j is None:
        return
    if j.running:
        frac = j.done / max(j.total, 1)
        state = "cancelling…" if j.cancel.is_set() else j.last
        st.progress(frac, text=f"{j.done} of {j.total} points done "
                               f"({time.monotonic() - j.started:.0f} s) — {state}")
        st.button("Cancel", key=f"{KEY}.cancel_running", on_click=j.cancel.set,
                  disabled=j.cancel.is_set(), icon=":material/stop:",
                  help="Stops the sweep; the points done so far stay in the cache.")
        fig = j.partial_figure() if j.rows else None
        if fig is not None:
            charts.chart(fig, key=f"{KEY}.fig.partial", main=False)
            st.caption(f"The figure fills in as points finish ({j.done} of {j.total}); "
                       "the first seed of every point runs first.")
        elif not j.rows:
            st.caption("Each point appears on the plot here as soon as it finishes.")
        return
    # finished: hand the result to the page and redraw it once
    st.session_state.pop(f"{KEY}.job", None)
    if j.error:
        st.session_state[f"{KEY}.error"] = j.error
    elif j.result is not None:
        st.session_state[f"{KEY}.result"] = j.result
    st.rerun()


def _chooser(on: bool, busy: bool) -> tuple[Any, str, bool]:
    """The sweep's box: built-in or composed (its link kept in sync), what it runs and the
    Run button; returns the spec (None while invalid), its name and whether Run was
    pressed."""
    with st.container(border=True):
        mode = st.radio("Sweep", ["Built-in", "Compose"], horizontal=True, key=f"{KEY}.mode",
                        disabled=busy, help="Built-in: a paper's sweep, ready to run; "
                                            "Compose: your own axes over a base "
                                            "configuration.")
        if mode == "Built-in":
            spec, chosen, size = _builtin_panel()
            B.sync(SweepsView(sweep=chosen, size=size, presenter=on), {})
        else:
            spec, chosen = _compose_panel()
            B.sync(SweepsView(sweep="custom", presenter=on), {})
        if spec is not None:
            axes_txt = " × ".join(f"{ax.field} ({len(ax.points())})" for ax in spec.axes)
            st.caption(f"{spec.n_points()} runs: {axes_txt} × {len(spec.seeds)} seeds. "
                       f"{spec.description}")
        run_clicked = st.button("Run sweep", type="primary", disabled=busy or spec is None,
                                key=f"{KEY}.run",  # Cancel: under the progress bar
                                help="Runs every point of the sweep on the server's workers; "
                                     "each point appears on the plot as it finishes.")
    return spec, chosen, run_clicked


def _result(res: sw.SweepResult) -> None:
    """A finished sweep: its summary, the plot (the built-in's scaling figure), Explore and
    Table tabs, and its downloads."""
    df = res.frame
    counts = ", ".join(f"{v} {k}" for k, v in res.status_counts().items())
    msg = (f"{len(df)} runs in {res.elapsed_s:.1f} s on {res.n_workers} Dask workers "
           f"({res.scheduler}): {counts}.")
    (st.warning if res.cancelled else st.success)(("Cancelled. " if res.cancelled else "")
                                                   + msg)
    name = res.sweep.builtin
    tabs = st.tabs(["Scaling plot" if name else "Plot", "Explore", "Table"])
    axes = list(res.sweep.axis_fields)
    numeric = [c for c in res.sweep.record if c != "phases"]
    with tabs[0]:
        if name and name in vs.BUILTIN_FIGURES:
            charts.chart(_figure(res), key=f"{KEY}.fig.builtin", main=False)
            st.caption(sw.BUILTINS[name].claim)
        else:
            y = st.selectbox("Quantity", numeric, key=f"{KEY}.y0", help=Q_HELP)
            charts.chart(vs.default_figure(df, axes, y), key=f"{KEY}.fig.default", main=False)
    with tabs[1]:
        cc = st.columns(3)
        y = cc[0].selectbox("Quantity", numeric, key=f"{KEY}.y1",
                            index=numeric.index("final_loss") if "final_loss" in numeric
                            else 0, help=Q_HELP)
        kind = cc[1].radio("Chart", ["lines", "heatmap"], horizontal=True, key=f"{KEY}.kind",
                           index=1 if len(axes) >= 2 else 0,
                           help="lines: the quantity against one axis, a line per value of "
                                "the other; heatmap: two axes, colour = the quantity.")
        if kind == "heatmap" and len(axes) < 2:
            st.info("A heatmap needs two axes; showing lines.")
            kind = "lines"
        if axes:
            x = cc[2].selectbox("x axis", axes, key=f"{KEY}.x",
                                help="The setting along the horizontal axis.")
            rest = [a for a in axes if a != x]
            fig = (vs.heatmap_figure(df, x, rest[0], y) if kind == "heatmap"
                   else vs.lines_figure(df, x, y, color=rest[0] if rest else None))
            charts.chart(fig, key=f"{KEY}.fig.explore", main=False)
    with tabs[2]:
        st.dataframe(df, hide_index=True, key=f"{KEY}.table")
    stem = (name or "sweep").replace(" ", "_")
    d1, d2, d3, _ = st.columns([1, 1, 1, 3])
    d1.download_button("CSV", res.to_csv_bytes(), f"{stem}.csv", "text/csv", key=f"{KEY}.csv")
    d2.download_button("Parquet", res.to_parquet_bytes(), f"{stem}.parquet",
                       "application/octet-stream", key=f"{KEY}.parquet")
    d3.download_button("Sweep JSON", res.sweep.to_json(), f"{stem}.json", "application/json",
                       key=f"{KEY}.json")



def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    # ----------------------------------------------------------------------------- page
    bound = B.load()
    sw.prestart()  # the LocalCluster starts and warms in the background while the user chooses
    custom = bound.view.sweep == "custom"
    B.seed(f"{KEY}.mode", "Compose" if custom else "Built-in", bound.fresh)
    B.seed(f"{KEY}.builtin", SweepsView().sweep if custom else bound.view.sweep, bound.fresh)
    B.seed(f"{KEY}.size", bound.view.size, bound.fresh)
    on = presenter.mode(f"{KEY}.view.presenter", bound.view.presenter, bound.fresh)
    st.markdown("**Sweeps**" if on else "### Sweeps")
    presenter.intro(on, "About sweeps").caption(
        "Run a grid of settings (axes × seeds) on the Dask cluster and see how a quantity scales. "
        "Built-ins turn the papers' scaling claims into a picture with a fitted line and the "
        "theory's line (or the paper's numbers) beside it. Points already computed anywhere come "
        "from the shared cache.")
    if bound.warnings:
        st.warning(text.with_list("Some link parameters could not be used:", bound.warnings))
    job: Job | None = st.session_state.get(f"{KEY}.job")
    busy = job is not None and job.running
    spec, chosen, run_clicked = _chooser(on, busy)
    if run_clicked and spec is not None:
        job = _start(spec)
        st.session_state[f"{KEY}.job"] = job
        st.session_state.pop(f"{KEY}.result", None)
        st.session_state[f"{KEY}.result_name"] = chosen
        busy = True
    if st.session_state.get(f"{KEY}.job") is not None:
        _progress()
    if err := st.session_state.pop(f"{KEY}.error", None):
        st.error(f"The sweep could not run: {text.literal(err)}")
    res: sw.SweepResult | None = st.session_state.get(f"{KEY}.result")
    if res is not None:
        _result(res)
    elif not busy:
        st.info("Pick a sweep and press **Run sweep**. The quick built-ins take a few seconds to "
                "half a minute on two cores; the plot fills in as points finish, then the table "
                "and the downloads appear here.")


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
