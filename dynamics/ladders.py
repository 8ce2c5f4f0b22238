"""The ladders the sliders and knobs offer, declared once (the settings table, `ui.settings`,
and the papers' knobs read them).

`EPS`: the init scale ε in half decades, 10^(k/2) to three significant digits for
k = −40 … 0, i.e. 1e-20 (the smallest the papers use, Min et al.'s toy) … 1. `RTOL`: the gf
tolerance in decades, 1e-3 … 1e-10. `GAMMA_STEP`: the leaky slope γ's step (γ ∈ [0, 1]).
`with_value` is the one "ladder and the value on screen" helper.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

EPS: tuple[float, ...] = tuple(float(f"{10.0 ** (k / 2):.3g}") for k in range(-40, 1))
RTOL: tuple[float, ...] = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
GAMMA_STEP = 0.05


def with_value(ladder: Iterable[Any], value: Any, lo: float | None = None,
               hi: float | None = None) -> list[Any]:
    """The ladder's values in ascending order with `value` among them: added when off the
    ladder, unless it is None, a non-finite float or outside [lo, hi] (where given)."""
    out = set(ladder)
    if value is not None and not (isinstance(value, float) and not math.isfinite(value)) \
            and (lo is None or value >= lo) and (hi is None or value <= hi):
        out.add(value)
    return sorted(out)


__all__ = ["EPS", "GAMMA_STEP", "RTOL", "with_value"]
