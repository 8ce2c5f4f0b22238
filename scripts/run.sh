#!/usr/bin/env bash
# Set up (idempotent, no browser needed) and run the dashboard.
#   bash scripts/run.sh                          # http://localhost:8501
#   bash scripts/run.sh --server.port 8600       # extra arguments go to `streamlit run`
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

bash scripts/setup.sh --no-browser
exec .venv/bin/streamlit run serve.py --server.headless true --browser.gatherUsageStats false "$@"
