"""Command line: python -m dynamics run|sweep|reproduce, also the `eae` console script
(benchmarks: python -m bench).

`run CONFIG.json --out run.npz [--set key=value ...]` validates the config (every error is
printed with its field path, exit code 2) and the output path (a folder it can write in, not a
directory itself; exit code 2), simulates, writes run.npz + run.json and prints a JSON summary
(strict JSON: a non-finite number is null). Exit code 1 when the run did not complete.
The other subcommands live in their own modules and are imported only when used.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

from .config import Config, ConfigError


def _load_config(path: str | None, sets: list[str]) -> Config:
    if path in (None, "-", ""):
        base = Config()
    else:
        p = Path(path)
        if not p.exists():
            raise ConfigError([("CONFIG", f"no such file: {path}")])
        try:
            base = Config.from_json(p.read_text())
        except UnicodeDecodeError:
            raise ConfigError([("CONFIG", f"{path} is not a text (JSON) file")]) from None
    updates = {}
    for item in sets:
        if "=" not in item:
            raise ConfigError([(item, "--set takes key=value, e.g. --set model.width=100")])
        k, v = item.split("=", 1)
        updates[k.strip()] = v
    return base.with_updates(updates) if updates else base


class UsageError(ValueError):
    """A command-line argument that cannot work (printed as "error: ...", exit code 2)."""


def _output_paths(out: str) -> tuple[Path, Path]:
    """The .npz and .json `run` will write, checked before any work: not a directory, in a
    folder that exists (or can be made) and can be written in."""
    p = Path(out)
    if out.endswith(("/", "\\")) or p.is_dir():
        raise UsageError(f"--out {out} is a directory; give a file name in it, e.g. --out "
                         f"{p / 'run.npz'}")
    npz = p if p.suffix == ".npz" else p.with_suffix(".npz")
    js = npz.with_suffix(".json")
    for q in (npz, js):
        if q.is_dir():
            raise UsageError(f"--out: {q} is a directory; choose another file name")
    folder = npz.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".eae-write-check-"):
            pass
    except OSError as e:
        raise UsageError(f"--out {out}: cannot write in {folder} ({e.strerror or e}); choose "
                         "a file in a folder you can write to") from None
    return npz, js


def _json_number(x: float) -> float | None:
    """Strict JSON has no Infinity or NaN: those become null."""
    x = float(x)
    return x if math.isfinite(x) else None


def _cmd_run(args: argparse.Namespace) -> int:
    from . import simulate as sim

    config = _load_config(args.config, args.set or [])
    npz, js = _output_paths(args.out)  # before computing: a bad path must not lose the run
    last = [-1.0]

    def progress(frac: float, text: str) -> None:
        if not args.quiet and frac - last[0] >= 0.1:
            last[0] = frac
            print(f"  {100 * frac:5.1f}%  {text}", file=sys.stderr)

    traj = sim.simulate(config, progress=progress, deadline=args.deadline)
    npz, js = traj.save(npz)
    summary = {
        "status": str(traj.status), "message": traj.message,
        "final_time": _json_number(traj.t[-1]), "final_loss": _json_number(traj.loss[-1]),
        "gradient_evaluations": int(traj.n_evals), "wall_time_s": round(traj.wall_time, 3),
        "npz": str(npz), "json": str(js),
    }
    print(json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False))
    return 0 if traj.status == "completed" else 1


def build_parser(prog: str = "python -m dynamics",
                 epilog: str | None = None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, epilog=epilog,
                                 description="Early Alignment Explorer: simulate, sweep, "
                                 "reproduce the papers' claims.")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="simulate one configuration")
    r.add_argument("config", nargs="?", help="config JSON file ('-' or omitted: defaults)")
    r.add_argument("--out", default="run.npz", help="output .npz (a .json is written beside)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a field, e.g. --set model.width=100 (repeatable)")
    r.add_argument("--deadline", type=float, default=None, help="wall-clock limit in seconds")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=_cmd_run)
    for name, module, helptext in (
        ("sweep", "dynamics.sweeps.cli", "run a parameter sweep on Dask"),
        ("reproduce", "dynamics.reproduce", "check the papers' claims and write a report"),
    ):
        sp = sub.add_parser(name, help=helptext, add_help=False)
        sp.add_argument("rest", nargs=argparse.REMAINDER)
        sp.set_defaults(func=_delegate(module, name))
    return ap


def _delegate(module: str, name: str):
    def run(args: argparse.Namespace) -> int:
        import importlib

        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            print(f"'{name}' is not available: {e}", file=sys.stderr)
            return 2
        return int(mod.cli_main(args.rest) or 0)

    return run


DELEGATED = {"sweep": "dynamics.sweeps.cli", "reproduce": "dynamics.reproduce"}


def main(argv: list[str] | None = None, *, prog: str = "python -m dynamics",
         epilog: str | None = None) -> int:
    """The command line; `prog` and `epilog` let the `eae` console script (ui.launcher, which
    adds `eae app`) present it as its own."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:  # their own parsers take every further argument
        return _delegate(DELEGATED[argv[0]], argv[0])(argparse.Namespace(rest=argv[1:]))
    ap = build_parser(prog, epilog)
    args = ap.parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as e:
        print("The configuration is not valid:", file=sys.stderr)
        for path, msg in e.errors:
            print(f"  - {path}: {msg}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RecursionError:  # pragma: no cover - inputs are depth-checked; kept as a guard
        print("error: the input is nested too deeply", file=sys.stderr)
        return 2
