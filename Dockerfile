# One image for the web server, the Celery workers and the mock model server.
# Build the frontend in a Node stage, then install the Python package into a slim runtime.
FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=config.settings PYTHONPATH=/app
WORKDIR /app
COPY pyproject.toml ./
COPY config/ config/
COPY graphs/ graphs/
COPY execution/ execution/
RUN pip install --no-cache-dir .
COPY manage.py ./
COPY templates/ templates/
COPY --from=frontend /src/frontend/dist frontend/dist
# Everything the processes read is made here, so they run on a read-only root filesystem
# (deploy/kubernetes): the static files are collected (collectstatic needs a key but no database;
# the build-time key is never used at run time) and the code is compiled once (with
# PYTHONDONTWRITEBYTECODE nothing is written later). Writable at run time: /tmp only (Celery beat's
# schedule file, gunicorn's worker heartbeats, the workers' liveness file).
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput -v 0 \
    && python -m compileall -q config graphs execution
RUN groupadd --gid 10001 studio && useradd --create-home --uid 10001 --gid 10001 studio
# Numeric, so that Kubernetes can check runAsNonRoot against the image itself.
USER 10001:10001
EXPOSE 8000
# --no-control-socket: gunicorn would otherwise create one under $HOME, read-only in a cluster.
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--worker-class", "gthread", "--workers", "2", "--threads", "8", "--timeout", "120", "--no-control-socket"]
