#!/usr/bin/env bash
# Set up (idempotent) and run the tests.
#   bash scripts/test.sh                 # the suite: -m "not slow" (browser and install included)
#   bash scripts/test.sh -m fast         # the fast loop: no slow, browser or install tests
#   bash scripts/test.sh -m slow         # the long checks
#   bash scripts/test.sh tests/test_x.py # any pytest arguments (-n 0: one process, e.g. --pdb)
# Tests run in three pytest-xdist workers (`-n 3 --dist loadfile`: a file on one worker, so a
# module's fixtures are built once; tests/conftest.py puts the files with long tests first;
# EAE_TEST_WORKERS=N for another count) unless the arguments choose -n. Every worker that runs
# a browser test starts its Streamlit server and Chromium. On two cores 4 workers were slower.
# Lint (ruff) and the type check (mypy on dynamics/, settings in pyproject.toml) run first;
# pytest runs even if they fail, so its summary is always printed. Exit code is pytest's;
# "no tests collected" (pytest exit 5) and a lint or type failure with passing tests exit 1.
set -uo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

bash scripts/setup.sh || { echo "[test] setup failed" >&2; exit 1; }
echo "[test] set up in ${SECONDS} s" >&2

# One numba cache for the checkout, its installed copy (tests/test_install.py) and every server
# the tests start: the kernels are keyed by their sources' hash there, not by their path.
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$REPO_ROOT/.cache/numba}"
# The kernels compile (or load) into it in the background while ruff and mypy run (one core
# each); the suite's own warm-up (tests/conftest.py) then only loads them. The warm-up is the
# same-bits probe (dynamics/same_bits.py): when it compiled into an empty cache, its record is
# tests/test_determinism.py's cold process, so a cold suite compiles the kernels once.
export EAE_COLD_BITS
EAE_COLD_BITS="$(mktemp "${TMPDIR:-/tmp}/eae-cold-bits.XXXXXX")"
trap 'rm -f "$EAE_COLD_BITS" "$EAE_COLD_BITS.part"' EXIT
.venv/bin/python -m dynamics.same_bits --write "$EAE_COLD_BITS" >/dev/null 2>&1 </dev/null &
warm_pid=$!

# pytest caches its rewritten test modules as .pyc files, except where PYTHONDONTWRITEBYTECODE is
# set (it is on the team's machines): then every worker rewrote all of them at every start
# (collection 9 s per process, 3.7 s from the cache). pytest here runs without it; on a fresh
# checkout one collection fills the cache meanwhile (a core is free once mypy is done).
pytest_env=(env -u PYTHONDONTWRITEBYTECODE)
collect_pid=""
if ! compgen -G "tests/__pycache__/*-pytest-*.pyc" >/dev/null; then
  "${pytest_env[@]}" .venv/bin/python -m pytest -p no:cacheprovider --collect-only -q \
    >/dev/null 2>&1 </dev/null &
  collect_pid=$!
fi

echo "[test] ruff check ." >&2
ruff_rc=0
.venv/bin/python -m ruff check . || ruff_rc=$?

echo "[test] mypy (dynamics/)" >&2
mypy_rc=0
.venv/bin/python -m mypy dynamics || mypy_rc=$?

wait "$warm_pid" || echo "[test] the kernels' warm-up failed; the suite compiles them" >&2
[[ -z "$collect_pid" ]] || wait "$collect_pid" || true
echo "[test] lint, types and the kernels' warm-up done at ${SECONDS} s" >&2

if [[ $# -eq 0 ]]; then
  set -- -m "not slow"
fi
workers=(-n "${EAE_TEST_WORKERS:-3}" --dist loadfile)
for arg in "$@"; do
  case "$arg" in -n|-n*|--numprocesses*|no:xdist) workers=() ;; esac
done

"${pytest_env[@]}" .venv/bin/python -m pytest -p no:cacheprovider --durations=15 "${workers[@]}" "$@"
rc=$?
echo "[test] pytest done at ${SECONDS} s" >&2
if [[ $rc -eq 5 ]]; then
  echo "[test] pytest collected no tests: treating as failure" >&2
  exit 1
fi
if [[ $rc -eq 0 && $ruff_rc -ne 0 ]]; then
  echo "[test] tests passed but 'ruff check .' failed (see above): failing" >&2
  exit 1
fi
if [[ $rc -eq 0 && $mypy_rc -ne 0 ]]; then
  echo "[test] tests passed but 'mypy' (dynamics/) failed (see above): failing" >&2
  exit 1
fi
exit $rc
