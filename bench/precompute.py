"""Pre-run computations on the page path, at every size up to the limits: the Explorer's auto
end time (`timescales.with_auto_time`: the extremal-vector search) and the analysis of a run
(`analysis.analyse`), time and peak memory, before → after.

    .venv/bin/python -m bench precompute [--quick] [--before REV] [--json out.json]

Each case runs in a fresh process (`CHILD`) on teacher data (n points, d dimensions, m
neurons): the dataset is built first (timed apart: it is the data, not the theory), then the
phase, with a ticker thread that sleeps 1 ms in a loop and records its longest gap — the
longest time the phase kept the interpreter (GIL) from another thread; the same ticker over an
idle second gives the machine's own scheduling delay for comparison. Peak memory is the rise
of the process's peak RSS during the phase. The analysis runs on a one-frame trajectory
(`simulate` cancelled before its first step), saved once and loaded by both versions.

"Before" runs the same child on the library at git revision REV (extracted with `git
archive`), under an address-space cap (`CAP_GB`) and a timeout (`TIMEOUT_S`): a case that hits
either is reported as such, and larger n at the same d are not tried. Also a section of
`python -m bench` (``precompute``), rendered in bench/REPORT.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .machine import loadavg
from .problems import REPO

BEFORE_REV = "29a6bde"  # the code issue 24 was measured on
CAP_GB = 6.0  # address-space cap of a "before" child (the old search reached 15 GB)
TIMEOUT_S = 120.0
SIZES = [(n, d) for d in (2, 8, 64, 1024) for n in (200, 2000, 8000, 20000)]
QUICK_SIZES = [(200, 8), (2000, 8), (2000, 1024)]
WIDTHS = (100, 5000)

CHILD = r"""
import json, resource, sys, threading, time
phase, traj_file = sys.argv[1], sys.argv[5]
n, d, m = (int(v) for v in sys.argv[2:5])
from dynamics.config import Config
from dynamics.data import build_dataset

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

class Ticker:
    def __init__(self):
        self.gap, self.stop = 0.0, False
        self.t = threading.Thread(target=self.run, daemon=True)
    def run(self):
        last = time.perf_counter()
        while not self.stop:
            time.sleep(0.001)
            now = time.perf_counter()
            self.gap = max(self.gap, now - last)
            last = now
    def __enter__(self):
        self.t.start(); return self
    def __exit__(self, *a):
        self.stop = True; self.t.join()

cfg = Config.from_dict({"data": {"kind": "teacher", "n": n, "d": d}, "model": {"width": m}})
t0 = time.perf_counter()
ds = build_dataset(cfg)
data_s = time.perf_counter() - t0
with Ticker() as idle:
    time.sleep(1.0)
if phase == "auto":
    from dynamics import timescales
    base = peak_mb()
    with Ticker() as tk:
        t0 = time.perf_counter()
        run, at = timescales.with_auto_time(cfg, ds)
        dt = time.perf_counter() - t0
    extra = {"t_end": at.t_end, "rate": at.rate}
else:
    from dynamics.analysis import analyse
    from dynamics.trajectory import Trajectory
    with open(traj_file, "rb") as f:
        traj = Trajectory.from_bytes(f.read())
    base = peak_mb()
    with Ticker() as tk:
        t0 = time.perf_counter()
        an = analyse(traj)
        dt = time.perf_counter() - t0
    extra = {"directions": len(an.directions), "notes": len(an.notes)}
print(json.dumps({"time_s": dt, "peak_mb": max(0.0, peak_mb() - base), "gil_ms": 1e3 * tk.gap,
                  "idle_ms": 1e3 * idle.gap, "data_s": data_s, **extra}))
"""


def _extract(rev: str, into: Path) -> Path:
    """The `dynamics` package at `rev` in `into` (git archive); its root directory."""
    into.mkdir(parents=True, exist_ok=True)
    tar = into / "src.tar"
    with tar.open("wb") as f:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "dynamics"], stdout=f,
                       check=True)
    with tarfile.open(tar) as t:
        t.extractall(into, filter="data")
    return into


def _make_trajectory(n: int, d: int, m: int, path: Path) -> str | None:
    """A one-frame trajectory of the teacher run (n, d, m), saved to `path` (fresh process);
    None, or why there is none: a config the server's limits refuse never reaches the analysis
    (a link or upload asking for it gets the limit's message instead)."""
    code = ("import sys; from dynamics.config import Config, ConfigError; from dynamics.simulate "
            "import simulate\ntry: c = Config.from_dict({'data': {'kind': 'teacher', 'n': "
            "int(sys.argv[1]), 'd': int(sys.argv[2])}, 'model': {'width': int(sys.argv[3])}})\n"
            "except ConfigError as e: print('refused:', str(e).split(':')[0]); raise SystemExit(3)"
            "\nopen(sys.argv[4], 'wb').write(simulate(c, cancel=lambda: True).to_bytes())")
    out = subprocess.run([sys.executable, "-c", code, str(n), str(d), str(m), str(path)],
                         cwd=REPO, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    if out.returncode == 3:
        return f"refused by the limits ({out.stdout.split('refused:')[-1].strip()})"
    if out.returncode != 0:
        raise RuntimeError(f"making the ({n}, {d}, {m}) run failed: {out.stderr[-500:]}")
    return None


def _child(root: Path, phase: str, n: int, d: int, m: int, traj: Path,
           cap_gb: float | None) -> dict[str, Any]:
    def limit() -> None:
        if cap_gb is not None:
            cap = int(cap_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, "PYTHONPATH": str(root), "EAE_CACHE_DIR": str(traj.parent / "cache")}
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, phase, str(n), str(d), str(m),
                              str(traj)], cwd=root, env=env, capture_output=True, text=True,
                             timeout=TIMEOUT_S, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return {"failed": f"> {TIMEOUT_S:.0f} s"}
    if out.returncode != 0:
        memory = "MemoryError" in out.stderr or out.returncode in (-9, 137)
        last = out.stderr.strip().splitlines()[-1][:80] if out.stderr.strip() else out.returncode
        return {"failed": f"> {cap_gb:g} GB" if memory and cap_gb else f"error: {last}"}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def precompute_section(quick: bool = False, before: str | None = BEFORE_REV,
                       say: Any = print, sizes: list[tuple[int, int]] | None = None
                       ) -> dict[str, Any]:
    """Rows (phase, n, d, m, after, before) over `sizes` (default `SIZES`, `QUICK_SIZES` when
    quick); the analysis at each m of `WIDTHS` (the smallest only when quick)."""
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    widths = WIDTHS[:1] if quick else WIDTHS
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="eae-precompute-") as tmp:
        tmpd = Path(tmp)
        old = None
        if before:
            try:
                old = _extract(before, tmpd / "before")
            except (subprocess.CalledProcessError, OSError) as e:
                say(f"before: cannot extract {before}: {e}")
        failed_before: dict[tuple[str, int, int], str] = {}
        for n, d in sizes:
            cases = [("auto", widths[0])] + [("analyse", m) for m in widths]
            for phase, m in cases:
                traj = tmpd / f"traj-{n}-{d}-{m}.eaetraj"
                say(f"{phase} n={n} d={d} m={m} ...")
                row: dict[str, Any] = {"phase": phase, "n": n, "d": d, "m": m,
                                       "load": loadavg()[0]}
                refused = (_make_trajectory(n, d, m, traj)
                           if phase == "analyse" and not traj.exists() else None)
                if refused:
                    rows.append({**row, "after": {"failed": refused}})
                    continue
                row["after"] = _child(REPO, phase, n, d, m, traj, None)
                if old is not None:
                    key = (phase, d, m)
                    if key in failed_before:
                        row["before"] = {"failed": failed_before[key] + " (at a smaller n)"}
                    else:
                        row["before"] = _child(old, phase, n, d, m, traj, CAP_GB)
                        if "failed" in row["before"]:
                            failed_before[key] = row["before"]["failed"]
                rows.append(row)
                if phase == "analyse":
                    traj.unlink(missing_ok=True)
    return {"rows": rows, "before_rev": before, "cap_gb": CAP_GB, "timeout_s": TIMEOUT_S,
            "load_end": loadavg()[0]}


def _cell(r: dict[str, Any] | None) -> tuple[str, str, str]:
    if not r:
        return "—", "—", "—"
    if "failed" in r:
        return r["failed"], "—", "—"
    return f"{r['time_s']:.2f}", f"{r['peak_mb']:,.0f}", f"{r['gil_ms']:.0f}"


def precompute_lines(sec: dict[str, Any]) -> list[str]:
    """The Markdown table of `precompute_section`'s rows."""
    rev = sec.get("before_rev") or "—"
    L = ["## Pre-run computations (auto end time, analysis) at every size", "",
         f"Teacher data; each case a fresh process. Time in s, peak = rise of peak RSS in MB, "
         f"GIL = longest gap of a 1 ms ticker thread (ms; its idle gap on this machine in the "
         f"last column). Before = revision {rev}, capped at {sec.get('cap_gb', CAP_GB):g} GB "
         f"and {sec.get('timeout_s', TIMEOUT_S):.0f} s. Load average (1 min) per row.", "",
         "| phase | n | d | m | data build (s) | time before → after (s) | peak before → after "
         "(MB) | GIL before → after (ms) | idle (ms) | load |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sec.get("rows", []):
        a, b = r.get("after", {}), r.get("before")
        ta, pa, ga = _cell(a)
        tb, pb, gb = _cell(b)
        data = f"{a['data_s']:.2f}" if "data_s" in a else "—"
        idle = f"{a['idle_ms']:.0f}" if "idle_ms" in a else "—"
        L.append(f"| {r['phase']} | {r['n']:,} | {r['d']:,} | {r['m']:,} | {data} | {tb} → "
                 f"{ta} | {pb} → {pa} | {gb} → {ga} | {idle} | {r['load']:.1f} |")
    return [*L, ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench precompute", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="three sizes, one width")
    ap.add_argument("--before", default=BEFORE_REV, help="git revision of the 'before' "
                    "column ('' to skip it)")
    ap.add_argument("--json", help="write the raw rows here")
    args = ap.parse_args(argv)
    sec = precompute_section(args.quick, args.before or None,
                             say=lambda s: print(s, file=sys.stderr, flush=True))
    print("\n".join(precompute_lines(sec)))
    if args.json:
        Path(args.json).write_text(json.dumps(sec, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
