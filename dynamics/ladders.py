"""The ladders the sliders and knobs offer, declared once (the settings table, `ui.settings`,
and the papers' knobs read them).

`EPS`: the init scale ε in half decades, 10^(k/2) to three significant digits for
k = −40 … 0, i.e. 1e-20 (the smallest the papers use, Min et al.'s toy) … 1; `decades` its
whole decades in a range (a coarser ε or σ knob). `RTOL`: the gf tolerance in decades,
1e-3 … 1e-10. `GAMMA_STEP`: the leaky slope γ's step (γ ∈ [0, 1], the config's bounds);
`steps` a number's values lo, lo + step, …, hi (γ's: `ui.settings.stepped`). `with_value` is
the one "ladder and the value on screen" helper.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

EPS: tuple[float, ...] = tuple(float(f"{10.0 ** (k / 2):.3g}") for k in range(-40, 1))
RTOL: tuple[float, ...] = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
GAMMA_STEP = 0.05


def decades(lo: float, hi: float) -> tuple[float, ...]:
    """The whole decades of `EPS` from lo to hi: decades(1e-5, 1e-2) = (1e-5, …, 1e-2)."""
    return tuple(v for i, v in enumerate(EPS) if i % 2 == 0 and lo <= v <= hi)


def steps(lo: float, hi: float, step: float) -> tuple[float, ...]:
    """lo, lo + step, … up to hi (rounded to the step's decimals: 0.15, not
    0.15000000000000002)."""
    digits = max(0, -int(Decimal(str(step)).as_tuple().exponent))
    n = math.floor((hi - lo) / step + 1e-9)
    return tuple(round(lo + step * k, digits) for k in range(n + 1))


def with_value(ladder: Iterable[Any], value: Any, lo: float | None = None,
               hi: float | None = None) -> list[Any]:
    """The ladder's values in ascending order with `value` among them: added when off the
    ladder, unless it is None, a non-finite float or outside [lo, hi] (where given)."""
    out = set(ladder)
    if value is not None and not (isinstance(value, float) and not math.isfinite(value)) \
            and (lo is None or value >= lo) and (hi is None or value <= hi):
        out.add(value)
    return sorted(out)


__all__ = ["EPS", "GAMMA_STEP", "RTOL", "decades", "steps", "with_value"]
