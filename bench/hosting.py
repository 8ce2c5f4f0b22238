"""The hosted instance's hard cases, measured from outside (before → after for a change):

    .venv/bin/python -m bench hosting                      # every case on this checkout
    .venv/bin/python -m bench hosting --cases contention,race --json out.json
    .venv/bin/python -m bench hosting --repo /tmp/old      # the same cases on another tree

`--repo` serves (and imports) another checkout of the project with this checkout's
interpreter, so the same measurements run on the code before a change. Cases:

- ``contention``: three sessions open the heavy link ``?data.kind=teacher&data.n=20000&data.d=8``
  and a fourth uploads a 160 KB ``savez_compressed`` of zeros((20000, 1024)) with ±1 labels on
  Real data, all at once; 0.3 s later a new visitor opens About & status and another the
  Explorer's default chart. Reported: each run's seconds, the health endpoint's latency (max,
  polled every 50 ms) and the server's peak RSS meanwhile.
- ``race``: 32 PUTs of 9.5 MB sent at once into one session: how many were accepted, RSS.
- ``health``: a server with ``EAE_ALLOWED_HOSTS=eae.example.org``: the Dockerfile's
  HEALTHCHECK, a kubelet-style probe (``Host: 10.1.2.3:port``) and a probe with no Host header
  (HAProxy's ``option httpchk``, HTTP/1.0): their HTTP statuses.
- ``spec``: ``eae sweep`` on the 70-byte spec ``{"axes":[{"field":"model.width","linear":[1,100,
  1000000000]}]}``, on 1,000,000 explicit values and on a deeply nested JSON (each in a child
  process capped at 4 GB of address space and `--spec-timeout` seconds): seconds to the
  answer, peak RSS, exit code, whether a traceback was printed.
- ``cluster``: a sweep on a scheduler whose only worker is killed (kill -9) after its first
  points: seconds until the sweep says so (none in 30 s: "never").
- ``csv``: a sweep value ``"\\r=2+2"`` through `exports.csv_bytes` and `eae sweep --out x.csv`:
  whether a CSV reader then sees a row that starts with ``=``.
- ``pregate``: in one process, the seconds (best of 3) of what a page does before its gate at
  the limits: teacher data of 20,000 × 8 and 20,000 × 1,024, the auto end time, an upload of
  20,000 × 1,024 parsed, made a Config, hashed and written into a link (the upload left out
  where the code can), a sweep spec of 5,000 values validated and one of 1,000,000 refused.

Not a test: nothing here asserts; the numbers go to the report of the change. The machine's
CPU and load are printed with them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from devtools.protocol import ProtocolSession
from devtools.server import REPO_ROOT, StreamlitServer, streamlit_python

from .machine import loadavg_text, machine
from .serverwatch import HealthPoller, TreeSampler

HEAVY_LINK = "data.kind=teacher&data.n=20000&data.d=8"
CASES = ("contention", "race", "health", "spec", "cluster", "csv", "pregate")


def _server(repo: Path, env: dict[str, str], tmp: Path, host: str | None = None
            ) -> StreamlitServer:
    """A server of `repo` (ready; asked as `host` when given: a server that refuses its own
    health checks under the host names it was given is still measured)."""
    full = {"EAE_CACHE_DIR": str(tmp / "cache"), "PYTHONPATH": str(repo), **env}
    s = StreamlitServer(repo / "serve.py", full, tmp, cwd=repo)
    if host is None:
        try:
            s.wait_ready()
        except BaseException:  # never leave a server behind
            s.stop()
            raise
        return s
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if _raw_status(s.port, f"GET /_stcore/health HTTP/1.1\r\nHost: {host}\r\n"
                           "Connection: close\r\n\r\n".encode()) == 200:
                return s
        except OSError:
            pass
        time.sleep(0.25)
    s.stop()
    raise TimeoutError(f"no health answer as {host}")


def _zeros_npz() -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, X=np.zeros((20_000, 1_024)),
                        y=np.where(np.arange(20_000) % 2, 1.0, -1.0))
    return buf.getvalue()


# ----------------------------------------------------------------------------- contention
def contention(repo: Path, tmp: Path) -> dict[str, Any]:
    s = _server(repo, {}, tmp)
    out: dict[str, Any] = {}
    try:
        for page in ("status", ""):  # the pages and the default chart once, as in a class
            with ProtocolSession(s.url, page=page) as w:
                w.rerun()
        blob = _zeros_npz()
        up = ProtocolSession(s.url, page="real_data", query="source=upload")
        up.rerun()
        heavy = [ProtocolSession(s.url, query=HEAVY_LINK) for _ in range(3)]
        health = HealthPoller(s.url, interval_s=0.05)
        tree = TreeSampler(s.proc.pid, interval_s=0.2)
        health.start()
        tree.start()
        times: dict[str, float] = {}
        errors: list[str] = []

        def timed(name: str, fn: Any) -> None:
            t = time.monotonic()
            try:
                run = fn()
                if run.exceptions:
                    errors.append(f"{name}: {run.exceptions[0]}")
            except Exception as e:  # reported, not raised: a benchmark
                errors.append(f"{name}: {type(e).__name__}: {e}")
            times[name] = round(time.monotonic() - t, 2)

        t0 = time.monotonic()
        threads = [threading.Thread(target=timed, args=(f"heavy link {i + 1}", h.rerun))
                   for i, h in enumerate(heavy)]
        threads.append(threading.Thread(target=timed, args=(
            "160 KB upload (Real data)", lambda: up.upload("points and labels", "z.npz",
                                                           blob))))
        for th in threads:
            th.start()
        time.sleep(0.3)

        def fresh(page: str) -> Any:
            with ProtocolSession(s.url, page=page) as v:
                return v.rerun()

        visitors = [threading.Thread(target=timed, args=("About page (new visitor)",
                                                          lambda: fresh("status"))),
                    threading.Thread(target=timed, args=("Explorer chart (new visitor)",
                                                          lambda: fresh("")))]
        for th in visitors:
            th.start()
        for th in threads + visitors:
            th.join(600)
        t1 = time.monotonic()
        health.stop()
        tree.stop()
        for h in (*heavy, up):
            h.close()
        out = {"seconds": times, "errors": errors,
               "health": health.window(t0, t1), "peak_rss_mb": tree.peak_rss(t0, t1)}
    finally:
        s.stop()
    return out


# ----------------------------------------------------------------------------- race
def race(repo: Path, tmp: Path) -> dict[str, Any]:
    s = _server(repo, {}, tmp)
    try:
        blob = b"x" * int(9.5 * 1024 * 1024)
        with ProtocolSession(s.url, page="status") as sess:
            sess.rerun()
            rss0 = TreeSampler(s.proc.pid).sample().rss_mb
            statuses: list[int] = []
            lock = threading.Lock()

            def put() -> None:
                st = sess.put_file(f"/_stcore/upload_file/{sess.session_id}/"
                                   f"{uuid.uuid4().hex}", "big.csv", blob)
                with lock:
                    statuses.append(st)

            ths = [threading.Thread(target=put) for _ in range(32)]
            for th in ths:
                th.start()
            for th in ths:
                th.join(300)
            rss1 = TreeSampler(s.proc.pid).sample().rss_mb
        return {"accepted": statuses.count(204), "refused": len(statuses) - statuses.count(204),
                "statuses": sorted(set(statuses)), "rss_mb": [round(rss0), round(rss1)]}
    finally:
        s.stop()


# ----------------------------------------------------------------------------- health
def _raw_status(port: int, request: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(request)
        head = c.recv(64)
    return int(head.split()[1])


def dockerfile_healthcheck(port: int, repo: Path = REPO_ROOT) -> list[str]:
    """The Dockerfile's HEALTHCHECK command, on `port` instead of 8501."""
    text = (repo / "Dockerfile").read_text()
    cmd = text.split("HEALTHCHECK", 1)[1].split("CMD", 1)[1].split("\n\n", 1)[0]
    args = json.loads(cmd.replace("\\\n", " ").strip())
    return [streamlit_python() if a == "python" else a.replace("8501", str(port))
            for a in args]


def health(repo: Path, tmp: Path) -> dict[str, Any]:
    s = _server(repo, {"EAE_ALLOWED_HOSTS": "eae.example.org"}, tmp, host="eae.example.org")
    try:
        docker = subprocess.run(dockerfile_healthcheck(s.port, repo), capture_output=True,
                                text=True, timeout=60)
        kube = _raw_status(s.port, f"GET /_stcore/health HTTP/1.1\r\nHost: 10.1.2.3:{s.port}"
                                   "\r\nConnection: close\r\n\r\n".encode())
        nohost = _raw_status(s.port, b"GET /_stcore/health HTTP/1.0\r\n\r\n")
        page = _raw_status(s.port, f"GET / HTTP/1.1\r\nHost: 10.1.2.3:{s.port}\r\n"
                                   "Connection: close\r\n\r\n".encode())
        return {"dockerfile HEALTHCHECK exit": docker.returncode,
                "dockerfile HEALTHCHECK error": docker.stderr.strip().splitlines()[-1:],
                "kubelet probe (Host 10.1.2.3)": kube, "probe without Host": nohost,
                "a page as Host 10.1.2.3": page}
    finally:
        s.stop()


# ----------------------------------------------------------------------------- spec
def _capped_run(args: list[str], cwd: Path, env: dict[str, str], timeout: float
                ) -> dict[str, Any]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    t = time.monotonic()
    p = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=cap, start_new_session=True)
    peak = 0.0
    err = ""
    while True:
        try:
            err = p.communicate(timeout=0.2)[1]
            break
        except subprocess.TimeoutExpired:
            peak = max(peak, TreeSampler(p.pid).sample().rss_mb)
            if time.monotonic() - t > timeout:
                os.killpg(p.pid, signal.SIGKILL)
                err = p.communicate()[1]
                return {"seconds": f"> {timeout:g} (killed)", "peak_rss_mb": round(peak),
                        "exit": None, "traceback": "Traceback" in err}
    return {"seconds": round(time.monotonic() - t, 2), "peak_rss_mb": round(peak),
            "exit": p.returncode, "traceback": "Traceback" in err,
            "message": (err.strip().splitlines() or [""])[-1][:200]}


def spec(repo: Path, tmp: Path, timeout: float) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(repo), "EAE_CACHE_DIR": str(tmp / "cache")}
    specs = {
        "70-byte linear spec": '{"axes":[{"field":"model.width","linear":[1,100,1000000000]}]}',
        "1,000,000 explicit values": json.dumps(
            {"axes": [{"field": "init.scale", "values": [1e-3] * 1_000_000}]}),
        "nested JSON (100,000 deep)": '{"axes":' + "[" * 100_000 + "]" * 100_000 + "}",
    }
    out = {}
    for name, text in specs.items():
        path = tmp / f"{uuid.uuid4().hex}.json"
        path.write_text(text)
        out[name] = _capped_run([streamlit_python(), "-m", "dynamics", "sweep", str(path),
                                 "--out", str(tmp / "o.csv"), "--quiet"], repo, env, timeout)
    return out


# ----------------------------------------------------------------------------- cluster
_CLUSTER_CHILD = r"""
import inspect, json, os, signal, subprocess, sys, threading, time
from distributed import Client, LocalCluster
from dynamics.sweeps import Sweep, run_sweep
cluster = LocalCluster(n_workers=0, processes=True, dashboard_address=None)
client = Client(cluster)
def worker():
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                             cluster.scheduler_address, "--nthreads", "1", "--no-nanny",
                             "--no-dashboard"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
w = worker()
client.wait_for_workers(1, timeout=120)
sweep = Sweep.from_dict({"base": {"data": {"kind": "teacher", "d": 8, "n": 400},
                                  "model": {"width": 50}, "integrator": {"t_end": 50}},
                         "axes": [{"field": "init.scale", "log": [1e-4, 1e-2, 40]}],
                         "seeds": 2})
done, notes, t_kill = [0], [], [None]
def progress(k, total, row):
    done[0] = k
kw = {}
if "notice" in inspect.signature(run_sweep).parameters:
    kw["notice"] = lambda text: notes.append((time.monotonic(), text))
res = {}
th = threading.Thread(target=lambda: res.update(r=run_sweep(sweep, client=client,
                                                              progress=progress, **kw)))
th.start()
while done[0] < 3:
    time.sleep(0.05)
os.kill(w.pid, signal.SIGKILL)
t_kill[0] = time.monotonic()
at_kill = done[0]
deadline = t_kill[0] + 30
while time.monotonic() < deadline and not any("no workers" in n for _, n in notes):
    time.sleep(0.05)
said = [(round(t - t_kill[0], 2), n) for t, n in notes if "no workers" in n]
w2 = worker()
th.join(600)
r = res.get("r")
print(json.dumps({"points done at the kill": at_kill, "said": said[:1] or "never in 30 s",
                  "statuses after a new worker": r.status_counts() if r else None}))
w2.kill()
client.close(); cluster.close()
"""


def cluster(repo: Path, tmp: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(repo), "EAE_CACHE_DIR": str(tmp / "cache")}
    p = subprocess.run([streamlit_python(), "-c", _CLUSTER_CHILD], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=900)
    lines = p.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": p.stderr[-2000:]}


# ----------------------------------------------------------------------------- csv
_CSV_CHILD = r"""
import csv, io, json, subprocess, sys, tempfile, pathlib, pandas as pd
from dynamics import exports
df = pd.DataFrame({"label": ["\r=2+2", "ok"], "x": [1.0, 2.0]})
rows = list(csv.reader(io.StringIO(exports.csv_bytes(df).decode(), newline="")))
out = {"csv_bytes rows": len(rows) - 1,
       "csv_bytes: a row starts with '='": any(r and r[0].startswith("=") for r in rows)}
tmp = pathlib.Path(tempfile.mkdtemp())
spec = {"base": {"model": {"width": 4}, "integrator": {"t_end": 1}},
        "axes": [{"field": "data.kind", "values": ["points", "\r=2+2"]}]}
(tmp / "s.json").write_text(json.dumps(spec))
subprocess.run([sys.executable, "-m", "dynamics", "sweep", str(tmp / "s.json"), "--out",
                str(tmp / "o.csv"), "--quiet", "--workers", "1"], capture_output=True)
text = (tmp / "o.csv").read_bytes().decode() if (tmp / "o.csv").exists() else ""
rows = list(csv.reader(io.StringIO(text, newline="")))
out["eae sweep rows"] = len(rows) - 1
out["eae sweep: a row starts with '='"] = any(r and r[0].startswith("=") for r in rows)
print(json.dumps(out))
"""


def csv_case(repo: Path, tmp: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(repo), "EAE_CACHE_DIR": str(tmp / "cache")}
    p = subprocess.run([streamlit_python(), "-c", _CSV_CHILD], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=600)
    lines = p.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": p.stderr[-2000:]}


_PREGATE_CHILD = r"""
import inspect, io, json, time
import numpy as np
from dynamics.config import Config
from dynamics.data import build_dataset
from dynamics.timescales import with_auto_time
from dynamics.uploads import parse_upload
from dynamics.sweeps import Sweep, SweepError

def best(fn, k=3):
    out = []
    for _ in range(k):
        t = time.perf_counter(); fn(); out.append(time.perf_counter() - t)
    return round(min(out), 4)

res = {}
for n, d in ((20000, 8), (20000, 1024)):
    c = Config.from_dict({"data": {"kind": "teacher", "n": n, "d": d}})
    res[f"teacher data {n} x {d}"] = best(lambda: build_dataset(c))
    ds = build_dataset(c)
    res[f"auto end time {n} x {d} (data given)"] = best(lambda: with_auto_time(
        Config.from_dict({"data": {"kind": "teacher", "n": n, "d": d}, "seed": 7}), ds), 1)
buf = io.BytesIO()
np.savez_compressed(buf, X=np.zeros((20000, 1024)), y=np.where(np.arange(20000) % 2, 1.0, -1.0))
blob = buf.getvalue()
res["upload 20000 x 1024: parse"] = best(lambda: parse_upload("z.npz", blob, loss="exponential"))
p = parse_upload("z.npz", blob, loss="exponential")
d = {"data": {"kind": "array", "X": p.X, "y": p.y}, "loss": {"kind": "exponential"}}
res["upload: Config"] = best(lambda: Config.from_dict(d))
cfg = Config.from_dict(d)
res["upload: cache key"] = best(lambda: Config.from_dict(d).cache_key())
omit = "omit" in inspect.signature(Config.to_query).parameters
res["upload: link parameters" + (" (upload left out)" if omit else " (arrays as lists)")] = best(
    (lambda: cfg.to_query(omit=("data.X", "data.y"))) if omit else (lambda: cfg.to_query()), 1)
spec = {"axes": [{"field": "init.scale", "values": [1e-3 * (1 + i) for i in range(5000)]}]}
res["sweep spec: 5,000 values validated"] = best(lambda: Sweep.from_dict(spec), 1)
def refuse():
    try:
        Sweep.from_json(json.dumps({"axes": [{"field": "init.scale",
                                              "values": [1e-3] * 1_000_000}]}))
    except SweepError:
        pass
res["sweep spec: 1,000,000 values refused"] = best(refuse, 1)
print(json.dumps(res))
"""


def pregate(repo: Path, tmp: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(repo), "EAE_CACHE_DIR": str(tmp / "cache")}
    p = subprocess.run([streamlit_python(), "-c", _PREGATE_CHILD], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=1800)
    lines = p.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": p.stderr[-2000:]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench hosting", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default=str(REPO_ROOT), help="checkout to serve and import")
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma list of {CASES}")
    ap.add_argument("--spec-timeout", type=float, default=120.0,
                    help="seconds a spec case may take before it is killed")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)
    repo = Path(args.repo).resolve()
    m = machine()
    results: dict[str, Any] = {"cpu": m["cpu"], "cores": m["cores"], "repo": str(repo),
                               "load_before": loadavg_text()}
    for case in [c.strip() for c in args.cases.split(",") if c.strip()]:
        with tempfile.TemporaryDirectory(prefix=f"eae_hosting_{case}_") as t:
            tmp = Path(t)
            print(f"[hosting] {case}…", file=sys.stderr, flush=True)
            if case == "contention":
                results[case] = contention(repo, tmp)
            elif case == "race":
                results[case] = race(repo, tmp)
            elif case == "health":
                results[case] = health(repo, tmp)
            elif case == "spec":
                results[case] = spec(repo, tmp, args.spec_timeout)
            elif case == "cluster":
                results[case] = cluster(repo, tmp)
            elif case == "csv":
                results[case] = csv_case(repo, tmp)
            elif case == "pregate":
                results[case] = pregate(repo, tmp)
            else:
                print(f"unknown case {case!r}; choose from {CASES}", file=sys.stderr)
                return 2
        print(json.dumps({case: results[case]}, indent=1, default=str), flush=True)
    results["load_after"] = loadavg_text()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print(f"CPU: {m['cpu']} ({m['cores']} cores); load {results['load_before']} → "
          f"{results['load_after']} (a shared machine, run niced)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
