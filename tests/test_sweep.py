"""Sweeps: spec validation, Dask execution (LocalCluster and real scheduler/worker processes)
against in-process runs, divergence and invalid points as rows, cancellation, CLI, the page."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from devtools.apptest import controls_without_help
from dynamics import sweeps as sw
from dynamics.limits import Limits
from dynamics.service import Service

REPO = Path(__file__).resolve().parent.parent
DASK = REPO / ".venv" / "bin" / "dask"
TINY_BASE = {"model": {"width": 8}, "integrator": {"method": "gf", "t_end": 30.0},
             "record": {"frames": 16, "scalars": 40}}


def tiny_spec(**extra: object) -> sw.Sweep:
    d = {"name": "tiny", "base": TINY_BASE,
         "axes": [{"field": "init.scale", "values": [1e-3, 1e-2]},
                  {"field": "model.width", "values": [5, 8]}],
         "seeds": [0, 1]}
    d.update(extra)
    return sw.Sweep.from_dict(d)


def in_process_frame(spec: sw.Sweep, cache_dir: Path) -> pd.DataFrame:
    """The same points one by one through a Service of this process with its own cache."""
    return sw.run_sweep_serial(spec, service=Service(cache_dir=cache_dir)).frame


def assert_same_numbers(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = [c for c in a.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True),
                                  b[cols].reset_index(drop=True), check_exact=True)


@pytest.fixture(scope="module")
def local_client():
    client = sw.default_clusters().local(2)
    yield client
    sw.default_clusters().close()


# ----------------------------------------------------------------------------- spec
def test_spec_expands_ranges_and_points():
    s = sw.Sweep.from_dict({"base": TINY_BASE, "axes": [
        {"field": "init.scale", "log": [1e-6, 1e-1, 6]},
        {"field": "model.width", "linear": [4, 10, 3]}], "seeds": 2})
    assert s.axes[0].points() == (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
    assert s.axes[1].points() == (4, 7, 10)
    assert s.seeds == (0, 1)
    pts = s.points()
    assert len(pts) == s.n_points() == 36
    assert pts[0].values == {"init.scale": 1e-6, "model.width": 4} and pts[1].seed == 1
    assert pts[5].config is not None and pts[5].config.model.width == 10
    again = sw.Sweep.from_json(s.to_json())
    assert again == s


@pytest.mark.parametrize("bad, where, words", [
    ({"axes": [{"field": "model.widht", "values": [1]}]}, "axes[0].field", "not a configuration"),
    ({"axes": [{"field": "init.scale", "values": [-1.0]}]}, "axes[0].values[0]", "greater"),
    ({"axes": [{"field": "model.width", "values": ["wide"]}]}, "axes[0].values[0]", "whole"),
    ({"axes": [{"field": "init.scale", "log": [0.0, 1.0, 3]}]}, "axes[0].log", "positive"),
    ({"axes": [{"field": "init.scale", "values": [1.0], "log": [1e-3, 1.0, 3]}]}, "axes[0]",
     "exactly one"),
    ({"axes": [{"field": "seed", "values": [1, 2]}]}, "axes[0].field", "seeds"),
    ({"record": ["final_loss", "loss_at_noon"]}, "record", "unknown summaries"),
    ({"base": {"model": {"width": 0}}}, "base.model.width", "greater"),
    ({"seeds": 0}, "seeds", "at least one seed"),
])
def test_spec_errors_are_clear(bad, where, words):
    with pytest.raises(sw.SweepError) as ei:
        sw.Sweep.from_dict({"base": TINY_BASE, **bad})
    msgs = ei.value.for_field(where) or [m for p, m in ei.value.errors if p.startswith(where)]
    assert msgs, ei.value.errors
    assert any(words in m for m in msgs), msgs


def test_too_many_points(monkeypatch):
    monkeypatch.setenv("EAE_MAX_SWEEP_POINTS", "10")
    with pytest.raises(sw.SweepError) as ei:
        tiny_spec(seeds=[0, 1, 2])
    (msg,) = ei.value.for_field("axes")
    assert "2 × 2 × 3 seeds = 12 points" in msg and "limit 10" in msg
    assert "EAE_MAX_SWEEP_POINTS" in msg


def test_invalid_combination_is_a_row_not_an_error():
    s = sw.Sweep.from_dict({"base": {**TINY_BASE, "data": {"kind": "three_point"}},
                            "axes": [{"field": "loss.kind", "values": ["square", "logistic"]}]})
    pts = s.points()
    assert pts[0].config is not None and pts[1].config is None
    assert "loss.kind" in pts[1].error and "labels" in pts[1].error
    res = sw.run_sweep_serial(s, service=Service(cache_dir=Path(os.environ["EAE_CACHE_DIR"])))
    assert res.frame["status"].tolist() == ["completed", "invalid"]
    assert "logistic" in res.frame.loc[1, "message"]


def test_builtins_validate_in_both_sizes():
    for name in sw.BUILTINS:
        q, f = sw.builtin_sweep(name, quick=True), sw.builtin_sweep(name, quick=False)
        assert q.builtin == name and all(p.config is not None for p in q.points())
        assert q.n_points() < f.n_points() <= Limits().max_sweep_points
    with pytest.raises(sw.SweepError):
        sw.builtin_sweep("nope")


def test_trap_summary_uses_ols_loss(tmp_path):
    s = sw.Sweep.from_dict({"base": {"data": {"kind": "three_point"}, "model": {"width": 20},
                                     "init": {"scale": 1e-3},
                                     "integrator": {"method": "gf", "t_end": 60.0},
                                     "record": {"frames": 20, "scalars": 50}},
                            "axes": [{"field": "init.scheme", "values": ["balanced"]}]})
    df = sw.run_sweep_serial(s, service=Service(cache_dir=tmp_path)).frame
    X = np.c_[[-0.75, -0.5, 0.125], np.ones(3)]
    y = np.array([1.1, 0.1, 0.8])
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    assert df.loc[0, "ols_loss"] == pytest.approx(np.mean(0.5 * (X @ beta - y) ** 2), rel=1e-12)
    assert bool(df.loc[0, "trapped"]) is True  # balanced ReLU from small init: the trap


# ----------------------------------------------------------------------------- Dask
@pytest.mark.heavy
def test_local_cluster_matches_in_process(local_client, tmp_path):
    spec = tiny_spec()
    seen: list[tuple[int, int]] = []
    res = sw.run_sweep(spec, client=local_client,
                       progress=lambda d, t, row: seen.append((d, t)))
    assert res.n_workers == 2 and not res.cancelled
    assert sorted(seen) == [(i, 8) for i in range(1, 9)]
    df = res.frame
    assert len(df) == 8 and set(df["status"]) == {"completed"}
    assert list(df.columns[:4]) == ["index", "init.scale", "model.width", "seed"]
    assert_same_numbers(df, in_process_frame(spec, tmp_path / "inproc"))
    # downloads round-trip
    back = pd.read_parquet(__import__("io").BytesIO(res.to_parquet_bytes()))
    assert_same_numbers(back, df)
    assert sw.sweep_from_frame(back) == spec
    csv = pd.read_csv(__import__("io").BytesIO(res.to_csv_bytes()))
    assert csv["final_loss"].tolist() == df["final_loss"].tolist()


@pytest.mark.heavy
def test_diverging_and_invalid_points_are_rows(local_client):
    spec = sw.Sweep.from_dict({
        "base": {**TINY_BASE, "integrator": {"method": "gd", "lr": 0.01, "t_end": 20.0}},
        "axes": [{"field": "integrator.lr", "values": [0.01, 20.0]},
                 {"field": "integrator.t_end", "values": [20.0, 2000.0, 1e9]}]})
    res = sw.run_sweep(spec, client=local_client)
    df = res.frame.set_index(["integrator.lr", "integrator.t_end"])
    assert df.loc[(20.0, 2000.0), "status"] == "diverged"
    assert "diverged" in df.loc[(20.0, 2000.0), "message"]
    assert df.loc[(0.01, 20.0), "status"] == "completed"
    assert df.loc[(20.0, 20.0), "status"] == "completed"
    assert df.loc[(0.01, 1e9), "status"] == "invalid"  # too many gd steps: ConfigError text
    assert "step limit" in df.loc[(0.01, 1e9), "message"]
    assert np.isfinite(df.loc[(0.01, 20.0), "final_loss"])


@pytest.mark.heavy
def test_cancel_leaves_no_running_tasks(local_client):
    # four runs that would take minutes each; cancel once both workers are working on them
    spec = sw.Sweep.from_dict({
        "base": {**TINY_BASE, "data": {"kind": "clusters"}, "model": {"width": 1000},
                 "integrator": {"method": "gd", "lr": 0.001, "t_end": 19000.0,
                                "max_steps": 20_000_000}},
        "seeds": [0, 1, 2, 3]})
    before = _worker_stat(local_client, "cancelled")
    cancel = threading.Event()

    def watch() -> None:  # the scheduler's view: a task of the sweep on each worker
        end = time.monotonic() + 120
        while time.monotonic() < end:
            busy = local_client.processing().values()
            if len(busy) == 2 and all(len(v) for v in busy):
                break
            time.sleep(0.1)
        while _worker_stat(local_client, "running") < 2 and time.monotonic() < end:
            time.sleep(0.1)  # until both simulations have started, not only their tasks
        cancel.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    res = sw.run_sweep(spec, client=local_client, cancel=cancel)
    watcher.join()
    assert res.cancelled
    assert res.frame["status"].tolist() == ["cancelled"] * 4
    assert "stopped before this point finished" in res.frame.loc[0, "message"]
    # nothing of the sweep is left on the scheduler ...
    assert all(len(v) == 0 for v in local_client.processing().values())
    # ... and the simulations that were running were told to stop: the workers go idle
    # (a slot is freed when its simulation returns, and its waiter counts the cancellation
    # after that: wait for both)
    end = time.monotonic() + 60
    while time.monotonic() < end and (
            _worker_stat(local_client, "running")
            or _worker_stat(local_client, "cancelled") - before < 2):
        time.sleep(0.2)
    assert _worker_stat(local_client, "running") == 0
    assert _worker_stat(local_client, "cancelled") - before >= 2


def _service_stat(name: str) -> int:
    from dynamics.service import default_service

    return int(default_service().stats()[name])


def _worker_stat(client, name: str) -> int:
    return sum(client.run(_service_stat, name).values())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.heavy
def test_real_scheduler_and_worker_processes(tmp_path):
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "EAE_CACHE_DIR": str(tmp_path / "cluster")}
    procs: list[subprocess.Popen] = []
    logs = [open(tmp_path / n, "wb") for n in ("scheduler.log", "worker.log")]
    try:
        procs.append(subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard"], env=env, stdout=logs[0], stderr=subprocess.STDOUT,
            start_new_session=True))
        procs.append(subprocess.Popen(
            [str(DASK), "worker", addr, "--nthreads", "1", "--nworkers", "2",
             "--no-dashboard"], env=env, stdout=logs[1], stderr=subprocess.STDOUT,
            start_new_session=True))
        client = sw.default_clusters().remote(addr, timeout=60)
        client.wait_for_workers(2, timeout=120)
        spec = tiny_spec()
        res = sw.run_sweep(spec, scheduler=addr)
        assert res.scheduler == addr and res.n_workers == 2
        assert_same_numbers(res.frame, in_process_frame(spec, tmp_path / "inproc"))
        # the CLI against the same cluster
        spec_file = tmp_path / "tiny.json"
        spec_file.write_text(spec.to_json())
        out = tmp_path / "out.parquet"
        cp = subprocess.run([sys.executable, "-m", "dynamics", "sweep", str(spec_file), "--out",
                             str(out), "--scheduler", addr, "--quiet"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
        assert cp.returncode == 0, cp.stderr
        assert json.loads(cp.stdout)["statuses"] == {"completed": 8}
        assert_same_numbers(pd.read_parquet(out), res.frame)
    finally:
        sw.default_clusters().close_remote(addr)
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for f in logs:
            f.close()


def test_cli_reports_spec_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"axes": [{"field": "model.widht", "values": [1]}]}))
    cp = subprocess.run([sys.executable, "-m", "dynamics", "sweep", str(bad), "--out",
                         str(tmp_path / "x.parquet")], cwd=REPO, capture_output=True,
                        text=True, timeout=120)
    assert cp.returncode == 2
    assert "axes[0].field" in cp.stderr and "not a configuration field" in cp.stderr


def test_example_files_are_valid():
    files = sorted((REPO / "examples" / "sweeps").glob("*.json"))
    assert files
    for f in files:
        sw.Sweep.from_json(f.read_text())


# ----------------------------------------------------------------------------- figures
def test_figures_from_a_synthetic_table():
    from viz import sweeps as vs

    rows = []
    for d in (4, 16):
        for k in (0, -4, -8):
            for seed in range(3):
                rows.append({"index": len(rows), "data.d": d, "init.scale": 4.0**k,
                             "seed": seed, "status": "completed",
                             "max_angle": 100 * 4.0**k * (1 + seed), "t_align": -k + seed,
                             "t_half_loss": -k + 1, "t_theory": -k * 1.3863,
                             "gamma_norm": 1.0})
    df = pd.DataFrame(rows)
    fig = vs.max_angle_figure(df)
    names = [t.name for t in fig.data]
    assert "d = 4: paper (Table 1)" in names and any("fit slope 1.00" in n for n in names)
    fit = vs.fit_line(df["init.scale"], df["max_angle"], True, True)
    assert fit is not None and fit.slope == pytest.approx(1.0)
    fig = vs.alignment_vs_scale_figure(df)
    assert any("theory" in (t.name or "") for t in fig.data)
    hm = vs.heatmap_figure(df, "init.scale", "data.d", "max_angle")
    assert np.asarray(hm.data[0].z).shape == (2, 3)
    ln = vs.lines_figure(df, "init.scale", "max_angle", color="data.d")
    assert ln.layout.xaxis.type == "log"


# ----------------------------------------------------------------------------- page
def test_sweeps_page_runs_a_tiny_sweep(local_client):
    from streamlit.testing.v1 import AppTest

    page = REPO / "app_pages" / "sweeps.py"
    at = AppTest.from_file(str(page), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.selectbox(key="sweeps.builtin").value == "trap_probability"
    assert "sweep" not in at.query_params  # the default built-in: the binder writes no default
    assert controls_without_help(at) == []
    at.radio(key="sweeps.mode").set_value("Compose").run()
    at.radio(key="sweeps.naxes").set_value(1).run()
    assert controls_without_help(at) == []  # the Compose box's controls too
    area = next(t for t in at.text_area if t.key.startswith("sweeps.base."))
    area.set_value(json.dumps(TINY_BASE)).run()
    at.text_input(key="sweeps.ax0.values").set_value("0.001, 0.01").run()
    at.number_input(key="sweeps.seeds").set_value(1).run()
    assert not at.exception and not at.error
    at.button(key="sweeps.run").click().run()
    end = time.monotonic() + 120
    while "sweeps.result" not in at.session_state and time.monotonic() < end:
        time.sleep(0.5)
        at.run()
    assert not at.exception
    res = at.session_state["sweeps.result"]
    assert res.frame["status"].tolist() == ["completed", "completed"]
    assert any("2 runs" in s.value for s in at.success)
    assert sum(type(e).__name__ == "DownloadButton" for e in at.main) == 3


def test_sweeps_page_reports_each_point_as_it_finishes(local_client):
    """The progress said "0 of 8 points" until the plot appeared at the end: here one point
    takes seconds (GD, 2·10⁶ steps of 200 neurons) and the other a fraction of one, and the
    page shows "1 of 2 points done" with the plot of the finished point while the slow one
    runs, then the result."""
    from streamlit.testing.v1 import AppTest

    base = {"model": {"width": 8}, "record": {"frames": 16, "scalars": 40},
            "integrator": {"method": "gd", "lr": 0.0005, "t_end": 1000.0}}
    at = AppTest.from_file(str(REPO / "app_pages" / "sweeps.py"), default_timeout=120)
    at.run()
    at.radio(key="sweeps.mode").set_value("Compose").run()
    at.radio(key="sweeps.naxes").set_value(1).run()
    at.selectbox(key="sweeps.ax0.field").set_value("model.width").run()
    next(t for t in at.text_area if t.key.startswith("sweeps.base.")).set_value(
        json.dumps(base)).run()
    at.text_input(key="sweeps.ax0.values").set_value("8, 200").run()
    at.number_input(key="sweeps.seeds").set_value(1).run()
    assert not at.exception and not at.error
    at.button(key="sweeps.run").click().run()
    seen = []
    end = time.monotonic() + 180
    while "sweeps.result" not in at.session_state and time.monotonic() < end:
        texts = [p.text for p in at.get("progress")]
        charts = len(at.get("plotly_chart"))
        seen.append((texts[0] if texts else "", charts))
        time.sleep(0.3)
        at.run()
    assert not at.exception
    assert "sweeps.result" in at.session_state, seen[-3:]
    partial = [(t, c) for t, c in seen if t.startswith("1 of 2 points done")]
    assert partial, seen  # the finished point was counted before the other finished …
    assert any(c >= 1 for _t, c in partial), partial  # … and drawn
