"""The benchmark's Markdown report (bench/REPORT.md) from the raw results of bench.measure.

Rendering only: no timing, no library calls, no environment reads, so a report can be rebuilt
from a saved ``--json`` file. The layout (headings, tables, the Goals table first) is what
earlier reports used, so reports of different runs compare line by line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import peers
from .precompute import precompute_lines


def fmt_us(x: float) -> str:
    """µs with two decimals below 100, else whole µs, with thousands separators."""
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def yes(ok: bool) -> str:
    """A goal's status cell."""
    return "**met**" if ok else "**not met**"


def _s(x: float | None) -> str:
    """Seconds with three decimals, "—" when not measured."""
    return "—" if x is None or not np.isfinite(x) else f"{x:.3f}"


def _x(num: float, den: float, digits: int = 2) -> str:
    """num/den as "1.23×", "—" when either is missing."""
    ok = den and np.isfinite(num) and np.isfinite(den)
    return f"{num / den:.{digits}f}×" if ok else "—"


def flow_lines(flow: dict[str, Any], goals: list[tuple[str, str, str]]) -> list[str]:
    """The end-to-end tables (bench.flow.end_to_end) and their goals: per row,
    ``goal`` is the factor simulate() must beat diffrax by (None: reported only); rows with
    a goal ≥ 3 also carry the simulate ≤ 1.3× bare goal."""
    dfx = flow.get("diffrax")
    L = ["## End to end: simulate() vs the bare stepper, diffrax and SciPy", "",
         "What a user waits for, on the same ODE, starting point, rtol/atol and frame times. "
         "`bare`: the adaptive stepper alone, to the same frame times (gf: one "
         "`advance_frames` call, the way simulate drives it minus the chunks; it keeps each "
         "frame's state), recording the dense scalars as simulate does. `simulate`: the "
         "whole run (data, initialisation, integration, every frame's metrics: angles, "
         "cosines, singular values, activation patterns; the Trajectory); gf goes through many "
         "frames per compiled call, and frames are measured on a worker thread while the "
         "stepper integrates on when the 1-minute load leaves a CPU spare, else inline "
         "(dynamics/simulate.py). "
         "diffrax"
         + (f" {dfx}" if dfx else "") + ": `Bosh3` (the same Bogacki–Shampine 3(2) pair) with "
         "a `PIDController` at the same rtol/atol (its defaults: an I controller and an RMS "
         "norm over components, each scaled by atol + rtol·|θ_k|; ours is PI with the scale "
         "per neuron), `SaveAt(ts=frame times)` (it interpolates; we land on each frame), the "
         "whole solve one jit-compiled function, run after compiling (compile time in its own "
         "column). SciPy RK23: `solve_ivp` with `t_eval` at the frame times, timed once. "
         "Wall-clock medians of "
         f"{flow.get('repeats', '?')} interleaved rounds (fewer where a row says so); "
         "evaluations are gradient evaluations (diffrax: steps = accepted + rejected, 3 "
         "evaluations each). A peer that grinds (kinks integrated as a smooth field: ever smaller "
         "steps) is stopped at a cap; its ratio is then a lower bound (≥).", "",
         "| run | m, d, n | t_end, frames | bare (s) | simulate (s) | simulate / bare | "
         "diffrax (s) [compile s] | diffrax / simulate | RK23 (s) | RK23 / simulate | "
         "evaluations: bare / diffrax steps / RK23 | final loss: simulate / diffrax / RK23 |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in flow["rows"]:
        sim = r["simulate_s"]
        has = "diffrax_s" in r
        done = r.get("diffrax_ok", True)
        dx = (f"{_s(r['diffrax_s'])} [{r['diffrax_compile_s']:.1f}]"
              + ("" if done else f" (used max_steps = {r['diffrax_max_steps']:,} by "
                 f"t = {r['diffrax_t']:.4g})")) if has else "skipped"
        steps = f"{r['diffrax_steps']:,}" if has else "—"
        dl = f"{r['diffrax_loss']:.6g}" if has and done else "—"
        rk_ran = np.isfinite(r["rk23_s"])
        rk_done = not r.get("rk23_note")
        rk = _s(r["rk23_s"]) + ("" if rk_done else f" ({r['rk23_note']})")
        rkl = f"{r['rk23_loss']:.6g}" if rk_done else "—"
        rk_ev = f"{r['rk23_evals']:,}" if rk_ran else "—"
        at_least = "" if done else "≥ "  # stopped early: the full solve takes longer
        L.append(f"| {r['run']} | {r['m']}, {r['d']}, {r['n']} | {r['t_end']:g}, "
                 f"{r['frames']} | {_s(r['bare_s'])} | {_s(sim)} | "
                 f"{sim / r['bare_s']:.2f}× | {dx} | "
                 + (f"{at_least}{r['diffrax_s'] / sim:.2f}×" if has else "—")
                 + f" | {rk} | "
                 + (f"{'' if rk_done else '≥ '}{r['rk23_s'] / sim:.1f}×" if rk_ran else "—")
                 + f" | {r['bare_evals']:,} / {steps} / {rk_ev} | "
                 f"{r['loss_end']:.6g} / {dl} / {rkl} |")
    if flow.get("diffrax_skipped"):
        L.append(f"\n_diffrax skipped: {flow['diffrax_skipped']}_")
    L.append("")
    rows = flow["rows"]
    if any("bare_cpu_s" in r for r in rows):
        L += ["CPU seconds (this process, every thread; medians of the same rounds) do not "
              "depend on how busy the other core is; a frame-recording thread adds its "
              "hand-offs to simulate's CPU time but overlaps the frames in wall time. "
              "Steps: accepted / rejected (ours: the bare stepper's, the same as "
              "simulate's). Final loss |simulate − "
              "diffrax| shows both solved the same ODE to the tolerance.", "",
              "| run | rounds | load (1-min, start → end) | CPU bare / simulate / diffrax (s) "
              "| diffrax / simulate (CPU) | steps ours | steps diffrax | |ΔL| vs diffrax |",
              "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if "bare_cpu_s" not in r:
                continue
            has = "diffrax_cpu_s" in r
            ld = r.get("load", [float("nan")] * 2)
            dcpu = _s(r["diffrax_cpu_s"]) if has else "—"
            dst = (f"{r['diffrax_accepted']:,} / {r['diffrax_rejected']:,}" if has else "—")
            dl = (f"{abs(r['loss_end'] - r['diffrax_loss']):.1e}"
                  if has and r.get("diffrax_ok", True) else "—")
            L.append(f"| {r['run']} | {r.get('rounds', '?')} | {ld[0]:.2f} → {ld[1]:.2f} | "
                     f"{_s(r['bare_cpu_s'])} / {_s(r['simulate_cpu_s'])} / {dcpu} | "
                     + (_x(r["diffrax_cpu_s"], r["simulate_cpu_s"]) if has else "—")
                     + f" | {r['bare_accepted']:,} / {r['bare_rejected']:,} | {dst} | {dl} |")
        L.append("")
    three = [r for r in rows if (r.get("goal") or 0) >= 3]
    if three:
        goals.append(("simulate() ≤ 1.3× the bare stepper (" + ", ".join(
            r["run"] for r in three) + ")", ", ".join(
            f"{r['simulate_s'] / r['bare_s']:.2f}×" for r in three),
            yes(all(r["simulate_s"] <= 1.3 * r["bare_s"] for r in three))))
    for factor in sorted({r["goal"] for r in rows if r.get("goal")}, reverse=True):
        sel = [r for r in rows if r.get("goal") == factor]
        timed = [r for r in sel if "diffrax_s" in r]
        what = (f"simulate() ≥ {factor:g}× faster than diffrax end to end" if factor > 1
                else "simulate() at least as fast as diffrax on the largest dashboard-size run")
        name = f"{what} (" + ", ".join(r["run"] for r in sel) + ")"
        if not timed:
            goals.append((name, "diffrax not run", "**not measured**"))
            continue
        goals.append((name, ", ".join(
            ("" if r.get("diffrax_ok", True) else "≥ ") + f"{r['diffrax_s'] / r['simulate_s']:.2f}×"
            + (f" (CPU {_x(r['diffrax_cpu_s'], r['simulate_cpu_s'])})"
               if "diffrax_cpu_s" in r else "") for r in timed),
            yes(len(timed) == len(sel)
                and all(r["diffrax_s"] >= factor * r["simulate_s"] for r in timed))))
    timed = [r for r in rows if "diffrax_s" in r]
    if timed:
        goals.append(("diffrax compile time reported apart from its solve", ", ".join(
            f"{r['run']} {r['diffrax_compile_s']:.1f} s" for r in timed), "reported"))
    return L


def _drift(x: float) -> str:
    return "—" if not np.isfinite(x) else f"{x:.1e}"


def kink_lines(kink: dict[str, Any], goals: list[tuple[str, str, str]]) -> list[str]:
    """The accuracy-at-kinks table (bench.flow.kink_section) and its goal: gf's drift of
    a_j² − ‖w_j‖² ≤ 10·rtol on every row."""
    caps = kink["caps"]
    L = ["## Accuracy at kinks", "",
         "The flow conserves a_j² − ‖w_j‖² exactly for every neuron (σ(u) = σ'(u)·u, leaky or "
         "not, sliding on a kink included), so its drift — max over 60 log-spaced frames of "
         "max_j |Δ(a_j² − ‖w_j‖²)| / max_j (a_j² + ‖w_j‖²) — is the integrator's error. gf "
         "follows a neuron sliding on a kink with steps at its kink floor (like GD with a small "
         "step: its accuracy there follows the floor, not rtol); diffrax (Bosh3, "
         "PID controller) and SciPy RK23 integrate the same field as a smooth ODE, at the "
         "same rtol and atol. Peers are stopped at "
         f"{caps[0]:,} steps (diffrax) and {caps[1]:,} evaluations (RK23); a stopped row says "
         "how far it got. Load average "
         f"{kink['load'][0]:.2f} → {kink['load'][-1]:.2f}.", "",
         "| run | rtol | gf: drift / evaluations / accepted / rejected / floor steps / wall (s) | "
         "diffrax: drift / steps / wall (s) | RK23: drift / evaluations / wall (s) |",
         "|---|---|---|---|---|"]
    if kink.get("diffrax_skipped"):
        L.insert(3, f"_diffrax skipped: {kink['diffrax_skipped']}_")
        L.insert(4, "")
    ok = True
    for r in kink["rows"]:
        ok &= r["gf_drift"] <= 10 * r["rtol"]
        acc, rej = r["gf_steps"].split(" / ")
        gf = (f"{_drift(r['gf_drift'])} / {r['gf_evals']:,} / {int(acc):,} / {int(rej):,} / "
              f"{r['gf_floor']:,} / {r['gf_s']:.3f}")
        if "diffrax_steps" in r:
            note = "" if r["diffrax_ok"] else f" (stopped at t = {r['diffrax_t']:.3g})"
            dfx = (f"{_drift(r['diffrax_drift'])}{note} / {r['diffrax_steps']:,} / "
                   f"{r['diffrax_s']:.3f}")
        else:
            dfx = "—"
        note = "" if r["rk23_t"] >= r["t_end"] else f" (stopped at t = {r['rk23_t']:.3g})"
        rk = f"{_drift(r['rk23_drift'])}{note} / {r['rk23_evals']:,} / {r['rk23_s']:.2f}"
        L.append(f"| {r['run']} (m = {r['m']}, t = {r['t_end']:g}) | {r['rtol']:g} | {gf} | "
                 f"{dfx} | {rk} |")
    L.append("")
    goals.append(("gf drift of a_j² − ‖w_j‖² ≤ 10·rtol on the kinked runs",
                  ", ".join(f"{r['gf_drift'] / r['rtol']:.2g}·rtol" for r in kink["rows"]),
                  yes(ok and bool(kink["rows"]))))
    return L


def render(res: dict[str, Any]) -> str:
    """The Markdown report of `bench.measure.measure`'s results (pure: reads only `res`)."""
    mc = res["machine"]
    ct = res.get("core_threads") or {}
    L: list[str] = ["# Core benchmark report", "",
                    f"Generated by `python -m bench{res['argv']}` on {mc['date']}. "
                    "Wall-clock medians; the machine is shared, so the load average is shown. "
                    "Regenerate with the same command; nothing here is asserted by tests.", "",
                    "## Machine", "",
                    f"- CPU: {mc['cpu']}, {mc['cores']} logical cores ({mc['platform']})",
                    f"- BLAS: {'; '.join(mc['blas'])}",
                    "- Versions: " + ", ".join(f"{k} {v}" for k, v in mc["versions"].items()),
                    f"- Load average at start: {', '.join(f'{x:.2f}' for x in mc['load'])}; "
                    f"at end: {', '.join(f'{x:.2f}' for x in res['load_end'])}"
                    + (f"; the whole run took {res['duration_s'] / 60:.1f} min"
                       if "duration_s" in res else ""),
                    f"- Core GEMM threads (SciPy's OpenBLAS, which numba's np.dot calls): "
                    f"{res.get('core_blas_threads', '?')} (EAE_CORE_BLAS_THREADS; NumPy's BLAS "
                    "is left alone); core threads for large GD steps: "
                    f"{ct.get('env', 'auto')} (EAE_CORE_THREADS; "
                    f"{ct.get('cpus', '?')} CPUs usable)",
                    "- BLAS-related environment: " + (", ".join(
                        f"{k}={v}" for k, v in mc["env"].items()) or "none set"), ""]
    goals: list[tuple[str, str, str]] = []
    gd = res.get("gd")
    if gd is not None:
        rows, skipped = gd
        names = ["core"] + [k for k in peers.PEERS if any(k in r["us"] for r in rows)]
        L += ["## GD step vs peers (µs per step, lower is better)", "",
              "Full-batch GD, ReLU, square loss ½(ŷ−y)² averaged, both layers trained, float64. "
              "Peers are written the way users would (bench/peers.py): NumPy forward + "
              "hand-written backward; PyTorch autograd; JAX `jax.grad` inside `jit` + "
              "`lax.scan`. A cell is the marginal cost of a step, (T(2s) − T(s))/s for s "
              "steps taking ~0.25 s, so once-per-run set-up is left out for every method; the "
              "median of interleaved rounds, with a pause between calls; `[min–max]` is the "
              "spread. `best peer / core` > 1 means the core is faster.", "",
              "| size (n, d, m) | path | " + " | ".join(names)
              + " | best peer / core | NumPy / core |",
              "|---|---|" + "---|" * len(names) + "---|---|"]
        for r in rows:
            cells = []
            for k in names:
                if k in r["us"]:
                    lo, hi = r["spread"][k]
                    cells.append(f"{fmt_us(r['us'][k])} [{fmt_us(lo)}–{fmt_us(hi)}]")
                else:
                    cells.append("skipped")
            L.append(f"| ({r['n']}, {r['d']}, {r['m']}) | {r['path']} | " + " | ".join(cells)
                     + f" | {r['ratio_best']:.2f}× ({r['fastest_peer']}) | "
                       f"{r['ratio_numpy']:.1f}× |")
        for k, why in skipped.items():
            L.append(f"\n_{k} skipped: {why}_")
        lib = res.get("gd_variants") or {}
        if lib:
            L += ["", "The table's core is the default: from n·d·m = "
                  f"{ct.get('split_min_work', 0):,} the samples are cut into blocks stepped on "
                  "parallel threads (dynamics/kernels/gd_split.py, EAE_CORE_THREADS; "
                  "blocks per size: "
                  + ", ".join(f"({r['n']}, {r['d']}, {r['m']}) {r.get('blocks', '?')}"
                              for r in rows)
                  + "), each GEMM on one BLAS thread (EAE_CORE_BLAS_THREADS). The same core "
                  "on one thread, and on one thread with OpenBLAS's own 2-thread GEMMs "
                  "(EAE_CORE_BLAS_THREADS=0), each in a fresh process just after the table "
                  "(`best peer / core` against the table's best peer):", "",
                  "| size (n, d, m) | core (table) | " + " | ".join(
                      f"core, {k} | best peer / core, {k}" for k in lib) + " |",
                  "|---|---|" + "---|---|" * len(lib)]
            for r in rows:
                key = f"{r['n']},{r['d']},{r['m']}"
                bp = r["us"][r["fastest_peer"]] if r["fastest_peer"] else float("nan")
                cells = []
                for v in lib.values():
                    us2 = v.get(key)
                    cells += (["—", "—"] if us2 is None
                              else [fmt_us(us2), f"{bp / us2:.2f}×"])
                L.append(f"| ({r['n']}, {r['d']}, {r['m']}) | {fmt_us(r['us']['core'])} | "
                         + " | ".join(cells) + " |")
        L += ["", "Agreement after 3 steps (max |Δθ| / max |θ| against the core): " + "; ".join(
            f"({r['n']}, {r['d']}, {r['m']}) " + ", ".join(
                f"{k} {v:.0e}" for k, v in r["max_rel_diff"].items() if k != "core")
            for r in rows), ""]
        ok_all = all(r["ratio_best"] >= 1.0 for r in rows)
        goals.append(("GD step ≥ fastest peer at every size",
                      ", ".join(f"{r['ratio_best']:.2f}×" for r in rows), yes(ok_all)))
        small = min(rows, key=lambda r: r["n"] * r["d"] * r["m"])
        goals.append((f"GD step ≥ 10× NumPy at the smallest size ({small['n']}, {small['d']}, "
                      f"{small['m']})", f"{small['ratio_numpy']:.1f}×",
                      yes(small["ratio_numpy"] >= 10.0)))
    for key in ("three_point", "chistikov"):
        g = res.get(key)
        if g is None:
            continue
        L += [f"## Gradient flow vs SciPy: {g['name']}", "",
              f"n = {g['n']}, d = {g['d']}, m = {g['m']}; t from 0 to {g['t_end']:g} (the "
              f"papers' time {g['t_end'] / 2:g}); "
              f"rtol = {g['rtol']:g}, atol = {g['atol']:.3g} for every adaptive method. All "
              "solve the same ODE dθ/dt = −∇L(θ) with our loss L = (1/n)Σ½(h−y)² (the "
              "papers' (1/n)Σ(h−y)² = 2L: their time is half ours). SciPy integrates the "
              "flattened (W, a) with the core's gradient as right-hand side (a fast RHS; "
              "SciPy's own overhead dominates). `balance drift` = max_j |Δ(a_j² − ‖w_j‖²)| / "
              "max_j (a_j² + ‖w_j‖²). LSODA (a stiff/non-stiff switcher; ~10⁵–10⁶ "
              "evaluations on these non-stiff, kinked flows) runs on the three-point problem "
              "only.", "",
              "| method | gradient evaluations | steps | wall (s) | final loss |",
              "|---|---|---|---|---|"]
        for r in g["rows"]:
            extra = ""
            if "balance_drift" in r:
                extra = (f" (balance drift {r['balance_drift']:.1e}, signs kept: "
                         f"{r['signs_kept']})")
            st = "" if r.get("status", "ok") == "ok" else f" — {r['status']}"
            loss = "—" if not np.isfinite(r["loss"]) else f"{r['loss']:.12f}"
            L.append(f"| {r['method']}{st} | {r['evals']:,} | {r['steps']} | "
                     f"{r['wall_s']:.3f} | {loss}{extra} |")
        L.append("")
        if "evals_vs_rk23" in g:
            gfr = g["rows"][0]
            goals.append((f"gf evaluations ≤ RK23 ({g['name']})",
                          f"{g['evals_vs_rk23']:.2f}× RK23's",
                          yes(g["evals_vs_rk23"] <= 1.0)))
            goals.append((f"gf final loss = RK23's ± 1e-6 ({g['name']})",
                          f"|ΔL| = {g['dloss_vs_rk23']:.1e}", yes(g["dloss_vs_rk23"] <= 1e-6)))
            goals.append((f"gf wall ≥ 10× faster than the best SciPy method ({g['name']})",
                          f"{g['wall_ratio']:.1f}× ({g['best_scipy']})",
                          yes(g["wall_ratio"] >= 10.0)))
            goals.append((f"gf invariants ({g['name']}): balance kept, signs fixed",
                          f"drift {gfr['balance_drift']:.1e}, signs {gfr['signs_kept']}",
                          yes(gfr["balance_drift"] < 1e-6 and gfr["signs_kept"])))
    kink = res.get("kink")
    if kink is not None:
        L += kink_lines(kink, goals)
    flow = res.get("flow")
    if flow is not None:
        L += flow_lines(flow, goals)
    mem = res.get("memory")
    if mem is not None:
        L += ["## Memory", "",
              f"Teacher preset at width m = {mem['width']} (d = {mem['d']}, n = {mem['n']}), "
              f"{mem['frames']} frames: Trajectory.nbytes() = {mem['nbytes']:,} B, i.e. "
              f"**{mem['per_frame']:,.0f} bytes per frame**; full W kept at "
              f"{mem['W_frames']} frames (EAE_FULL_W_BUDGET_MB = {mem['budget_mb']:g}).", ""]
        goals.append((f"Trajectory bytes per frame at m = {mem['width']}",
                      f"{mem['per_frame']:,.0f} B", "reported"))
    th = res.get("threads")
    if th is not None:
        L += ["## Threads", "",
              f"simulate() of a teacher run (n = {th['n']}, d = {th['d']}, m = {th['m']}, "
              f"gd, {th['path']} path): one alone {th['one_s']:.3f} s; two in two threads "
              f"{th['two_s']:.3f} s; **ratio {th['ratio']:.2f}** (1.0 = perfect overlap; "
              "2.0 = serialised), with NumPy's BLAS on "
              f"{th.get('numpy_blas_threads') or 'its default'} thread(s) as the service sets "
              "it (EAE_NUMPY_BLAS_THREADS, dynamics/blas.py); with NumPy's default BLAS "
              f"threads, measured just before: ratio {th.get('default_ratio', float('nan')):.2f} "
              "(its workers spin ~0.1 s after each small product and take the other "
              "simulation's core). The kernels alone (GDStepper.advance, "
              f"{th['k_steps']} steps, same size): one {th['k_one_s']:.3f} s, two in two "
              f"threads {th['k_two_s']:.3f} s, ratio {th['k_ratio']:.2f}. 1-minute load "
              f"average at the end of this section: {th['load1']:.2f} — other jobs on this "
              "2-core machine take cores from the second thread and inflate both ratios. "
              "GIL check: a pure-Python counter thread runs at "
              f"{100 * th['gil_rate']:.0f}% of its solo rate while a kernel call is in "
              "progress (≈ 0% if the kernel held the GIL).", ""]
        goals.append(("two simulations in two threads ≤ 1.2× one",
                      f"{th['ratio']:.2f}× (kernels alone {th['k_ratio']:.2f}×; load "
                      f"{th['load1']:.1f})", yes(th["ratio"] <= 1.2)))
    su = res.get("startup")
    if su is not None:
        L += ["## Start-up (fresh process to the first simulate() result)", "",
              "| numba cache | process wall (s) | imports (s) | first simulate (s) |",
              "|---|---|---|---|"]
        for label, v in su.items():
            if "error" in v:
                L.append(f"| {label} | error: {v['error']} | | |")
            else:
                L.append(f"| {label} | {v['process_s']:.2f} | {v['import_s']:.2f} | "
                         f"{v['simulate_s']:.2f} |")
        L.append("")
        if "process_s" in su.get("cold", {}) and "process_s" in su.get("warm", {}):
            goals.append(("start-up, cold / warm numba cache",
                          f"{su['cold']['process_s']:.1f} s / {su['warm']['process_s']:.1f} s",
                          "reported"))
    pre = res.get("precompute")
    if pre is not None:
        L += precompute_lines(pre)
        worst = [r["after"] for r in pre.get("rows", []) if "time_s" in r.get("after", {})]
        if worst:
            goals.append(("pre-run computations bounded at every size up to the limits",
                          f"worst {max(w['time_s'] for w in worst):.2f} s, "
                          f"{max(w['peak_mb'] for w in worst):,.0f} MB", "reported"))
    L[L.index("## Machine"):L.index("## Machine")] = [
        "## Goals", "", "| goal | measured | status |", "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in goals], ""]
    return "\n".join(L) + "\n"
