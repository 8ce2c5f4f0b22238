#!/usr/bin/env bash
# Set up (idempotent, no browser needed) and run the dashboard.
#   bash scripts/run.sh                          # http://localhost:8501
#   bash scripts/run.sh --server.port 8600       # extra arguments go to `streamlit run`
# After the set-up this is `eae app` (ui/launcher.py: `streamlit run serve.py` with the
# server flags), the command an installed copy has too.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

bash scripts/setup.sh --no-browser
exec .venv/bin/eae app "$@"
