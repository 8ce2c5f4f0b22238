"""One fresh process's way to its first simulate() result (run by `bench.runtime`)::

    python -m bench.first_result CONFIG.json

prints two numbers: seconds to import the library, seconds of the first simulate() (10 frames
to t = 10; includes numba compiling or loading its cache). Only NumPy is imported before the clock
starts, so the first number is the library's own import time.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m bench.first_result CONFIG.json", file=sys.stderr)
        return 2
    import numpy  # noqa: F401 (imported before the clock, as in earlier reports)

    t0 = time.perf_counter()
    from dynamics.config import Config
    from dynamics.simulate import simulate

    with open(args[0], encoding="utf-8") as f:
        cfg = Config.from_json(f.read())
    cfg = cfg.with_updates({"record.frames": "10", "integrator.t_end": "10"})
    t1 = time.perf_counter()
    simulate(cfg)
    t2 = time.perf_counter()
    print(t1 - t0, t2 - t1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
