"""Same config, same bits: in any process, whether numba compiled the kernels or loaded them
from its disk cache, and with any number of threads.

A process with an empty NUMBA_CACHE_DIR (it compiles every kernel) and a second one that reuses
that cache (it loads them: numba's own counters say it compiled nothing) run the probe of
dynamics/same_bits.py (a digest of every array of gf runs at widths 2–7 on the three-point and
the default data, and of gd runs); both must agree, and agree with the test process's own
kernels (compiled here, or loaded from the suite's cache). The cold process is scripts/test.sh's
warm-up when it compiled into an empty cache (its record is in EAE_COLD_BITS), so a cold suite
compiles every kernel once, not twice; otherwise the test runs its own in a fresh directory.
With fast-math reassociation in the kernels, compiled and cache-loaded `_gf_run` differed in
the last bits.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dynamics.kernels import GDStepper, blocks_for
from dynamics.same_bits import digests
from tests.test_core import random_problem

ROOT = Path(__file__).resolve().parents[1]


def run_probe(cache: Path, record: Path) -> dict:
    """Run the warm-up and the probe in a fresh process over `cache`; its record."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "dynamics.same_bits", "--write", str(record)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(record.read_text())


def _is_cold(record: dict) -> bool:
    return record["nbi_before"] == 0 and record["hits"] == 0 and record["misses"] > 0 \
        and record["nbi_after"] > 0


def _cold_record(tmp_path: Path) -> tuple[dict, Path]:
    """scripts/test.sh's warm-up record if it compiled every kernel into this suite's (then
    empty) NUMBA_CACHE_DIR, else a cold process of our own over an empty directory."""
    path, suite_cache = os.environ.get("EAE_COLD_BITS"), os.environ.get("NUMBA_CACHE_DIR")
    text = Path(path).read_text() if path and Path(path).is_file() else ""
    if text and suite_cache:  # empty if the warm-up failed (the file is made before it runs)
        record = json.loads(text)
        if _is_cold(record) and record["cache_dir"] == suite_cache:
            return record, Path(suite_cache)
    cache = tmp_path / "numba_cache"
    record = run_probe(cache, tmp_path / "cold.json")
    assert _is_cold(record), record
    return record, cache


@pytest.mark.heavy
# liveness bounds, not timings: a cold compile of every kernel took over 300 s beside a
# loaded host's other work (load average 20 on 2 cores)
@pytest.mark.timeout(3000)
def test_compiled_and_cache_loaded_kernels_give_the_same_bits(tmp_path: Path) -> None:
    cold, cache = _cold_record(tmp_path)  # compiled every kernel from scratch
    warm = run_probe(cache, tmp_path / "warm.json")  # loads every kernel from that cache
    assert warm["misses"] == 0 and warm["hits"] > 0, \
        f"the warm process compiled {warm['misses']} kernel signatures instead of loading"
    assert len(warm["digests"]) == 6 + 6 + 6 + 1 + 3
    assert cold["digests"] == warm["digests"]
    # this process's kernels: compiled here or loaded from the suite's cache
    assert digests() == cold["digests"]


def test_split_bits_are_the_same_with_1_2_and_3_threads() -> None:
    """A multi-block GD step: the block count comes from (n, d, m); threads only run them (with
    per-layer rates too: the reduction scales each layer's sum)."""
    n, d, m = 1200, 40, 120  # n·d·m = 5.76e6: 1 block by size; force 6 as a large run has
    p, W, a = random_problem(n, d, m, "square", "mean", 0.1, True, seed=2, c=1.0)
    W, a = W / np.sqrt(d), a / np.sqrt(m)
    grid = np.linspace(0.0, 1.0, 11)
    for prob in (p, dataclasses.replace(p, lr_w=2.0, lr_a=0.5)):
        runs = []
        for threads in (1, 2, 3):
            gd = GDStepper(prob, W, a, 0.02, path="blas", blocks=6, threads=threads)
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
