#!/usr/bin/env bash
# Idempotent setup for the Early Alignment Explorer.
#   bash scripts/setup.sh               # venv + Python deps + Chromium (for browser tests)
#   bash scripts/setup.sh --no-browser  # venv + Python deps only (enough to run the dashboard)
# Safe to run repeatedly: pip only runs when the requirements files or pyproject.toml changed
# since the last successful install (hash stamp in .venv/.requirements.sha256). The project
# itself is installed editable (`pip install --no-deps -e .`, built by the pinned hatchling):
# `import dynamics` from anywhere and the `eae` console script (`eae app`, `eae run`, ...).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

WANT_BROWSER=1
for arg in "$@"; do
  case "$arg" in
    --no-browser) WANT_BROWSER=0 ;;
    -h|--help)
      sed -n '2,6p' "$0"
      exit 0
      ;;
    *)
      echo "setup.sh: unknown option: $arg" >&2
      exit 2
      ;;
  esac
done

log() { echo "[setup] $*" >&2; }

# --- 1. Chromium (Debian package; Playwright's own browser download is not available) ---
if [[ "$WANT_BROWSER" == 1 && ! -x /usr/bin/chromium ]]; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing chromium via apt-get (one-time)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq </dev/null >/dev/null
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core </dev/null >/dev/null
    log "chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo '?')"
  else
    log "WARNING: /usr/bin/chromium missing and cannot apt-get install it (need root + apt-get);"
    log "         browser tests will be skipped (or fail under CI=true)."
  fi
fi

# --- 2. Virtualenv ---
PYTHON="${PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]]; then
  log "creating .venv with $($PYTHON --version 2>&1)..."
  "$PYTHON" -m venv .venv
fi

# --- 3. Python dependencies (only when requirements changed) ---
STAMP=.venv/.requirements.sha256
WANT_HASH="$(cat requirements.txt requirements-dev.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
HAVE_HASH="$(cat "$STAMP" 2>/dev/null || true)"
if [[ "$WANT_HASH" != "$HAVE_HASH" || ! -x .venv/bin/eae ]]; then
  log "installing Python dependencies into .venv (a few minutes on a fresh machine)..."
  start=$SECONDS
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt </dev/null
  # --- 4. The project, editable: the exact pins above stay the ones in force ---
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
    --no-build-isolation -e . </dev/null
  echo "$WANT_HASH" >"$STAMP"
  log "dependencies installed in $((SECONDS - start)) s"
fi
