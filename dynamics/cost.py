"""What a run will cost, before it starts: gradient evaluations × n·d·m multiply-adds, in
seconds of one core of this server.

One gradient evaluation is counted as n·d·m multiply-adds (a forward pass, roughly: the checks
of `config/checks.py` count the same way). gd takes exactly t_end/lr steps of one evaluation.
gf is adaptive, so its count is not known in advance: `GF_EVALUATIONS` is what the Explorer's
runs typically take (measured: 970–7,100 evaluations for the presets and auto end times, median
about 2,000; Wang & Ma's kink sliding can take far more, and the deadline bounds those), and
never fewer than the compute limit's floor (`gf_min_evaluations`).

Seconds = evaluations × (n·d·m · `SECONDS_PER_MULTIPLY_ADD` + `SECONDS_PER_EVALUATION`) plus
`PRE_RUN_S` of theory and analysis for d > 2 (the extremal search's budgets). Calibrated on the
2-core test machine, quiet: a GD step of (n, d, m) = (2000, 64, 200) takes 2.4 ms on one thread
(9.5·10⁻¹¹ s per multiply-add), the digits run of the Real data page (360 × 64 × 50, gf,
3,755 evaluations) about 2.5 s (5.8·10⁻¹⁰); 3·10⁻¹⁰ lies between, and small runs pay a few µs
per evaluation whatever their size. A busy server is slower: the estimate is of the work, not a
promise of the time.
"""

from __future__ import annotations

from .config import Config
from .config.checks import data_shape, gf_min_evaluations
from .data import teacher_tries
from .extremal import plan_search
from .timescales import AUTO_BUDGET

SECONDS_PER_MULTIPLY_ADD = 3e-10
SECONDS_PER_EVALUATION = 2e-6
GF_EVALUATIONS = 3000
PRE_RUN_S = 0.3  # auto end time and analysis for d > 2: their searches' budgets, ≈ 3·10⁸
SECONDS_PER_DATA_VALUE = 2e-8  # drawing and checking one value of X (a normal variate: 15 ns)


def evaluations(config: Config) -> float:
    """Gradient evaluations a run of `config` is expected to take (gd: exact; gf: typical)."""
    it = config.integrator
    if it.method == "gd":
        return it.t_end / it.lr
    return float(max(GF_EVALUATIONS, gf_min_evaluations(config)))


def work(config: Config) -> float:
    """Expected multiply-adds: evaluations × n·d·m."""
    n, d = data_shape(config.data)
    return evaluations(config) * n * d * config.model.width


def estimate_seconds(config: Config) -> float:
    """Expected seconds of one core for the run and its pre-run computations."""
    n, d = data_shape(config.data)
    per_eval = n * d * config.model.width * SECONDS_PER_MULTIPLY_ADD + SECONDS_PER_EVALUATION
    return evaluations(config) * per_eval + (PRE_RUN_S if d > 2 else 0.0)


INTERPRETED_SLOWDOWN = 400.0  # the uncompiled kernels against the compiled ones (measured
# 16–300× on the 2-core test machine: the default Explorer run 1.9 s against 6.4 ms estimated)
PROVISIONAL_MAX_S = 4.0  # while the kernels compile, runs estimated at most this uncompiled
# are computed at once (provisionally); the others wait for the compiler


def interpreted_seconds(config: Config) -> float:
    """Expected seconds of the run with the kernels uncompiled (`kernels.cache.call`, while a
    server compiles them): INTERPRETED_SLOWDOWN × `estimate_seconds`."""
    return INTERPRETED_SLOWDOWN * estimate_seconds(config)


def pre_run_seconds(config: Config) -> float:
    """Seconds of the work a page does with `config` before its run can start, from (n, d)
    alone: building the data (n·d values; teacher data up to `data.teacher_tries` draws) and,
    for d > 2, the auto end time's extremal search on its budget (`extremal.plan_search`'s
    cost). A page whose link asks for more than a moment of it takes it off the page slot
    (`runtime.admission.Slots.divert`)."""
    n, d = data_shape(config.data)
    values = float(n) * d * (teacher_tries(n, d) if config.data.kind == "teacher" else 1)
    search = plan_search(n, d, AUTO_BUDGET).cost if d > 2 else 0.0
    return values * SECONDS_PER_DATA_VALUE + search * SECONDS_PER_MULTIPLY_ADD


def remaining_seconds(estimate_s: float, elapsed_s: float, progress: float) -> float:
    """Seconds a running run still needs (at least 1), from its estimate and its progress (the
    fraction of its time range done): the larger of what is left of the estimate and the pace
    so far, elapsed · (1 − p)/p, once that pace is telling (after a second, or once the run
    has outlived its estimate; with no progress yet, at least as long again). A queue
    said "about 1 s" while the run ahead, estimated at a few seconds, was at t = 0.28 of 20
    after a minute."""
    p = min(max(float(progress), 0.0), 1.0)
    left = max(estimate_s - elapsed_s, 0.0)
    if elapsed_s >= 1.0 or elapsed_s >= estimate_s:
        pace = elapsed_s * (1.0 - p) / p if p > 0 else elapsed_s
        left = max(left, pace)
    return max(1.0, left)


def describe_seconds(seconds: float) -> str:
    """'about 40 s', 'about 3 min', 'about 2 h' (two significant figures at most)."""
    if seconds < 90:
        return f"about {max(1, round(seconds)):d} s"
    if seconds < 5400:
        return f"about {round(seconds / 60):d} min"
    return f"about {seconds / 3600:.2g} h"


__all__ = ["GF_EVALUATIONS", "SECONDS_PER_MULTIPLY_ADD", "describe_seconds", "estimate_seconds",
           "evaluations", "pre_run_seconds", "remaining_seconds", "work"]
