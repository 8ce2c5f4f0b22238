# Early Alignment Explorer: the Streamlit dashboard for a hosted instance.
#
#   docker build -t eae .
#   docker run -p 8501:8501 -v eae-cache:/data eae
#
# Limits are EAE_* environment variables (docs/hosting.md); the run cache lives in the
# /data volume and can be shared by several replicas. Python packages come from the
# package index pip is configured for (a mirror can be set with PIP_INDEX_URL at build).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    EAE_CACHE_DIR=/data/cache \
    NUMBA_CACHE_DIR=/app/.numba_cache \
    MPLCONFIGDIR=/tmp/matplotlib

# An unprivileged user owns the app's writable places; the code itself stays root-owned.
RUN groupadd --system --gid 10001 eae \
    && useradd --system --uid 10001 --gid eae --home-dir /app --shell /usr/sbin/nologin eae

WORKDIR /app

# Dependencies first, so code changes do not reinstall them (exact pins in the file).
COPY requirements.txt ./
RUN python -m pip install --no-cache-dir -r requirements.txt

COPY --chown=root:root . .
# The library itself, editable (no copy): `import dynamics` from anywhere and the `eae` command;
# --no-deps keeps the exact pins installed above.
RUN python -m pip install --no-cache-dir --no-deps -e . \
    && mkdir -p /data/cache /app/.numba_cache /tmp/matplotlib \
    && chown -R eae:eae /data /app/.numba_cache /tmp/matplotlib

USER 10001:10001

# Compile the numba kernels into the image (cache=True) so the first visitor does not wait
# for the JIT: one short run of each integrator. A failure here means a broken image.
RUN python -m dynamics run --quiet --out /tmp/warm.npz --set integrator.t_end=1 \
    && python -m dynamics run --quiet --out /tmp/warm.npz --set integrator.method=gd \
        --set integrator.t_end=1 \
    && rm -f /tmp/warm.npz /tmp/warm.json \
    && rm -rf /data/cache/*

VOLUME ["/data"]
EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.status == 200 else 1)"]

# .streamlit/config.toml holds the hosting settings (XSRF, upload cap, theme, ...).
CMD ["python", "-m", "streamlit", "run", "serve.py", \
     "--server.address", "0.0.0.0", "--server.port", "8501", "--server.headless", "true"]
