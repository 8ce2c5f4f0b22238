"""Run the benchmark's sections and collect their raw results (no formatting: bench.render).

Sections (each a table in the report, each goal a ratio measured in this same run):

1. ``gd``: GD step, µs per full-batch step (square loss, mean, float64) of the core, NumPy,
   PyTorch and JAX at four sizes (bench.gd_peers); peers that do not import are skipped with a
   note. ``blas2``: the core's other threadings at the threaded sizes, in fresh processes.
2. ``three_point``, ``chistikov`` (``lsoda``): adaptive gradient flow against SciPy's
   ``solve_ivp`` on the same ODE (bench.flow). Boursier & Flammarion's three points to their
   t = 2000 (our t = 4000, since their loss (1/n)Σ(h − y)² is twice ours; plus fixed-step GD
   with their η = 1e-3, our 2e-3), and a Chistikov et al. teacher run (d = n = 16, m = 200,
   λ = 4⁻⁶) to a time where the loss is below 1e-6.
3. ``kink``: accuracy at kinks: the drift of a_j² − ‖w_j‖² at rtol 1e-6, 1e-8, 1e-10 on two
   kinked runs (leaky ReLU clusters, Wang & Ma's signals with a trained output layer) for gf,
   diffrax and SciPy RK23 (bench.flow.kink_section).
4. ``flow``: end to end on three runs (three points, teacher, Wang & Ma): the bare stepper,
   ``simulate()`` with every frame's metrics, diffrax (optional, like JAX; compile time apart)
   and SciPy RK23 at the same frame times, and their ratios (bench.flow.end_to_end).
5. ``memory``: bytes per frame of a Trajectory at m = 1000 (bench.runtime).
6. ``threads``: two simulations in two threads against one alone (bench.runtime).
7. ``startup``: a fresh process to its first result, with an empty numba cache (cold) and with
   the cache filled by the previous run (warm), in a private NUMBA_CACHE_DIR (bench.runtime).
8. ``precompute``: the pre-run computations of the page path (auto end time, analysis) at
   every size up to the limits, time, peak memory and GIL gaps, before (revision
   `bench.precompute.BEFORE_REV`, capped) → after (bench.precompute).

Not a test: nothing here asserts a speed. ``quick`` shrinks every section (smoke tests).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dynamics.kernels import default_tolerances

from . import peers
from .flow import end_to_end, gf_vs_scipy, kink_section
from .gd_peers import SIZES, THREADED_WORK, core_variants, gd_table
from .machine import core_blas_threads, core_threads, loadavg, machine
from .precompute import precompute_section
from .problems import EXAMPLES, from_config, three_point
from .runtime import memory_section, startup_section, threads_section

#: Section names, in the order they run; `Options.skip` takes any of them.
SECTIONS = ("gd", "blas2", "three_point", "chistikov", "lsoda", "kink", "flow", "memory",
            "threads", "startup", "precompute")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Options:
    """What to measure. `quick`: tiny sizes, short runs (smoke test); `repeats` None: 1 when
    quick, else 7 interleaved rounds; `sizes` None: (3, 2, 10) when quick, else `SIZES`."""

    quick: bool = False
    sizes: list[tuple[int, int, int]] | None = None
    repeats: int | None = None
    peers: tuple[str, ...] = peers.PEERS
    skip: frozenset[str] = field(default_factory=frozenset)
    argv: str = ""  # the command line's arguments, shown in the report's first line


def measure(opts: Options, say: Callable[[str], None] = _say) -> dict[str, Any]:
    """Every section not in `opts.skip`; returns the raw results that `bench.render` formats
    (JSON-serialisable with ``default=str``). `say` reports progress."""
    started = time.perf_counter()
    quick, skip = opts.quick, opts.skip
    repeats = opts.repeats or (1 if quick else 7)
    sizes = opts.sizes or ([(3, 2, 10)] if quick else SIZES)
    target_s = 0.02 if quick else 0.25
    res: dict[str, Any] = {"machine": machine(), "gd_variants": {}, "argv": opts.argv,
                           "core_threads": core_threads()}
    if "gd" not in skip:
        say("GD step vs peers ...")
        res["gd"] = gd_table(sizes, repeats, list(opts.peers), target_s)
        if "blas2" not in skip:
            big = [sz for sz in sizes if sz[0] * sz[1] * sz[2] > THREADED_WORK]
            if big:
                say("core GD on one thread / with OpenBLAS threads (subprocesses) ...")
                res["gd_variants"] = core_variants(big, repeats, target_s)
    methods = ["RK23"] if quick else ["RK23", "RK45"] + ([] if "lsoda" in skip else ["LSODA"])
    if "three_point" not in skip:
        say("three points: gf vs solve_ivp ...")
        p, W0, a0 = three_point(20 if quick else 200)
        # The run: loss (1/n)Σ(h−y)² = 2L to t = 2000, i.e. our flow to t = 4000, and
        # its GD with η = 1e-3 on 2L is ours with η = 2e-3.
        res["three_point"] = gf_vs_scipy(
            "Boursier & Flammarion three points", p, W0, a0, 40.0 if quick else 4000.0,
            1e-6, 1e-12, methods, gd_lr=None if quick else 2e-3)
    if "chistikov" not in skip:
        say("Chistikov teacher run: gf vs solve_ivp ...")
        _, p, W0, a0 = from_config(EXAMPLES / "teacher.json",
                                   **({"model.width": 20} if quick else {}))
        rtol, atol = default_tolerances(W0, a0)
        res["chistikov"] = gf_vs_scipy(
            "Chistikov et al. teacher (centred, d = n = 16, λ = 4⁻⁶)", p, W0, a0,
            20.0 if quick else 1000.0, rtol, atol, [m for m in methods if m != "LSODA"])
    if "kink" not in skip:
        say("accuracy at kinks: gf, diffrax, SciPy RK23 ...")
        res["kink"] = kink_section(quick)
    if "flow" not in skip:
        say("end to end: bare stepper, simulate(), diffrax, SciPy RK23 ...")
        res["flow"] = end_to_end(quick, 1 if quick else 5)
    if "memory" not in skip:
        say("memory ...")
        res["memory"] = memory_section(quick)
    if "threads" not in skip:
        say("threads ...")
        res["threads"] = threads_section(quick, 1 if quick else 7)
    if "startup" not in skip:
        say("start-up ...")
        res["startup"] = startup_section()
    if "precompute" not in skip:
        say("pre-run computations at every size (before -> after) ...")
        res["precompute"] = precompute_section(quick, say=say)
    res["core_blas_threads"] = core_blas_threads()
    res["load_end"] = loadavg()
    res["duration_s"] = time.perf_counter() - started
    return res
