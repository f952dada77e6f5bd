# One image for the web server, the Celery workers and the mock model server (the last stage,
# `studio`, what `docker build .` makes), and one for the demo's real models (`--target models`).
# Build the frontend in a Node stage, then install the Python package into a slim runtime.
FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# The demo's model server (models/server.py): KServe's own ModelServer with OpenCV and
# scikit-image, in an image of its own as in a cluster (its dependencies are not the studio's).
# `docker build --target models -t inference-graph-studio-models .`; it listens on MODELS_PORT, as
# under `make run`. Nothing is downloaded at run time: the cascades ship in OpenCV's wheel, the
# gallery faces in scikit-image's. OpenCV's headless wheel needs only libz and libstdc++ of the
# system, both in the slim image.
FROM python:3.11-slim-bookworm AS models
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/app MODELS_PORT=9020
WORKDIR /app
COPY models/requirements.txt models/requirements.txt
RUN pip install --no-cache-dir -r models/requirements.txt
COPY models/__init__.py models/server.py models/vision.py models/
RUN python -m compileall -q models
RUN groupadd --gid 10001 models && useradd --create-home --uid 10001 --gid 10001 models
USER 10001:10001
EXPOSE 9020
# On every interface of the container (the server's default is loopback, for a developer's machine).
CMD ["sh", "-c", "exec python -m models.server --host 0.0.0.0 --http_port \"$MODELS_PORT\""]

FROM python:3.11-slim-bookworm AS studio
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=config.settings PYTHONPATH=/app
WORKDIR /app
COPY pyproject.toml ./
COPY config/ config/
COPY graphs/ graphs/
COPY execution/ execution/
COPY deploys/ deploys/
RUN pip install --no-cache-dir .
COPY manage.py ./
COPY templates/ templates/
# The demo's photos (execution/devtools/demo.py, PHOTOS): the Run panel's samples and, with the real models,
# face-recognition's suite. The model server's code is not here: it is the models stage's.
COPY models/samples/ models/samples/
COPY --from=frontend /src/frontend/dist frontend/dist
# Everything the processes read is made here, so they run on a read-only root filesystem
# (deploy/kubernetes): the static files are collected (collectstatic needs a key but no database;
# the build-time key is never used at run time) and the code is compiled once (with
# PYTHONDONTWRITEBYTECODE nothing is written later). Writable at run time: /tmp only (Celery beat's
# schedule file, gunicorn's worker heartbeats, the workers' liveness file).
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput -v 0 \
    && python -m compileall -q config graphs execution deploys
RUN groupadd --gid 10001 studio && useradd --create-home --uid 10001 --gid 10001 studio
# Numeric, so that Kubernetes can check runAsNonRoot against the image itself.
USER 10001:10001
EXPOSE 8000
# --no-control-socket: gunicorn would otherwise create one under $HOME, read-only in a cluster.
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--worker-class", "gthread", "--workers", "2", "--threads", "8", "--timeout", "120", "--no-control-socket"]
