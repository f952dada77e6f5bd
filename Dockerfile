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
# collectstatic needs a key but no database; the build-time key is never used at run time.
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput -v 0
RUN useradd --create-home --uid 10001 studio
USER studio
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--worker-class", "gthread", "--workers", "2", "--threads", "8", "--timeout", "120"]
