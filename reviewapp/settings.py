"""ClaimDesk settings. Every deployment-specific value comes from the environment (see README)."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from reviewapp.env import env_bool, env_choice, env_float, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent
# Local state of the embedded demo (SQLite file, the broker's folders); never used in production.
DEMO_STATE_DIR = BASE_DIR / ".claimdesk"

DEBUG = env_bool("DEBUG", False)
# The fallback key is for the demo and tests only; `check --deploy` rejects it (security.W009).
SECRET_KEY = env_str("SECRET_KEY", "django-insecure-claimdesk-demo-key-set-SECRET_KEY-in-production")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "ninja",  # serves the API docs from local static files, not a CDN
    "reviewapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "reviewapp.middleware.security_headers",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "reviewapp.urls"
WSGI_APPLICATION = "reviewapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database(url: str) -> dict:
    try:
        config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj-database-url raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} is not a database URL: {exc}") from None
    engine = config.get("ENGINE", "")
    if engine.endswith("sqlite3"):
        # The demo runs a web server and a worker on one SQLite file: wait for locks instead of
        # failing, take write locks up front, and let readers proceed during writes (WAL).
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    elif not engine.endswith("postgresql"):
        raise ImproperlyConfigured(f"DATABASE_URL={url!r}: only postgres:// and sqlite:// are supported")
    return config


DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{DEMO_STATE_DIR / 'claimdesk.sqlite3'}")
if DATABASE_URL.startswith("sqlite") and "DATABASE_URL" not in os.environ:
    DEMO_STATE_DIR.mkdir(exist_ok=True)  # SQLite will not create the file's folder itself
DATABASES = {"default": _database(DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/queue/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Without collectstatic (the demo, tests) serve straight from the app and project folders.
WHITENOISE_USE_FINDERS = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR"), "INFO")},
}

# --- The judge -------------------------------------------------------------------------------
OPENAI_BASE_URL = env_url("OPENAI_BASE_URL", None, schemes=("http", "https"))
OPENAI_API_KEY = env_str("OPENAI_API_KEY", None)
JUDGE_MODEL = env_str("JUDGE_MODEL", "gpt-4o-mini")
JUDGE_PROFILE = env_str("JUDGE_PROFILE", "claim_audit")
# With no endpoint configured the offline judge runs, so the app works on a bare machine.
JUDGE_BACKEND = env_choice("JUDGE_BACKEND", ("offline", "openai"), "openai" if OPENAI_BASE_URL else "offline")
if JUDGE_BACKEND == "openai" and not OPENAI_BASE_URL:
    raise ImproperlyConfigured("JUDGE_BACKEND=openai needs OPENAI_BASE_URL")
JUDGE_TIMEOUT_SECONDS = env_float("JUDGE_TIMEOUT_SECONDS", 60.0, minimum=1.0)
# All LLM requests for one answer (retries and the repair request included) fit in this budget.
JUDGE_RETRY_BUDGET_SECONDS = env_float("JUDGE_RETRY_BUDGET_SECONDS", 120.0, minimum=1.0)
JUDGE_MAX_ATTEMPTS = env_int("JUDGE_MAX_ATTEMPTS", 5, minimum=1)

# --- Celery ----------------------------------------------------------------------------------
# The demo's default broker is a folder on disk: no server to install, a real worker process.
CELERY_BROKER_URL = env_url(
    "CELERY_BROKER_URL", "filesystem://", schemes=("redis", "rediss", "filesystem", "amqp", "memory")
)
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "claimdesk")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # a task lost with its worker is delivered again...
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ...including when the worker process is killed
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("JUDGE_TASK_SOFT_TIME_LIMIT", 240, minimum=5)
CELERY_TASK_TIME_LIMIT = env_int("JUDGE_TASK_TIME_LIMIT", 300, minimum=10)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("JUDGE_TASK_TIME_LIMIT must be greater than JUDGE_TASK_SOFT_TIME_LIMIT")
if JUDGE_RETRY_BUDGET_SECONDS >= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("JUDGE_RETRY_BUDGET_SECONDS must be less than JUDGE_TASK_SOFT_TIME_LIMIT")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = Path(env_str("CELERY_BROKER_DIR", str(DEMO_STATE_DIR / "broker")))
    for _folder in ("messages", "control"):  # the filesystem transport expects them to exist
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "messages"),
        "data_folder_out": str(_broker_dir / "messages"),
        "control_folder": str(_broker_dir / "control"),
        "polling_interval": 0.1,  # the demo should feel live; a folder scan is cheap
    }
else:
    # An unacknowledged task is redelivered after the visibility timeout; it must outlast the
    # longest a task may legitimately run, or a slow judge call would be judged twice.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT * 2 + 60}
# How long a claimed answer stays claimed before another delivery may take it over.
JUDGE_CLAIM_SECONDS = CELERY_TASK_TIME_LIMIT + 30
JUDGE_MAX_RETRIES = env_int("JUDGE_MAX_RETRIES", 5, minimum=0)

# --- Pages ---------------------------------------------------------------------------------
# /calibration/ aggregates every decided claim; its figures are reused for this many seconds.
CALIBRATION_CACHE_SECONDS = env_int("CALIBRATION_CACHE_SECONDS", 60, minimum=0)

# --- API -------------------------------------------------------------------------------------
NINJA_PAGINATION_MAX_LIMIT = 200
