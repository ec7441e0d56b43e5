# ClaimDesk: one image for the web process (gunicorn) and the judge worker (celery).
FROM python:3.11-slim

# PYTHONPATH: every process (gunicorn, celery, manage.py, healthchecks) imports the project from
# /app, where templates/, static/ and staticfiles/ sit next to the code (settings.BASE_DIR).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app

RUN groupadd --system claimdesk \
    && useradd --system --gid claimdesk --create-home --home-dir /home/claimdesk claimdesk

WORKDIR /app
COPY . /app
RUN pip install .

# Static files are collected at build time and served by WhiteNoise. The key below exists only
# for this step; the running containers get SECRET_KEY from their environment. Settings create
# the demo's .claimdesk/ folder when DATABASE_URL is unset, as it is here: drop it from the image.
RUN SECRET_KEY=collectstatic-build-only-not-a-secret python manage.py collectstatic --noinput \
    && rm -rf /app/.claimdesk

# The code and collected static files stay owned by root and read-only to the app user.
USER claimdesk

EXPOSE 8000
CMD ["gunicorn", "reviewapp.asgi:application", "--bind", "0.0.0.0:8000", "--workers", "2", "--worker-class", "uvicorn_worker.UvicornWorker"]
