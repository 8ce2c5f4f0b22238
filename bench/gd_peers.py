"""GD step against its peers: µs per full-batch step of the core, NumPy, PyTorch and JAX.

The methods are timed in interleaved rounds (core, numpy, torch, jax, core, ...) so that a load
change on a shared machine hits all of them; medians over the rounds. Also a module run in a
fresh process for the core's other threadings (`core_variants`)::

    python -m bench.gd_peers --sizes "2000,784,100" --repeats 7 --target 0.25

prints the core's µs per step as JSON, [[n, d, m, µs], ...] (the environment chooses the
threading: EAE_CORE_THREADS, EAE_CORE_BLAS_THREADS).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dynamics.kernels import GDStepper, Problem, use_blas_path

from . import peers
from .problems import EMPTY, REPO, gd_problem

#: Pause between two timed calls. OpenBLAS, PyTorch's OpenMP and JAX's pool keep their
#: worker threads spinning for a while after a call; measured right after a peer, the core's
#: threaded step (dynamics/kernels/gd_split.py) ran ~2× slower than alone (20.9 ms vs ~11 ms at
#: (2000, 784, 100)) with a 0.05 s gap.
IDLE_GAP_S = 0.4
#: The four sizes (n, d, m) the GD step is compared at.
SIZES: list[tuple[int, int, int]] = [(3, 2, 100), (100, 10, 500), (2000, 64, 200),
                                     (2000, 784, 100)]
#: Other threading of the core, each measured in a fresh process right after the main table
#: (the table is the default: neuron blocks on EAE_CORE_THREADS threads, one BLAS thread each).
CORE_VARIANTS = {
    "one thread": {"EAE_CORE_THREADS": "1", "EAE_CORE_BLAS_THREADS": "1"},
    "OpenBLAS threads": {"EAE_CORE_THREADS": "1", "EAE_CORE_BLAS_THREADS": "0"},
}
#: n·d·m above which the core splits a step over threads (the sizes `core_variants` re-times).
THREADED_WORK = 262_144

Run = Callable[[int], tuple[np.ndarray, np.ndarray]]


def parse_sizes(s: str) -> list[tuple[int, int, int]]:
    """'n,d,m;n,d,m' -> [(n, d, m), ...]."""
    out = []
    for part in s.split(";"):
        n, d, m = (int(v) for v in part.split(","))
        out.append((n, d, m))
    return out


def format_sizes(sizes: list[tuple[int, int, int]]) -> str:
    """[(n, d, m), ...] -> 'n,d,m;n,d,m' (the inverse of `parse_sizes`)."""
    return ";".join(f"{n},{d},{m}" for n, d, m in sizes)


def core_runner(p: Problem, W: np.ndarray, a: np.ndarray, lr: float) -> Run:
    """run(n_steps) -> (W, a): a fresh core GD stepper advanced `n_steps` from (W, a)."""
    def run(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        g = GDStepper(p, W, a, lr)
        g.take_steps(n_steps, EMPTY)
        return g.W, g.a

    return run


def _timed(run: Run, steps: int) -> float:
    t0 = time.perf_counter()
    run(steps)
    return time.perf_counter() - t0


def gd_table(sizes: list[tuple[int, int, int]], repeats: int, peer_names: list[str],
             target_s: float) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """µs per GD step for the core and each importable peer (interleaved rounds, medians).

    Returns (rows, skipped): a row per size, and {peer: why it was skipped}.
    """
    avail = peers.available()
    skipped = {k: v for k, v in avail.items() if v is not None and k in peer_names}
    names = ["core"] + [k for k in peer_names if avail.get(k) is None]
    rows = []
    lr = 1e-3
    for n, d, m in sizes:
        p, W, a = gd_problem(n, d, m)
        runners = {"core": core_runner(p, W, a, lr)}
        for k in names[1:]:
            runners[k] = peers.MAKERS[k](p.X, p.y, W, a, lr, p.c)
        steps: dict[str, int] = {}
        check: dict[str, float] = {}
        ref = runners["core"](3)
        for k, run in runners.items():
            out = run(3)  # warm-up (JAX compiles for this length) and agreement check
            check[k] = float(max(np.max(np.abs(out[0] - ref[0])), np.max(np.abs(out[1] - ref[1])))
                             / max(np.max(np.abs(ref[0])), 1e-300))
            probe = 1
            while True:
                run(probe)  # warm-up at this length (JAX compiles one scan per length)
                dt = _timed(run, probe)
                if dt >= 0.02 or probe >= 1_000_000:
                    break
                probe *= 4
            steps[k] = max(probe, int(probe * target_s / max(dt, 1e-9)))
            if k == "jax":  # compile both scan lengths outside the timed rounds
                run(steps[k])
                run(2 * steps[k])
        times: dict[str, list[float]] = {k: [] for k in runners}
        for _ in range(repeats):
            for k, run in runners.items():
                # marginal cost of a step: (T(2s) − T(s)) / s, so each method's once-per-run
                # set-up (copies, Xᵀ, tensors, thread pool) is not spread over the steps
                t1 = _timed(run, steps[k])
                time.sleep(IDLE_GAP_S)  # let the previous call's spinning threads go idle
                t2 = _timed(run, 2 * steps[k])
                time.sleep(IDLE_GAP_S)
                times[k].append(max(t2 - t1, 1e-12) / steps[k] * 1e6)
        med = {k: statistics.median(v) for k, v in times.items()}
        row: dict[str, Any] = {"n": n, "d": d, "m": m,
                               "blocks": GDStepper(p, W, a, lr).blocks,
                               "path": "blas" if use_blas_path(n, d, m) else "fused",
                               "us": med, "spread": {k: (min(v), max(v)) for k, v in times.items()},
                               "steps": steps, "max_rel_diff": check}
        fastest_peer = min((k for k in med if k != "core"), key=lambda k: med[k], default=None)
        row["fastest_peer"] = fastest_peer
        row["ratio_best"] = med[fastest_peer] / med["core"] if fastest_peer else float("nan")
        row["ratio_numpy"] = med["numpy"] / med["core"] if "numpy" in med else float("nan")
        rows.append(row)
    return rows, skipped


def core_variants(sizes: list[tuple[int, int, int]], repeats: int,
                  target_s: float) -> dict[str, dict[str, float]]:
    """µs per core GD step under each CORE_VARIANTS environment: {variant: {"n,d,m": µs}}.

    Each variant runs `python -m bench.gd_peers` in a fresh process, since the core reads its
    thread settings when it is imported. A variant whose process fails is left out.
    """
    out: dict[str, dict[str, float]] = {}
    for name, extra in CORE_VARIANTS.items():
        env = dict(os.environ, **extra)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        r = subprocess.run([sys.executable, "-m", "bench.gd_peers", "--sizes",
                            format_sizes(sizes), "--repeats", str(repeats),
                            "--target", repr(target_s)],
                           env=env, cwd=str(REPO), capture_output=True, text=True,
                           timeout=1800)
        if r.returncode == 0:
            out[name] = {f"{n},{d},{m}": us for n, d, m, us
                         in json.loads(r.stdout.strip().splitlines()[-1])}
    return out


def main(argv: list[str] | None = None) -> int:
    """The core alone at the given sizes; prints [[n, d, m, µs per step], ...] as JSON."""
    ap = argparse.ArgumentParser(prog="python -m bench.gd_peers",
                                 description="µs per core GD step (no peers), as JSON.")
    ap.add_argument("--sizes", required=True, help="'n,d,m;n,d,m'")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--target", type=float, default=0.25, help="seconds per timed call")
    args = ap.parse_args(argv)
    rows, _ = gd_table(parse_sizes(args.sizes), args.repeats, [], args.target)
    print(json.dumps([[r["n"], r["d"], r["m"], r["us"]["core"]] for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
