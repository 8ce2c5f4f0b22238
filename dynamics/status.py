"""How a run (or a sweep point) ended: one enum whose members carry their meaning and the fix.

The values are the strings stored in saved trajectories (`run.json`) and sweep tables, so they
never change. `Status.message_for(...)` writes the user-facing sentence; `cacheable` says
whether a result with that status is final (the same config would end the same way again).
`divergence_fix` chooses, for a diverged run, the change that points the right way.
"""

from __future__ import annotations

from enum import StrEnum


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
    def ok(self) -> bool:
        """The run reached t_end (or its step limit) and its summaries are meaningful."""
        return self in (Status.COMPLETED, Status.MAX_STEPS)

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
