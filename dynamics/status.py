"""How a run (or a sweep point) ended: one enum whose members carry their meaning and the fix.

The values are the strings stored in saved trajectories (`run.json`) and sweep tables, so they
never change. `Status.message_for(end)` writes a simulation's user-facing sentence from the
facts of its end (`RunEnd`); `cacheable` says whether a result with that status is final (the
same config would end the same way again); `has_summaries` whether its summaries mean
something (it ran to t_end or to its step limit).
`divergence_fix` chooses, for a diverged run, the change that points the right way.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class RunEnd:
    """The facts a simulation's end message states.

    ``t``: gradient-flow time reached; ``method``: how the integrator is named ("gradient
    descent", "the adaptive integrator") and ``diverged_why`` its usual cause of divergence;
    ``stalled``: the integrator stopped making progress (reported as MAX_STEPS);
    ``kink_floor_steps``: adaptive steps accepted at the kink floor (0 for GD).
    """

    t: float
    t_end: float
    n_evals: int
    method: str
    diverged_why: str
    max_steps: int
    deadline: float | None = None
    stalled: bool = False
    method_key: str = "gf"
    init_scale: float = 1.0
    kink_floor_steps: int = 0


class Status(StrEnum):
    """End state of a simulation (first five) or of a sweep point (all seven)."""

    COMPLETED = "completed"
    DIVERGED = "diverged"
    DEADLINE = "deadline"
    CANCELLED = "cancelled"
    MAX_STEPS = "max_steps"
    INVALID = "invalid"  # sweep point whose config did not validate
    ERROR = "error"  # sweep point whose worker raised

    @property
    def meaning(self) -> str:
        """One phrase for tables and legends."""
        return _MEANING[self]

    @property
    def fix(self) -> str:
        """What the user can change to get a completed run ("" when nothing needs fixing)."""
        return _FIX[self]

    @property
    def cacheable(self) -> bool:
        """Final for its config: the same config ends the same way (deterministic kernels)."""
        return self in (Status.COMPLETED, Status.DIVERGED, Status.MAX_STEPS)

    @property
    def has_summaries(self) -> bool:
        """The run reached t_end or its step limit, so its summaries are meaningful."""
        return self in (Status.COMPLETED, Status.MAX_STEPS)

    def message_for(self, end: RunEnd) -> str:
        """The sentence a simulation that ended with this status shows: what happened, where,
        and (unless it completed) what to change."""
        t, t_end = end.t, end.t_end
        if self is Status.COMPLETED:
            text = f"Completed: t = {t_end:g}, {end.n_evals} gradient evaluations."
        elif self is Status.CANCELLED:
            text = f"Cancelled at t = {t:.4g}; the frames up to then are kept."
        elif self is Status.DEADLINE:
            limit = f" ({end.deadline:g} s)" if end.deadline is not None else ""
            text = (f"Stopped by the time limit{limit} at t = {t:.4g} of {t_end:g}; the "
                    f"partial run is shown. {self.fix}")
        elif self is Status.MAX_STEPS and end.stalled:
            text = (f"The integrator made no progress at t = {t:.4g}; the partial run is "
                    "shown. Loosen rtol or use gd.")
        elif self is Status.MAX_STEPS:
            text = (f"{end.method.capitalize()} used its step limit ({end.max_steps}) at "
                    f"t = {t:.4g} of {t_end:g}; the partial run is shown. {self.fix}")
        elif self is Status.DIVERGED:
            why = (end.diverged_why if end.init_scale >= TINY_INIT_SCALE
                   else "the initial weights are too small for floating point")
            text = (f"The run diverged at t ≈ {t:.4g}: the loss or the weights became "
                    f"infinite or NaN; {why}. {divergence_fix(end.method_key, end.init_scale)}")
        else:
            text = f"{self.meaning.capitalize()}. {self.fix}"
        if end.kink_floor_steps:
            text += (f" {end.kink_floor_steps} adaptive steps were taken at the kink floor: "
                     "neurons slid along ReLU kinks, where the flow is followed like GD with "
                     "a small step.")
        return text

    @classmethod
    def simulation(cls) -> tuple[Status, ...]:
        """The statuses `simulate` can return."""
        return (cls.COMPLETED, cls.DIVERGED, cls.DEADLINE, cls.CANCELLED, cls.MAX_STEPS)


_MEANING = {
    Status.COMPLETED: "reached t_end",
    Status.DIVERGED: "the loss or weights became infinite or NaN",
    Status.DEADLINE: "stopped by the time limit",
    Status.CANCELLED: "cancelled",
    Status.MAX_STEPS: "used its step limit",
    Status.INVALID: "invalid settings",
    Status.ERROR: "failed",
}

_FIX = {
    Status.COMPLETED: "",
    Status.DIVERGED: "Lower lr, the init scale or the output scale c, or use gf.",
    Status.DEADLINE: ("Shorten t_end, lower the width or the data size, or use the adaptive "
                      "integrator (gf)."),
    Status.CANCELLED: "",
    Status.MAX_STEPS: "Raise integrator.max_steps or loosen rtol.",
    Status.INVALID: "Correct the settings named in the message.",
    Status.ERROR: "See the message; this is a bug if it persists.",
}


TINY_INIT_SCALE = 1e-150  # ε below this: squares of the weights (≤ ε² = 1e-300) underflow


def divergence_fix(method: str, init_scale: float) -> str:
    """What to change after a run diverged, pointing the right way: from a tiny start
    (ε < TINY_INIT_SCALE, the weights' squares underflow in float64) a larger ε; under gd a
    smaller step (the usual cause), ε or c, or gf; under gf a smaller ε or c (the outputs
    overflow the loss), never "lower lr" or "use gf"."""
    if init_scale < TINY_INIT_SCALE:
        return ("Raise the init scale ε: at ε below 1e-150 the weights' squares underflow "
                "in floating point (1e-100 or more works).")
    if method == "gd":
        return _FIX[Status.DIVERGED]
    return "Lower the init scale ε or the output scale c."
