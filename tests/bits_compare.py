"""Same bits across a refactor of the kernels: run a fixed set of runs and save every array, or
compare them bitwise with a saved set.

    PYTHONPATH=<old checkout> python tests/bits_compare.py --write old.npz
    PYTHONPATH=<new checkout> python tests/bits_compare.py --compare old.npz

Runs (every one through the public API, so any checkout of the kernels runs them): gf and gd
through ``simulate`` (square, logistic and exponential loss; ReLU and leaky γ; trained and
frozen output layer; several seeds and widths; a diverging gd run; the BLAS path, per-layer
rates), the steppers directly (``advance`` in chunks, ``advance_frames``, GD in sample blocks,
a max_steps stop) with their counters, ``loss_grad``/``forward``/``loss_value``, and a few
small runs with the kernels interpreted (``kernels.cache.running("interpreted")``). Compared
bit for bit (NaNs included, by their bytes). Not a pytest module: run by hand (minutes).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np


def _sim_configs() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    rec = {"frames": 12, "scalars": 60}
    for loss in ("square", "logistic", "exponential"):
        for gamma in (0.0, 0.2):
            for train in (True, False):
                for method, extra in (("gf", {"t_end": 30.0}), ("gd", {"lr": 0.05, "t_end": 20.0})):
                    name = f"sim {method} {loss} g={gamma} train={train}"
                    out.append((name, {
                        "model": {"width": 9, "gamma": gamma, "train_output": train},
                        "loss": {"kind": loss}, "init": {"scale": 1e-2},
                        "integrator": {"method": method, **extra}, "record": rec, "seed": 3}))
    for seed in (0, 1, 7):
        for m in (2, 5, 50):
            out.append((f"sim gf default m={m} seed={seed}", {
                "model": {"width": m}, "integrator": {"method": "gf", "t_end": 40.0},
                "record": rec, "seed": seed}))
    out.append(("sim gd diverging", {
        "model": {"width": 20}, "init": {"scale": 1.0},
        "integrator": {"method": "gd", "lr": 50.0, "t_end": 500.0}, "record": rec}))
    out.append(("sim gf exp diverging", {
        "model": {"width": 20, "c": 50.0}, "loss": {"kind": "exponential"},
        "init": {"scale": 1.0}, "integrator": {"method": "gf", "t_end": 50.0}, "record": rec}))
    out.append(("sim gd blas teacher", {
        "model": {"width": 40}, "data": {"kind": "teacher", "d": 6},
        "integrator": {"method": "gd", "lr": 0.05, "t_end": 20.0}, "record": rec}))
    out.append(("sim gf blas teacher leaky frozen", {
        "model": {"width": 40, "gamma": 0.1, "train_output": False},
        "data": {"kind": "teacher", "d": 6},
        "integrator": {"method": "gf", "t_end": 20.0}, "record": rec}))
    out.append(("sim gf rates tau_delta", {
        "model": {"width": 30},
        "data": {"kind": "generated", "generator": "relu_teacher", "n": 12, "d": 3},
        "init": {"scheme": "tau_delta", "scale": 0.1, "imbalance": 0.5, "mirror": True,
                 "normalisation": "none"},
        "integrator": {"method": "gf", "t_end": 20.0, "lr_w": 2.0, "lr_a": 0.5},
        "record": rec}))
    out.append(("sim gd rates exp_margin blas", {
        "model": {"width": 40, "output_power": 1.0},
        "data": {"kind": "generated", "generator": "orthogonal", "labels": "dana", "n": 8, "d": 8},
        "init": {"scheme": "exp_margin", "scale": 0.2, "normalisation": "none"},
        "integrator": {"method": "gd", "lr": 0.05, "t_end": 20.0, "lr_a": 2.0},
        "record": rec}))
    out.append(("sim gf max_steps", {
        "model": {"width": 10}, "integrator": {"method": "gf", "t_end": 60.0, "max_steps": 300},
        "record": rec}))
    return out


def _steppers(out: dict[str, np.ndarray]) -> None:
    from dynamics.kernels import GDStepper, GFStepper, Problem, forward, loss_grad, loss_value

    x = np.array([-0.75, -0.5, 0.125])
    X = np.ascontiguousarray(np.c_[x, np.ones(3)])
    grid = np.geomspace(1e-2, 200.0, 40)
    for loss in ("square", "logistic", "exponential"):
        for gamma, train in ((0.0, True), (0.3, False)):
            y = np.array([1.1, 0.1, 0.8]) if loss == "square" else np.array([1.0, -1.0, 1.0])
            p = Problem(X, y, np.ones(3), gamma, 1.0, loss, "mean", train)
            for m in (3, 6):
                rng = np.random.default_rng(m)
                W = rng.normal(0.0, 1e-2, (m, 2))
                a = np.linalg.norm(W, axis=1) * rng.choice([-1.0, 1.0], m)
                key = f"{loss} g={gamma} train={train} m={m}"
                gf = GFStepper(p, W, a, 1e-6, 1e-12)
                parts = []
                for tt in (0.5, 3.0, 40.0, 200.0):  # chunked with small budgets
                    while True:
                        r = gf.advance(tt, 50, grid)
                        parts += [r.samples.t, r.samples.loss, r.samples.norm_rate,
                                  r.samples.dir_rate]
                        if r.status.name != "BUDGET":
                            break
                out[f"gf adv {key}"] = np.concatenate([gf.W.ravel(), gf.a, *parts])
                out[f"gf adv counts {key}"] = np.array(
                    [gf.t, gf.h, gf.n_evals, gf.n_accepted, gf.n_rejected, gf.n_forced,
                     gf.loss], dtype=float)
                gf2 = GFStepper(p, W, a, 1e-6, 1e-12)
                fa = gf2.advance_frames(np.geomspace(0.1, 200.0, 15), 10**6, grid)
                out[f"gf frames {key}"] = np.concatenate(
                    [fa.states.W.ravel(), fa.states.a.ravel(), fa.states.L,
                     fa.states.G.ravel(), fa.advance.samples.loss, fa.advance.samples.dir_rate,
                     [fa.reached, gf2.n_evals, gf2.n_rejected, gf2.h]])
                gf3 = GFStepper(p, W, a, 1e-6, 1e-12, max_steps=120)
                fb = gf3.advance_frames(np.geomspace(0.1, 200.0, 15), 37, grid)
                out[f"gf frames budget {key}"] = np.concatenate(
                    [fb.states.W.ravel(), fb.states.L, [fb.reached, gf3.n_evals, gf3.h,
                                                        gf3.t]])
                gd = GDStepper(p, W, a, 1e-2)
                r = gd.take_steps(3000, grid)
                r2 = gd.advance(45.0, 700, grid)
                out[f"gd {key}"] = np.concatenate(
                    [gd.W.ravel(), gd.a, r.samples.t, r.samples.loss, r.samples.norm_rate,
                     r.samples.dir_rate, r2.samples.loss, [gd.k, gd.n_evals, gd.loss]])
                L, gW, ga = loss_grad(p, W, a)
                out[f"loss_grad {key}"] = np.concatenate([[L], gW.ravel(), ga])
                out[f"forward {key}"] = np.concatenate(
                    [forward(p, W, a), forward(p, W, a, path="blas"), [loss_value(p, W, a)]])
    # GD in sample blocks (the split path) with blocks forced, and its one-block twin
    rng = np.random.default_rng(5)
    n, d, m = 64, 5, 30
    X = rng.normal(size=(n, d))
    y = np.sign(rng.normal(size=n))
    for loss in ("square", "logistic"):
        p = Problem(np.ascontiguousarray(X), y, np.ones(n), 0.1, 1.0, loss, "mean", True)
        W = rng.normal(0.0, 0.1, (m, d))
        a = rng.normal(0.0, 0.1, m)
        for blocks in (1, 3):
            gd = GDStepper(p, W, a, 0.05, path="blas", blocks=blocks, threads=2)
            r = gd.take_steps(400, np.linspace(0.5, 20.0, 9))
            out[f"gd split {loss} blocks={blocks}"] = np.concatenate(
                [gd.W.ravel(), gd.a, r.samples.t, r.samples.loss, r.samples.dir_rate,
                 [gd.n_evals, gd.loss]])
        gf = GFStepper(p, W, a, 1e-7, 1e-10, path="blas")
        r = gf.advance(10.0, 10**6, np.linspace(0.5, 10.0, 9))
        out[f"gf blas {loss}"] = np.concatenate(
            [gf.W.ravel(), gf.a, r.samples.loss, r.samples.norm_rate, [gf.n_evals, gf.h]])


def _arrays(tr: Any) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in tr.to_arrays().items()}


def collect(interpreted: bool = True) -> dict[str, np.ndarray]:
    """Every array of the runs, by '<run>/<array>'."""
    from dynamics.config import Config
    from dynamics.simulate import simulate

    out: dict[str, np.ndarray] = {}
    for name, raw in _sim_configs():
        tr = simulate(Config.from_dict(raw))
        for k, v in _arrays(tr).items():
            out[f"{name}/{k}"] = v
        out[f"{name}/status"] = np.array([str(tr.status.name if hasattr(tr.status, "name")
                                               else tr.status)])
    _steppers(out)
    if interpreted:
        from dynamics.kernels.cache import running
        with running("interpreted"):
            for loss in ("square", "logistic"):
                for method in ("gf", "gd"):
                    raw = {"model": {"width": 4, "gamma": 0.1}, "loss": {"kind": loss},
                           "integrator": {"method": method, "t_end": 5.0, "lr": 0.05},
                           "record": {"frames": 5, "scalars": 20}}
                    tr = simulate(Config.from_dict(raw))
                    for k, v in _arrays(tr).items():
                        out[f"interp {method} {loss}/{k}"] = v
    return out


def _bits(v: np.ndarray) -> bytes:
    v = np.ascontiguousarray(v)
    return v.dtype.str.encode() + str(v.shape).encode() + v.tobytes()


def main() -> int:
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write")
    g.add_argument("--compare")
    args = ap.parse_args()
    import dynamics

    print("dynamics from", dynamics.__file__, file=sys.stderr)
    got = collect()
    if args.write:
        np.savez(args.write, **got)
        print(f"wrote {len(got)} arrays to {args.write}")
        return 0
    with np.load(args.compare, allow_pickle=False) as ref:
        want = {k: ref[k] for k in ref.files}
    missing = sorted(set(want) ^ set(got))
    differ = [k for k in sorted(set(want) & set(got)) if _bits(want[k]) != _bits(got[k])]
    n_values = sum(int(np.asarray(v).size) for v in got.values())
    for k in missing:
        print("only on one side:", k)
    for k in differ:
        print("DIFFERENT BITS:", k)
    print(f"{len(got)} arrays ({n_values} values) compared: {len(differ)} differ, "
          f"{len(missing)} on one side only")
    return 1 if (differ or missing) else 0


if __name__ == "__main__":
    sys.exit(main())
