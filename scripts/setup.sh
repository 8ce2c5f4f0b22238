#!/usr/bin/env bash
# Idempotent setup for the Early Alignment Explorer.
#   bash scripts/setup.sh               # venv + Python deps + Chromium (browser tests) + HAProxy
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

# --- 1b. HAProxy (Debian package) for the replica test behind a real reverse proxy
# (tests/test_replicas_proxy.py, marked slow and proxy); its service is not started ---
if [[ "$WANT_BROWSER" == 1 && ! -x /usr/sbin/haproxy ]]; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing haproxy via apt-get (one-time)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq </dev/null >/dev/null
    apt-get install -y -qq --no-install-recommends haproxy </dev/null >/dev/null
    log "haproxy installed: $(/usr/sbin/haproxy -v 2>/dev/null | head -1 || echo '?')"
  else
    log "WARNING: /usr/sbin/haproxy missing and cannot apt-get install it (need root + apt-get);"
    log "         the replica test (-m proxy) will be skipped (or fail under CI=true)."
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
# pip's own settings (its config files and PIP_* variables: indexes, find-links, constraints)
# as uv options, one per line, so uv installs from exactly where pip would.
uv_options_from_pip_config() {
  .venv/bin/python -m pip config list 2>/dev/null | .venv/bin/python -c '
import shlex, sys
flags = {"index-url": "--default-index", "extra-index-url": "--index",
         "find-links": "--find-links", "constraint": "--constraint"}
for line in sys.stdin:
    key, _, value = line.strip().partition("=")
    name = key.rpartition(".")[2]
    values = " ".join(shlex.split(value)).split()
    if name in flags:
        for v in values:
            print(flags[name]); print(v)
    elif name == "no-index" and values and values[0].lower() in ("1", "true", "yes", "on"):
        print("--no-index")
    elif name == "cert" and values:
        print("--cert"); print(values[0])'
}

# Dependencies with uv (pinned in requirements-dev.txt; about 30 s on a fresh machine here
# against 80 s for pip), or with pip if uv cannot be had or fails. Byte-compiled at install as
# pip does: where PYTHONDONTWRITEBYTECODE is set (it is on the team's machines) no process
# writes a .pyc, so without them every process compiles every module it imports — importing
# streamlit, plotly, sklearn and the library took 7.6 s per process instead of 2.4 s.
install_requirements() {
  local uv_pin cert="" opt
  local -a uv_opts=()
  uv_pin="$(sed -n 's/^\(uv==[^ #]*\).*/\1/p' requirements-dev.txt)"
  if [[ -n "$uv_pin" ]] && .venv/bin/python -m pip install -q --disable-pip-version-check \
      "$uv_pin" </dev/null; then
    while IFS= read -r opt; do
      if [[ "$opt" == --cert ]]; then
        IFS= read -r cert
      else
        uv_opts+=("$opt")
      fi
    done < <(uv_options_from_pip_config)
    if SSL_CERT_FILE="${SSL_CERT_FILE:-$cert}" .venv/bin/uv pip install -q \
        --python .venv/bin/python --index-strategy unsafe-best-match --compile-bytecode \
        "${uv_opts[@]}" \
        -r requirements-dev.txt </dev/null; then
      return 0
    fi
    log "uv could not install the requirements; installing them with pip"
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt </dev/null
}

if [[ "$WANT_HASH" != "$HAVE_HASH" || ! -x .venv/bin/eae ]]; then
  log "installing Python dependencies into .venv..."
  start=$SECONDS
  install_requirements
# --- 4. The project, editable: the exact pins above stay the ones in force ---
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
    --no-build-isolation -e . </dev/null
  echo "$WANT_HASH" >"$STAMP"
  log "dependencies installed in $((SECONDS - start)) s"
fi

# The project's own modules byte-compiled too (only the changed ones again; well under 1 s):
# where PYTHONDONTWRITEBYTECODE is set, imports never write them.
.venv/bin/python -m compileall -q -j 0 dynamics viz runtime ui app_pages devtools bench tests app.py \
  serve.py >/dev/null || log "byte-compiling the project's modules failed (imports compile them)"
