"""How a run (or a sweep point) ended: one enum whose members carry their meaning and the fix.

The values are the strings stored in saved trajectories (`run.json`) and sweep tables, so they
never change. `Status.message_for(...)` writes the user-facing sentence; `cacheable` says
whether a result with that status is final (the same config would end the same way again).
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
