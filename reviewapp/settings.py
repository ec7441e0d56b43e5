"""ClaimDesk settings. Every deployment-specific value comes from the environment (see README)."""

from __future__ import annotations

from datetime import timedelta
import ipaddress
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from reviewapp import embedded
from reviewapp.env import env_bool, env_choice, env_float, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent
# Local state of the demo (its embedded Postgres and Valkey, beat's schedule); never used in
# production.
DEMO_STATE_DIR = embedded.DEMO_STATE_DIR

DEBUG = env_bool("DEBUG", False)
# The fallback key is for the demo and tests only; `check --deploy` rejects it (security.W009).
SECRET_KEY = env_str(
    "SECRET_KEY", "django-insecure-claimdesk-demo-key-set-SECRET_KEY-in-production"
)
# Old keys during a rotation: sessions, signed values and sealed webhook secrets made under them
# still open (run `manage.py reseal_secrets` before dropping one).
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

# HTTPS: secure by default whenever DEBUG is off (`check --deploy --fail-level WARNING` passes);
# the demo (DEBUG=true) and the test settings in pyproject.toml turn them off explicitly, being
# plain http on localhost. Behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER=true.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # health checks call it over http from inside the host
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"

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
    "axes",  # sign-in throttling (below); its tables come from its own migrations
    "reviewapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "reviewapp.middleware.security_headers",
    "reviewapp.middleware.api_body_limit",
    "reviewapp.middleware.StaticFiles",  # WhiteNoise, async-capable
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # last, as django-axes requires: it answers a locked-out sign-in
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "reviewapp.urls"
WSGI_APPLICATION = "reviewapp.wsgi.application"
ASGI_APPLICATION = "reviewapp.asgi.application"

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
                "reviewapp.access.role_flags",
                "reviewapp.quality.views.paused_banner",
            ],
        },
    },
]


def _database(url: str) -> dict:
    try:
        config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj-database-url raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} is not a database URL: {exc}") from None
    if not config.get("ENGINE", "").endswith("postgresql"):
        raise ImproperlyConfigured(f"DATABASE_URL={url!r}: only postgres:// is supported")
    if DATABASE_POOL_SIZE:
        # One pool per process shared by its threads (psycopg_pool), instead of a connection per
        # thread: a judge worker's 64 threads spend most of their time waiting on the LLM, with
        # the connection handed back (services.judging.run_judge), so a few connections serve all.
        config["CONN_MAX_AGE"] = 0  # Django's pool requires it; the pool keeps the connections
        # With health checks on, Django gives the pool psycopg_pool's check_connection: a pooled
        # connection is tested as it is checked out, so one a Postgres restart killed is replaced,
        # not handed to a request. (Passing `check` in the pool options instead collides with it.)
        config["CONN_HEALTH_CHECKS"] = True
        config.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": DATABASE_POOL_SIZE,
                                                     "timeout": DATABASE_POOL_TIMEOUT}
    return config


# N: a pool of at most N connections per process. 0: a persistent connection per thread
# (CONN_MAX_AGE=60), as the web wants it (a database that is down is a 503 at once, not after the
# pool's wait). Set it on Celery workers: Celery's Django fixup closes a worker's connections after
# every task whatever CONN_MAX_AGE says, so without a pool every judged answer starts a Postgres
# backend (milliseconds of each verdict); closing a pooled connection hands it back instead.
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 0, minimum=0)
# Seconds a thread waits for a pooled connection (or for Postgres to take one) before the error:
# a web request should fail fast (503) when Postgres is down; a worker can wait (compose: web 3 s).
DATABASE_POOL_TIMEOUT = env_float("DATABASE_POOL_TIMEOUT", 30.0, minimum=0.1)


# `manage.py demo` and the tests start their own servers when these are unset
# (reviewapp/embedded.py).
DATABASE_URL = env_str("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/claimdesk")
DATABASES = {"default": _database(DATABASE_URL)}
# Names this deployment on shared servers: Redis pub/sub channels are server-wide (not per
# database number), so two deployments on one Redis must not hear each other's answers judged.
# Two deployments sharing a database are one deployment; by default, then, it is the database.
DEPLOYMENT_NAME = env_str("DEPLOYMENT_NAME") or "{HOST}:{PORT}/{NAME}".format_map(
    {key: DATABASES["default"].get(key) or "" for key in ("HOST", "PORT", "NAME")})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Sign-in throttling (django-axes): after LOGIN_FAILURE_LIMIT failures for one user name, or from
# one address, sign-in is refused for LOGIN_LOCKOUT_MINUTES, even with the right password (which is
# then not hashed: a flood of guesses costs no password-hashing CPU), and each further failure
# starts the wait again. Failures are kept in axes' failure log and attempts (the admin's "Axes"
# section, where deleting an attempt unlocks it; or `manage.py axes_reset`); a lockout is an
# AuditEvent. The address is REMOTE_ADDR, or behind the reverse proxies named in TRUSTED_PROXIES the
# client's from X-Forwarded-For (reviewapp/addresses.py), else every client would share the proxy's
# count. The reverse proxies in front of the web (addresses or networks, comma-separated, e.g.
# "10.0.0.5,172.18.0.0/16"): from them alone X-Forwarded-For names the client.
TRUSTED_PROXIES = []
for _proxy in env_list("TRUSTED_PROXIES", []):
    try:
        TRUSTED_PROXIES.append(ipaddress.ip_network(_proxy, strict=False))
    except ValueError:
        raise ImproperlyConfigured(
            f"TRUSTED_PROXIES: {_proxy!r} is not an address or network"
        ) from None
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "reviewapp.addresses.client_address"
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_LOCKOUT_CALLABLE = "reviewapp.accounts.signin.login_locked_out"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/queue/"

# Single sign-on with OpenID Connect (mozilla-django-oidc; the variables are its settings' names),
# on when OIDC_RP_CLIENT_ID is set. The groups in the OIDC_GROUPS_CLAIM claim (from the ID token or
# userinfo) map to roles: any of OIDC_ADMIN_GROUPS makes an admin, any of OIDC_LEAD_GROUPS a lead
# (settles reviewers' disagreements), any of OIDC_REVIEWER_GROUPS a reviewer; an account in neither
# is refused (403) and no user is made for it. Password sign-in stays.
OIDC_RP_CLIENT_ID = env_str("OIDC_RP_CLIENT_ID", "")
SSO_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_RP_CLIENT_SECRET = env_str("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = env_url(
    "OIDC_OP_AUTHORIZATION_ENDPOINT", None, schemes=("https", "http")
)
OIDC_OP_TOKEN_ENDPOINT = env_url("OIDC_OP_TOKEN_ENDPOINT", None, schemes=("https", "http"))
OIDC_OP_USER_ENDPOINT = env_url("OIDC_OP_USER_ENDPOINT", None, schemes=("https", "http"))
OIDC_OP_JWKS_ENDPOINT = env_url("OIDC_OP_JWKS_ENDPOINT", None, schemes=("https", "http"))
OIDC_RP_SIGN_ALGO = env_choice("OIDC_RP_SIGN_ALGO", ("RS256", "ES256", "HS256"), "RS256")
OIDC_RP_SCOPES = env_str("OIDC_RP_SCOPES", "openid email profile")
OIDC_GROUPS_CLAIM = env_str("OIDC_GROUPS_CLAIM", "groups")
OIDC_REVIEWER_GROUPS = env_list("OIDC_REVIEWER_GROUPS", [])
OIDC_LEAD_GROUPS = env_list("OIDC_LEAD_GROUPS", [])
OIDC_ADMIN_GROUPS = env_list("OIDC_ADMIN_GROUPS", [])
OIDC_PROVIDER_NAME = env_str("OIDC_PROVIDER_NAME", "single sign-on")
OIDC_USE_PKCE = True
OIDC_AUTHENTICATION_CALLBACK_URL = "sso_callback"
LOGIN_REDIRECT_URL_FAILURE = "/accounts/sso/denied"
if SSO_ENABLED:
    _missing = [
        name
        for name in (
            "OIDC_RP_CLIENT_SECRET",
            "OIDC_OP_AUTHORIZATION_ENDPOINT",
            "OIDC_OP_TOKEN_ENDPOINT",
            "OIDC_OP_USER_ENDPOINT",
        )
        if not globals()[name]
    ]
    if OIDC_RP_SIGN_ALGO != "HS256" and not OIDC_OP_JWKS_ENDPOINT:
        _missing.append("OIDC_OP_JWKS_ENDPOINT")
    if _missing:
        raise ImproperlyConfigured(
            f"OIDC_RP_CLIENT_ID is set (single sign-on), but not {', '.join(_missing)}"
        )
    AUTHENTICATION_BACKENDS = [
        *AUTHENTICATION_BACKENDS,
        "reviewapp.accounts.sso.RoleMappingBackend",
    ]

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
    "root": {
        "handlers": ["console"],
        "level": env_choice("LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR"), "INFO"),
    },
    # The MCP SDK logs every stateless /mcp exchange's start and end at INFO: noise, not news.
    "loggers": {"mcp": {"level": "WARNING"}},
}

# --- The judge -------------------------------------------------------------------------------
OPENAI_BASE_URL = env_url("OPENAI_BASE_URL", None, schemes=("http", "https"))
OPENAI_API_KEY = env_str("OPENAI_API_KEY", None)
JUDGE_MODEL = env_str("JUDGE_MODEL", "gpt-4o-mini")
JUDGE_PROFILE = env_str("JUDGE_PROFILE", "claim_audit")
# With no endpoint configured the offline judge runs, so the app works on a bare machine.
JUDGE_BACKEND = env_choice(
    "JUDGE_BACKEND", ("offline", "openai"), "openai" if OPENAI_BASE_URL else "offline"
)
if JUDGE_BACKEND == "openai" and not OPENAI_BASE_URL:
    raise ImproperlyConfigured("JUDGE_BACKEND=openai needs OPENAI_BASE_URL")
JUDGE_TIMEOUT_SECONDS = env_float("JUDGE_TIMEOUT_SECONDS", 60.0, minimum=1.0)
# All LLM requests for one answer (retries and the repair request included) fit in this budget.
JUDGE_RETRY_BUDGET_SECONDS = env_float("JUDGE_RETRY_BUDGET_SECONDS", 120.0, minimum=1.0)
JUDGE_MAX_ATTEMPTS = env_int("JUDGE_MAX_ATTEMPTS", 5, minimum=1)

# --- Celery ----------------------------------------------------------------------------------
# memory:// is one process's broker (a benchmark's baseline): no worker can share it.
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0",
                            schemes=("redis", "rediss", "memory"))
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "claimdesk")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # a task lost with its worker is delivered again...
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ...including when the worker process is killed
# Messages a worker reserves per thread. 1: a killed worker holds only the tasks it was running.
# More can keep a thread pool fed between tasks (judge_throughput.py, 2 x 32 threads, pool 8: 0.896
# and 0.852 of the limit with 4, 0.889 and 0.887 with 1: no clear gain), but what a killed worker
# had reserved waits for the visibility timeout.
CELERY_WORKER_PREFETCH_MULTIPLIER = env_int("CELERY_WORKER_PREFETCH_MULTIPLIER", 1, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("JUDGE_TASK_SOFT_TIME_LIMIT", 240, minimum=5)
CELERY_TASK_TIME_LIMIT = env_int("JUDGE_TASK_TIME_LIMIT", 300, minimum=10)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured(
        "JUDGE_TASK_TIME_LIMIT must be greater than JUDGE_TASK_SOFT_TIME_LIMIT"
    )
if JUDGE_RETRY_BUDGET_SECONDS >= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured(
        "JUDGE_RETRY_BUDGET_SECONDS must be less than JUDGE_TASK_SOFT_TIME_LIMIT"
    )
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# An unacknowledged task is redelivered after the visibility timeout; it must outlast the
# longest a task may legitimately run, or a slow judge call would be judged twice.
CELERY_VISIBILITY_TIMEOUT = env_int(
    "CELERY_VISIBILITY_TIMEOUT", CELERY_TASK_TIME_LIMIT * 2 + 60, minimum=1
)
if CELERY_VISIBILITY_TIMEOUT <= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        f"CELERY_VISIBILITY_TIMEOUT={CELERY_VISIBILITY_TIMEOUT} must be greater than"
        f" JUDGE_TASK_TIME_LIMIT={CELERY_TASK_TIME_LIMIT}: the broker would hand a running judge"
        " task to a second worker"
    )
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
# How long a held answer stays held before another delivery may take it over: past the
# hard time limit, so a live delivery never loses its hold to a duplicate.
JUDGE_HOLD_SECONDS = CELERY_TASK_TIME_LIMIT + env_int("JUDGE_HOLD_MARGIN_SECONDS", 30, minimum=1)
JUDGE_MAX_RETRIES = env_int("JUDGE_MAX_RETRIES", 5, minimum=0)
# First wait before a transient failure is retried; it doubles per retry (capped at 300 s).
JUDGE_RETRY_BACKOFF_SECONDS = env_float("JUDGE_RETRY_BACKOFF_SECONDS", 5.0, minimum=0.1)
# Each worker also consumes its own queue (<hostname>.dq2), so a canary can reach every worker.
CELERY_WORKER_DIRECT = True

# --- Sweeper and liveness (periodic tasks; run `celery beat`, or a worker with -B) ----------------
# An answer 'queued' this long with no live hold lost its message (broker down at commit, a
# restart without persistence): the sweeper enqueues it again. So does a hold that expired.
JUDGE_SWEEP_AFTER_SECONDS = env_int("JUDGE_SWEEP_AFTER_SECONDS", 600, minimum=1)
JUDGE_SWEEP_INTERVAL_SECONDS = env_float("JUDGE_SWEEP_INTERVAL_SECONDS", 60.0, minimum=0.5)
# Bounds, after which the answer fails with the reason and goes to a human.
JUDGE_MAX_SWEEPS = env_int("JUDGE_MAX_SWEEPS", 5, minimum=1)
JUDGE_MAX_LOST = env_int("JUDGE_MAX_LOST", 3, minimum=1)
CANARY_INTERVAL_SECONDS = env_float("CANARY_INTERVAL_SECONDS", 60.0, minimum=0.5)
# /metrics (Prometheus) answers only with this bearer token; unset, it is off (404).
METRICS_TOKEN = env_str("METRICS_TOKEN", "")

# A fleet-wide limit on LLM requests and tokens per minute (judges.ratelimit), shared by every
# worker through Redis: Celery's own rate_limit is per worker. 0 = no limit.
JUDGE_RATE_LIMIT_RPM = env_int("JUDGE_RATE_LIMIT_RPM", 0, minimum=0)
JUDGE_RATE_LIMIT_TPM = env_int("JUDGE_RATE_LIMIT_TPM", 0, minimum=0)
JUDGE_RATE_LIMIT_REDIS_URL = env_url(
    "JUDGE_RATE_LIMIT_REDIS_URL",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else None,
    schemes=("redis", "rediss"),
)
# At most this many LLM requests in flight at once for the whole fleet (the endpoint's concurrency
# limit, past which it answers 429). Run more worker threads than this: the extra ones have their
# next request ready and send it the moment a slot frees. 0 = no limit.
JUDGE_MAX_IN_FLIGHT = env_int("JUDGE_MAX_IN_FLIGHT", 0, minimum=0)
if (
    JUDGE_RATE_LIMIT_RPM or JUDGE_RATE_LIMIT_TPM or JUDGE_MAX_IN_FLIGHT
) and not JUDGE_RATE_LIMIT_REDIS_URL:
    # A limit each process kept to itself would let N workers send N times the limit.
    raise ImproperlyConfigured(
        "JUDGE_RATE_LIMIT_RPM/TPM and JUDGE_MAX_IN_FLIGHT need Redis: set "
        "JUDGE_RATE_LIMIT_REDIS_URL (it defaults to CELERY_BROKER_URL when that is redis://)"
    )
# CPU seconds one answer's judging may spend (judge and checks, in its worker thread; waiting on the
# LLM costs none) before its run fails with that reason: one costly input must not hold a thread.
JUDGE_CPU_BUDGET_SECONDS = env_float("JUDGE_CPU_BUDGET_SECONDS", 20.0, minimum=0.0)
# Fairness: at most this many of one API client's answers judged at once across the fleet; the
# rest wait queued, looking again every JUDGE_CLIENT_WAIT_SECONDS. 0 = no limit.
JUDGE_CLIENT_CONCURRENCY = env_int("JUDGE_CLIENT_CONCURRENCY", 0, minimum=0)
JUDGE_CLIENT_WAIT_SECONDS = env_float("JUDGE_CLIENT_WAIT_SECONDS", 2.0, minimum=0.1)
if JUDGE_CLIENT_CONCURRENCY and not JUDGE_RATE_LIMIT_REDIS_URL:
    raise ImproperlyConfigured(
        "JUDGE_CLIENT_CONCURRENCY needs Redis: set JUDGE_RATE_LIMIT_REDIS_URL "
        "(it defaults to CELERY_BROKER_URL when that is redis://)"
    )

# --- Pages ---------------------------------------------------------------------------------
# /calibration/ aggregates every decided claim; its figures are reused for this many seconds.
CALIBRATION_CACHE_SECONDS = env_int("CALIBRATION_CACHE_SECONDS", 60, minimum=0)
# Bootstrap resamples behind each agreement interval on it (reviewapp/labels/agreement.py); 0: no
# intervals.
AGREEMENT_RESAMPLES = env_int("AGREEMENT_RESAMPLES", 1000, minimum=0)
# Where those figures and the queue counters are kept: each process's memory unless CACHE_URL names
# a Redis, which every web process then shares (reviewapp/cache.py; it is emptied by nothing in the
# app, but give it a database of its own: Django's cache.clear() empties the whole database).
CACHE_URL = env_url("CACHE_URL", None, schemes=("redis", "rediss"))
CACHES = {
    "default": (
        {"BACKEND": "reviewapp.cache.SharedCache", "LOCATION": CACHE_URL, "KEY_PREFIX": "claimdesk"}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- API -------------------------------------------------------------------------------------
NINJA_PAGINATION_MAX_LIMIT = 200

# --- Webhooks --------------------------------------------------------------------------------
# Per POST to a client's endpoint: a slow receiver must not hold a worker thread for long.
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 10.0, minimum=0.1)
# Attempts per delivery before it is marked failed (an admin can still retry it by hand).
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 8, minimum=1)
# Retry n waits between half and all of BACKOFF * 2**(n-1) seconds, capped at BACKOFF_MAX: by
# default up to 1, 2, 4 ... 60 minutes, so eight attempts span one to two hours.
WEBHOOK_BACKOFF_SECONDS = env_float("WEBHOOK_BACKOFF_SECONDS", 60.0, minimum=0.01)
WEBHOOK_BACKOFF_MAX_SECONDS = env_float("WEBHOOK_BACKOFF_MAX_SECONDS", 3600.0, minimum=0.01)
# Beat re-enqueues pending deliveries overdue by this long whose task was lost (never sent twice:
# each send claims its delivery first).
WEBHOOK_RESEND_AFTER_SECONDS = env_float("WEBHOOK_RESEND_AFTER_SECONDS", 60.0, minimum=1)
WEBHOOK_RESEND_INTERVAL_SECONDS = env_float("WEBHOOK_RESEND_INTERVAL_SECONDS", 60.0, minimum=0.5)
# After a secret rotation the old secret also signs for this long, so receivers can switch over.
WEBHOOK_SECRET_GRACE_SECONDS = env_int("WEBHOOK_SECRET_GRACE_SECONDS", 86400, minimum=0)
# Endpoints on loopback, private or link-local addresses are refused in production (they would let
# a client make ClaimDesk call its internal network); the demo and tests post to 127.0.0.1.
WEBHOOK_ALLOW_PRIVATE_URLS = env_bool("WEBHOOK_ALLOW_PRIVATE_URLS", DEBUG)
# Requests per API token, "N/second|minute|hour|day" (moving window); "off" disables it.
API_RATE_LIMIT = env_str("API_RATE_LIMIT", "600/minute")
# Wrong bearer tokens per client address (reviewapp.addresses: REMOTE_ADDR, or X-Forwarded-For
# from TRUSTED_PROXIES) before that address gets 429 for the rest of the window, without the token
# being looked up; "off" disables it.
API_AUTH_FAILURE_LIMIT = env_str("API_AUTH_FAILURE_LIMIT", "30/minute")
for _name in ("API_RATE_LIMIT", "API_AUTH_FAILURE_LIMIT"):
    if globals()[_name] == "off":
        globals()[_name] = None
        continue
    from limits import parse as _parse_limit

    try:
        _parse_limit(globals()[_name])
    except ValueError:
        raise ImproperlyConfigured(
            f"{_name}={globals()[_name]!r} is not a rate like 600/minute (or off)"
        ) from None
# Shared counts in Redis (by default the broker's); without Redis, this process's memory (the demo).
API_RATE_LIMIT_REDIS_URL = env_url(
    "API_RATE_LIMIT_REDIS_URL",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else None,
    schemes=("redis", "rediss"),
)
API_RATE_LIMIT_STORAGE_URL = API_RATE_LIMIT_REDIS_URL or "memory://"
# Each web process reuses an authenticated API client this long instead of reading it per request;
# a token revoked or rotated in another process keeps working at most this long there. 0 = off.
API_CLIENT_CACHE_SECONDS = env_float("API_CLIENT_CACHE_SECONDS", 5.0, minimum=0.0)
# A bigger API request body is refused with 413 before it is read; forms get Django's own cap.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 2 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
# Guardrail waits (POST /api/v1/answers?wait=S) held at once, per web process and per API token
# (across processes, counted in Redis); past either the POST answers 202 at once. A wait costs an
# open socket and a Redis subscription, not a request worker (the view is async: reviewapp/asgi.py).
API_WAITS_PER_PROCESS = env_int("API_WAITS_PER_PROCESS", 200, minimum=0)
API_WAITS_PER_TOKEN = env_int("API_WAITS_PER_TOKEN", 100, minimum=0)
