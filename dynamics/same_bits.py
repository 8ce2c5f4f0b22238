"""The same-bits probe (same config, same bits): a digest of every array of a fixed set of
runs, and numba's record of whether this process compiled its kernels or loaded them from disk.

``digests()`` runs gf at widths 2–7 on the three-point data, gd on it, gf through `simulate` on
the default data and one gd run on the BLAS path, and hashes every array (sha256 of the float64
bytes, first 24 hex digits). ``cache_counts()`` sums numba's own per-kernel counters
(``Dispatcher.stats``): a miss is a kernel signature compiled here, a hit one loaded from disk.

``python -m dynamics.same_bits --write FILE`` runs the kernels' warm-up and the probe and
writes {package, cache_dir, nbi_before, nbi_after, hits, misses, digests} as JSON:
scripts/test.sh runs it as its warm-up, so the suite's first (cold) compilation is also
tests/test_determinism.py's cold process, instead of compiling every kernel twice.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import pkgutil
from pathlib import Path

import numpy as np


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return h.hexdigest()[:24]


def digests() -> dict[str, str]:
    """Digests of the probe's runs, by name (19 entries)."""
    from .config import Config
    from .kernels import GDStepper, GFStepper, Problem
    from .simulate import simulate

    out: dict[str, str] = {}
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
        out[f"gf three-point m={m}"] = _digest(gf.W, gf.a, r.samples.loss, r.samples.dir_rate)
        gd = GDStepper(p, W, a, 1e-2)
        r = gd.take_steps(5000, grid)
        out[f"gd three-point m={m}"] = _digest(gd.W, gd.a, r.samples.loss)
    for m in range(2, 8):  # the default data through simulate (the sweep test's configs)
        c = Config.from_dict({"model": {"width": m}, "init": {"scale": 1e-3},
                              "integrator": {"method": "gf", "t_end": 30.0},
                              "record": {"frames": 8, "scalars": 20}})
        out[f"simulate gf m={m}"] = _digest(*simulate(c).to_arrays().values())
    c = Config.from_dict({"model": {"width": 40}, "data": {"kind": "teacher", "d": 6},
                          "integrator": {"method": "gd", "lr": 0.05, "t_end": 20.0},
                          "record": {"frames": 8, "scalars": 20}})
    out["simulate gd blas"] = _digest(*simulate(c).to_arrays().values())  # n·d·m ≥ 256
    return out


def cache_counts() -> tuple[int, int]:
    """(hits, misses) of numba's disk cache over every kernel of dynamics.kernels so far in
    this process: signatures loaded from the cache, and signatures compiled here."""
    from numba.core.registry import CPUDispatcher

    from . import kernels

    seen: set[int] = set()
    hits = misses = 0
    for info in pkgutil.iter_modules(kernels.__path__, kernels.__name__ + "."):
        for obj in vars(importlib.import_module(info.name)).values():
            if isinstance(obj, CPUDispatcher) and id(obj) not in seen:
                seen.add(id(obj))
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
    return hits, misses


def _index_files(cache_dir: str) -> int:
    return sum(1 for _ in Path(cache_dir).rglob("*.nbi")) if cache_dir else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, required=True, help="the JSON record's path")
    args = parser.parse_args(argv)
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    before = _index_files(cache_dir)
    from .warmup import warm_kernels

    warm_kernels(apart=False)  # compiled here when the cache is cold: those are the bits probed
    out = digests()
    hits, misses = cache_counts()
    record = {"package": str(Path(__file__).resolve().parent), "cache_dir": cache_dir,
              "nbi_before": before, "nbi_after": _index_files(cache_dir),
              "hits": hits, "misses": misses, "digests": out}
    tmp = args.write.with_name(args.write.name + ".part")
    tmp.write_text(json.dumps(record))
    tmp.replace(args.write)  # a reader never sees half a record
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
