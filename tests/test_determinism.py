"""Same config, same bits: in any process, whether numba compiled the kernels or loaded them
from its disk cache, and with any number of threads.

A fresh process with an empty NUMBA_CACHE_DIR (it compiles every kernel) and a second one that
reuses that cache (it loads them, compiling nothing) print a digest of every array of gf runs
at widths 2–7 on the three-point and the default data, and of gd runs; both must agree, and
agree with the test process's own kernels (compiled there, or loaded from the suite's cache).
With fast-math reassociation in the kernels, compiled and cache-loaded `_gf_run` differed in
the last bits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dynamics.kernels import GDStepper, blocks_for
from tests.test_core import random_problem

ROOT = Path(__file__).resolve().parents[1]

# digests of every array of the runs below, in `out` (run in fresh processes and in this one)
_BODY = r"""
import hashlib, json
import numpy as np
from dynamics.config import Config
from dynamics.kernels import GDStepper, GFStepper, Problem
from dynamics.simulate import simulate

def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return h.hexdigest()[:24]

out = {}
x = np.array([-0.75, -0.5, 0.125])
X = np.ascontiguousarray(np.c_[x, np.ones(3)])
p = Problem(X, np.array([1.1, 0.1, 0.8]), np.ones(3), 0.0, 1.0, "square", "mean", True)
grid = np.geomspace(1e-2, 200.0, 40)
for m in range(2, 8):
    rng = np.random.default_rng(m)
    W = rng.normal(0.0, 1e-3, (m, 2))
    a = np.linalg.norm(W, axis=1) * rng.choice([-1.0, 1.0], m)
    gf = GFStepper(p, W, a, 1e-6, 1e-12)
    r = gf.advance(200.0, 10**7, grid)
    out[f"gf three-point m={m}"] = digest(gf.W, gf.a, r.samples.loss, r.samples.dir_rate)
    gd = GDStepper(p, W, a, 1e-2)
    r = gd.take_steps(5000, grid)
    out[f"gd three-point m={m}"] = digest(gd.W, gd.a, r.samples.loss)
for m in range(2, 8):  # the default data through simulate (the sweep test's configs)
    c = Config.from_dict({"model": {"width": m}, "init": {"scale": 1e-3},
                          "integrator": {"method": "gf", "t_end": 30.0},
                          "record": {"frames": 8, "scalars": 20}})
    tr = simulate(c)
    out[f"simulate gf m={m}"] = digest(*tr.to_arrays().values())
c = Config.from_dict({"model": {"width": 40}, "data": {"kind": "teacher", "d": 6},
                      "integrator": {"method": "gd", "lr": 0.05, "t_end": 20.0},
                      "record": {"frames": 8, "scalars": 20}})
tr = simulate(c)  # BLAS path (n·d·m ≥ 256)
out["simulate gd blas"] = digest(*tr.to_arrays().values())
"""
_PROBE = _BODY + "print(json.dumps(out))\n"


def _run(cache: Path) -> dict[str, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.heavy
def test_compiled_and_cache_loaded_kernels_give_the_same_bits(tmp_path: Path) -> None:
    cache = tmp_path / "numba_cache"
    cold = _run(cache)  # compiles every kernel from scratch
    index = sorted(cache.rglob("*.nbi"))
    assert index, "the cold process wrote no numba cache"
    stamps = {p: p.stat().st_mtime_ns for p in index}
    warm = _run(cache)  # loads every kernel from that cache
    assert {p: p.stat().st_mtime_ns for p in sorted(cache.rglob("*.nbi"))} == stamps, \
        "the warm process compiled again instead of loading"
    assert cold == warm
    assert len(warm) == 6 + 6 + 6 + 1
    here: dict = {}  # this process's kernels: compiled here or loaded from the suite's cache
    exec(_BODY, here)
    assert here["out"] == cold


def test_split_bits_are_the_same_with_1_2_and_3_threads() -> None:
    """A multi-block GD step: the block count comes from (n, d, m); threads only run them."""
    n, d, m = 1200, 40, 120  # n·d·m = 5.76e6: 1 block by size; force 6 as a large run has
    p, W, a = random_problem(n, d, m, "square", "mean", 0.1, True, seed=2, c=1.0)
    W, a = W / np.sqrt(d), a / np.sqrt(m)
    grid = np.linspace(0.0, 1.0, 11)
    runs = []
    for threads in (1, 2, 3):
        gd = GDStepper(p, W, a, 0.02, path="blas", blocks=6, threads=threads)
        assert (gd.blocks, gd.threads) == (6, threads)
        res = gd.advance(1.0, 10**6, grid)
        runs.append((gd.W.copy(), gd.a.copy(), res.samples.loss))
    for r in runs[1:]:
        for x, y in zip(r, runs[0], strict=True):
            assert np.array_equal(x, y)
    auto = GDStepper(p, W, a, 0.02, path="blas")
    assert auto.blocks == blocks_for(n, d, m) == 1


def test_gf_bits_do_not_depend_on_where_chunks_end() -> None:
    """`simulate` sizes chunks from measured wall time, so where a call's evaluation budget ends
    varies from run to run; the steps taken must not. One long call and calls of 4, 5 and 7
    evaluations (ending mid-step, after rejections too) give the same bits."""
    from dynamics.kernels import GFStepper, Problem

    x = np.array([-0.75, -0.5, 0.125])
    X = np.ascontiguousarray(np.c_[x, np.ones(3)])
    p = Problem(X, np.array([1.1, 0.1, 0.8]), np.ones(3), 0.05, 1.0, "square", "mean", True)
    rng = np.random.default_rng(3)
    W = rng.normal(0.0, 1e-3, (6, 2))
    a = np.linalg.norm(W, axis=1) * rng.choice([-1.0, 1.0], 6)
    grid = np.zeros(0)
    ref = GFStepper(p, W, a, 1e-6, 1e-12)
    ref.advance(60.0, 10**8, grid)
    assert ref.n_rejected > 0  # the case that lost its "just rejected" state between calls
    for budget in (4, 5, 7):
        s = GFStepper(p, W, a, 1e-6, 1e-12)
        calls = 0
        while s.t < 60.0:
            s.advance(60.0, budget, grid)
            calls += 1
        assert calls > 100
        assert (s.n_accepted, s.n_rejected) == (ref.n_accepted, ref.n_rejected)
        assert s.W.tobytes() == ref.W.tobytes() and s.a.tobytes() == ref.a.tobytes()
