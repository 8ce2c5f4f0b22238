"""While a server compiles its kernels (`dynamics.warmup` in its own thread), the other
threads run the kernels' own Python source uncompiled (`kernels.cache.call`): a small run is
computed at once, marked provisional and never cached; it agrees with the compiled kernels —
bit for bit for the square loss, to round-off for the losses whose exp/log NumPy and the
compiled code evaluate differently — and a larger run calls the compiled kernels."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from dynamics.config import Config
from dynamics.cost import PROVISIONAL_MAX_S, interpreted_seconds
from dynamics.kernels import cache
from dynamics.service import Service
from dynamics.simulate import simulate

SMALL = {"model": {"width": 8}, "integrator": {"t_end": 20.0}, "record": {"frames": 12}}


@contextmanager
def compiling_elsewhere() -> Iterator[None]:
    """Another thread is the warm-up (it holds the warming flag, as `warm_kernels` does)."""
    started, stop = threading.Event(), threading.Event()

    def warm() -> None:
        cache.begin_warming()
        started.set()
        stop.wait()
        cache.end_warming()

    t = threading.Thread(target=warm, daemon=True)
    t.start()
    started.wait()
    try:
        yield
    finally:
        stop.set()
        t.join()


def _cfg(**sections: dict) -> Config:
    raw = {k: dict(v) for k, v in SMALL.items()}
    for k, v in sections.items():
        raw.setdefault(k, {}).update(v)
    return Config.from_dict(raw)


def test_a_small_run_is_computed_uncompiled_and_agrees_with_the_kernels():
    square, logistic = _cfg(), _cfg(loss={"kind": "logistic"}, model={"gamma": 0.1})
    gd = _cfg(integrator={"method": "gd", "lr": 0.05, "t_end": 5.0})
    want = {c: simulate(c) for c in (square, logistic, gd)}
    assert all(interpreted_seconds(c) <= PROVISIONAL_MAX_S for c in want)
    with compiling_elsewhere():
        assert cache.compiling_elsewhere()
        got = {c: simulate(c) for c in want}
    assert not cache.compiling_elsewhere()
    for c, tr in got.items():
        assert tr.meta.get("provisional") is True and not want[c].meta.get("provisional")
        assert tr.status == want[c].status == "completed"
    for c in (square, gd):  # same operations in the same order: the same bits
        assert np.array_equal(got[c].W, want[c].W) and np.array_equal(got[c].loss, want[c].loss)
    a, b = got[logistic], want[logistic]  # exp/log: libm against NumPy, the last bits
    np.testing.assert_allclose(a.W, b.W, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-9)


PROBE = """
import json, sys, threading
from numba.core.registry import CPUDispatcher
from dynamics.config import Config
from dynamics.kernels import cache, gd, gd_split, gf, loss, measure
from dynamics.simulate import simulate
started, stop = threading.Event(), threading.Event()
def warm():
    cache.begin_warming(); started.set(); stop.wait(); cache.end_warming()
threading.Thread(target=warm, daemon=True).start(); started.wait()
tr = simulate(Config.from_dict(json.loads(sys.argv[1])))
kernels = [v for m in (gd, gd_split, gf, loss, measure) for v in vars(m).values()
           if isinstance(v, CPUDispatcher)]
print(json.dumps({"status": tr.status, "provisional": bool(tr.meta.get("provisional")),
                  "kernels": len(kernels), "compiled": sum(len(k.signatures) > 0
                                                         for k in kernels)}))
"""


def test_no_kernel_is_compiled_or_loaded_meanwhile(tmp_path: Path):
    """The check above could pass with the compiled kernels: in a fresh process with an
    empty numba cache, a run made while another thread holds the warm-up leaves every kernel
    without a compiled signature (nothing compiled, nothing loaded)."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(SMALL)], env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["status"] == "completed" and got["provisional"]
    assert got["kernels"] >= 10 and got["compiled"] == 0, got
    assert not any((tmp_path / "numba").rglob("*.nbi"))  # nothing written to the cache


def test_a_larger_run_waits_for_the_compiler_and_provisional_runs_are_not_cached(
        tmp_path: Path):
    big = _cfg(data={"kind": "teacher", "d": 8, "n": 400}, model={"width": 200},
               integrator={"t_end": 5.0})
    assert interpreted_seconds(big) > PROVISIONAL_MAX_S
    svc = Service(tmp_path)
    with compiling_elsewhere():
        tr = svc.run(big)
        small = svc.run(_cfg())
        again = svc.run(_cfg())
    assert not tr.meta.get("provisional")  # the compiled kernels computed it
    assert small.meta.get("provisional") and again.meta.get("provisional")
    assert svc.stats()["computations"] == 3  # the provisional one was not kept
    exact = svc.run(_cfg())
    assert not exact.meta.get("provisional") and svc.stats()["computations"] == 4
    assert svc.peek(_cfg()) is not None and svc.peek(big) is not None
