"""One settings module, driven by the environment (12-factor).

With nothing set it is the embedded default: DEBUG on, SQLite in the checkout, Celery tasks run
in-process. `DATABASE_URL` switches to PostgreSQL and `CELERY_BROKER_URL` to a real broker. With
`DEBUG=0` (production) `SECRET_KEY` must be given and the secure settings below apply.
"""

import importlib.util
import re
from datetime import timedelta
from pathlib import Path

import django_stubs_ext
import environ
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

django_stubs_ext.monkeypatch()  # lets ModelAdmin[Model] and friends be subscripted at run time

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "django-insecure-development-only-set-SECRET_KEY-in-production"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "csp",
    "axes",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "trees",
    "accounting",
]

# Behind a site's SSO the web server authenticates and passes REMOTE_USER; logins are made
# on first sight, with the SSO name as their scheduler user name. A proxy in front of gunicorn
# (nginx) cannot set the WSGI REMOTE_USER, only a request header: REMOTE_USER_HEADER names the
# one it sets (`X-Remote-User`), overwriting what a client sent; empty, REMOTE_USER is read.
REMOTE_USER_LOGIN = env.bool("REMOTE_USER_LOGIN", default=False)
REMOTE_USER_HEADER = env.str("REMOTE_USER_HEADER", default="")
REMOTE_USER_META_KEY = (
    "HTTP_" + REMOTE_USER_HEADER.strip().upper().replace("-", "_")
    if REMOTE_USER_HEADER.strip()
    else "REMOTE_USER"
)

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Above whitenoise, so that static files carry the policies too.
    "csp.middleware.CSPMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    *(["fairshare_site.middleware.SsoLoginMiddleware"] if REMOTE_USER_LOGIN else []),
    # Anonymous people see the login page and nothing else.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "fairshare_site.middleware.PrivateAnswersMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "fairshare_site.middleware.ErrorAnswersMiddleware",
    # Last, as django-axes asks: it answers the login attempts its backend refused.
    "axes.middleware.AxesMiddleware",
]

# Scripts only from the site itself: no inline script, no eval. The plotly.js bundle we serve
# (the plotly wheel's plotly.min.js) needs no 'unsafe-eval' for the traces we draw (icicle,
# scatter, bar): its Function() and eval() calls sit in fallbacks modern browsers never take
# (globalThis, Function.prototype.bind) and in the map traces' worker loader. Styles allow
# 'unsafe-inline': plotly.js injects <style> rules and style attributes as it draws (with
# style-src 'self' alone Chromium blocks them and the icicle does not draw); styles run no script.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:", "blob:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
# No page needs the browser's powerful features: refuse them to every frame and script.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer", "camera", "display-capture", "geolocation", "gyroscope",
        "magnetometer", "microphone", "midi", "payment", "usb", "serial", "bluetooth",
        "browsing-topics", "interest-cohort",
    )
}  # fmt: skip

ROOT_URLCONF = "fairshare_site.urls"

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

WSGI_APPLICATION = "fairshare_site.wsgi.application"
ASGI_APPLICATION = "fairshare_site.asgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Imports and cycles run beside the web server; wait for the writer instead of failing.
    # IMMEDIATE: a transaction takes the write lock when it begins, so two writers queue (a
    # deferred one that read first fails with "database is locked" when it comes to write).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# SSO logins (REMOTE_USER) come first: the web server has checked them, and they never reach
# django-axes, which throttles only the password logins that follow it.
AUTHENTICATION_BACKENDS = [
    *(["django.contrib.auth.backends.RemoteUserBackend"] if REMOTE_USER_LOGIN else []),
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT failed logins for one user name, or
# from one address, within LOGIN_LOCKOUT_MINUTES, further attempts get 429 for that long; each
# lockout is logged (logger "axes"). Addresses are the peer's, unless TRUSTED_PROXIES says how
# many proxies in front of the site append to X-Forwarded-For (a spoofable header otherwise).
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "429.html"
AXES_RESET_ON_SUCCESS = True
# Attempts during a lockout do not lengthen it.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
TRUSTED_PROXIES = env.int("TRUSTED_PROXIES", default=0)
AXES_IPWARE_PROXY_COUNT = TRUSTED_PROXIES or None
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR") if TRUSTED_PROXIES else ("REMOTE_ADDR",)
)

# Password reset mails a link: it is offered only when a mail server is set (EMAIL_URL, e.g.
# smtp+tls://user:password@mail.example.org:587); without one it would fail silently.
PASSWORD_RESET = bool(env.str("EMAIL_URL", default=""))
if PASSWORD_RESET:
    vars().update(env.email_url("EMAIL_URL"))
    DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="webmaster@localhost")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
# Plotly.js from the plotly package's own bundle: HPC sites are often offline, no CDN.
_PLOTLY = importlib.util.find_spec("plotly")
if _PLOTLY is None:
    raise ImproperlyConfigured("the plotly package is missing: pip install -r requirements.txt")
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("plotly", Path(str(_PLOTLY.origin)).resolve().parent / "package_data"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

# Uploads on the import page (docs/uploads.md). The request is refused past the first limit
# before it is read; each file past the second as it streams in; a gzip past the third as it is
# read (also by the ingest commands). Files wait in UPLOAD_DIR for the import task: with a
# broker, the workers must see the same folder (run them on the web server's host or share it).
UPLOAD_MAX_REQUEST_BYTES = env.int("UPLOAD_MAX_REQUEST_BYTES", default=4 << 30)
UPLOAD_MAX_FILE_BYTES = env.int("UPLOAD_MAX_FILE_BYTES", default=2 << 30)
MAX_DECOMPRESSED_BYTES = env.int("MAX_DECOMPRESSED_BYTES", default=2 << 30)
UPLOAD_DIR = Path(env.str("UPLOAD_DIR", default=str(BASE_DIR / "uploads")))
# Django's own temporary files of an upload in progress, there too: the clean-up sees them.
FILE_UPLOAD_TEMP_DIR = str(UPLOAD_DIR / "incoming")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
# Folders of uploads older than this whose import is not running (a worker killed mid-import
# included, found by its age) are removed by the hourly clean-up (manage.py clean_uploads).
UPLOAD_STALE_HOURS = env.int("UPLOAD_STALE_HOURS", default=24)
UPLOAD_REJECTS_SHOWN = 1000

# Celery: a real broker when CELERY_BROKER_URL is set (Redis in production); otherwise tasks
# run eagerly in the calling process, so the embedded default needs no server.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if CELERY_TASK_ALWAYS_EAGER:
    # Never connected to: an eager task only borrows a producer's settings, and without a
    # URL kombu warns that it falls back to AMQP on localhost.
    CELERY_BROKER_URL = "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=600)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=540)
CELERY_TIMEZONE = TIME_ZONE
# A task whose worker died unacknowledged goes back to the queue after this many seconds
# (Redis); longer than the longest cycle, or a slow cycle would run twice (harmlessly).
_VISIBILITY_TIMEOUT = env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _VISIBILITY_TIMEOUT,
    # How often a worker looks for such tasks (kombu's default: every 100 s).
    "unacked_restore_interval": max(1, min(10, _VISIBILITY_TIMEOUT // 3)),
    "unacked_restore_throttle": 1,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The cache every web process shares (the API throttle's counts): CACHE_URL, else the broker's
# Redis, else the database's table `django_cache` (`manage.py createcachetable`, run beside
# migrate). Django's default, each process's own memory, let each worker count on its own.
_CACHE_URL = env.str("CACHE_URL", default="") or (
    CELERY_BROKER_URL
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else "dbcache://django_cache"
)
CACHES = {"default": env.cache_url_config(_CACHE_URL)}
# Each minute the beat queues the cycle of every cluster whose scheduler_iteration slot has not
# run (a cycle names its slot, so a duplicated tick or a retry finds it done); daily, it thins
# the history.
CELERY_BEAT_SCHEDULE = {
    "due-cycles": {"task": "accounting.tasks.run_due_cycles", "schedule": 60.0},
    "history-roll-up": {"task": "accounting.tasks.roll_up_history", "schedule": 86_400.0},
    "uploads-clean-up": {"task": "accounting.tasks.clean_uploads", "schedule": 3_600.0},
    "stalled-work": {"task": "accounting.tasks.sweep_stalled_work", "schedule": 60.0},
}
# Work whose worker is gone (docs/deploy.md): a what-if, upload or ingestion writes a heartbeat
# every WORK_HEARTBEAT_SECONDS while it runs; one silent for WORK_SILENT_MINUTES, or queued
# untaken for WORK_QUEUED_MINUTES (its message lost in the broker), is sent again once, then
# failed with why by the beat's minute sweep (an ingestion is failed at once).
WORK_HEARTBEAT_SECONDS = env.int("WORK_HEARTBEAT_SECONDS", default=30)
WORK_SILENT_MINUTES = env.int("WORK_SILENT_MINUTES", default=5)
WORK_QUEUED_MINUTES = env.int("WORK_QUEUED_MINUTES", default=60)
if not 0 < 2 * WORK_HEARTBEAT_SECONDS <= 60 * WORK_SILENT_MINUTES or WORK_QUEUED_MINUTES < 1:
    raise ImproperlyConfigured(
        "WORK_SILENT_MINUTES must hold two heartbeats (WORK_HEARTBEAT_SECONDS) at least, and"
        " WORK_QUEUED_MINUTES be 1 or more"
    )


def cycle_queues_parse(text: str) -> dict[str, str]:
    """CYCLE_QUEUES ("big=hpc,gpu;lab=test1,test2") as the Celery queue of each cluster named
    ({"hpc": "cycles.big", "gpu": "cycles.big", ...}); ImproperlyConfigured when it does not
    read, or names a cluster twice."""
    queues: dict[str, str] = {}
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        queue, equals, names = entry.partition("=")
        clusters = [name.strip() for name in names.split(",") if name.strip()]
        if not equals or not re.fullmatch(r"[A-Za-z0-9_-]+", queue.strip()) or not clusters:
            raise ImproperlyConfigured(
                f"CYCLE_QUEUES: {entry!r} is not QUEUE=CLUSTER[,CLUSTER...] (a queue name of"
                " letters, digits, - and _), as in big=hpc,gpu;lab=test"
            )
        for cluster in clusters:
            if cluster in queues:
                raise ImproperlyConfigured(f"CYCLE_QUEUES: cluster {cluster!r} is in two queues")
            queues[cluster] = f"cycles.{queue.strip()}"
    return queues


# Cycles of the clusters named in CYCLE_QUEUES go to a queue of their own, `cycles.QUEUE`, which
# workers started with `-Q cycles.QUEUE` take; every other cluster's to the default queue,
# `celery`, with the rest of the tasks (docs/scale.md).
CYCLE_QUEUES = cycle_queues_parse(env.str("CYCLE_QUEUES", default=""))
# History older than this many days goes, a whole month at a time (on PostgreSQL a month's
# partition is dropped), in the daily roll-up; 0 keeps everything (docs/history.md).
HISTORY_RETENTION_DAYS = env.int("HISTORY_RETENTION_DAYS", default=0)
if HISTORY_RETENTION_DAYS < 0:
    raise ImproperlyConfigured("HISTORY_RETENTION_DAYS must be 0 (keep everything) or more")

# The REST API (docs/api.md): personal tokens (`Authorization: Bearer`) or the session; the
# pages' access rules; JSON only, errors as {"error", "detail"}; each person (every token and
# the session together) throttled to API_THROTTLE_RATE requests, each address to
# API_THROTTLE_ADDRESS_RATE, counted in the shared cache (CACHES) for every web process at once;
# addresses as the login throttle reads them (NUM_PROXIES: X-Forwarded-For only behind proxies).
# A JSON body of the API (share edits, simulations) is read up to this many bytes; 413 beyond.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=10 << 20)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "trees.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["trees.api.permissions.TokenScopes"],
    "DEFAULT_RENDERER_CLASSES": ["trees.api.renderers.JsonRenderer"],
    "DEFAULT_PARSER_CLASSES": ["trees.api.parsers.BoundedJsonParser"],
    "DEFAULT_FILTER_BACKENDS": [],
    "DEFAULT_THROTTLE_CLASSES": [
        "trees.api.throttles.PersonRateThrottle",
        "trees.api.throttles.AddressRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "api": env.str("API_THROTTLE_RATE", default="600/min"),
        "api-address": env.str("API_THROTTLE_ADDRESS_RATE", default="1800/min"),
    },
    "NUM_PROXIES": TRUSTED_PROXIES,
    "EXCEPTION_HANDLER": "trees.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "URL_FORMAT_OVERRIDE": None,  # `format` is /shares/' own parameter (sshare, pbsfs)
}
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=180)  # a new token's default lifetime
# Tokens one person may hold at once (neither revoked nor expired); a new one past it is refused.
API_TOKENS_PER_USER = env.int("API_TOKENS_PER_USER", default=10)
# /metrics (Prometheus) answers a token with the `metrics` scope, or any request from these
# addresses (a site's Prometheus server); METRICS_MAX_DEPTH bounds the nodes it lists (the
# root is depth 0; users of a three-level tree are depth 3): each node is a series per gauge.
METRICS_ADDRESSES = env.list("METRICS_ADDRESSES", default=[])
METRICS_MAX_DEPTH = env.int("METRICS_MAX_DEPTH", default=3)
# ... and at most METRICS_MAX_SERIES node series of each cluster (a node is one per gauge its
# scheduler has: 5 on PBS, 10 on Accelerator), the nodes nearest the root: a scrape of a
# 200,000-group Accelerator cluster took 42 s; fairshare_metrics_nodes_left_out{cluster} says
# how many nodes a scrape left out.
METRICS_MAX_SERIES = env.int("METRICS_MAX_SERIES", default=100_000)
# The deepest node a stored tree may have (the root is 0). Sites' trees are 3 to 6 deep;
# neither PBS nor Slurm states a limit, and both walk their trees recursively, so a tree of
# thousands of levels is a mistake (or an attack) that costs every cycle, page and scrape.
MAX_TREE_DEPTH = env.int("MAX_TREE_DEPTH", default=100)
SPECTACULAR_SETTINGS = {
    "TITLE": "Fairshare dashboard API",
    "DESCRIPTION": (
        "Every number of the fairshare dashboard for programs: the tree as the scheduler"
        " computes it, each node's path, history and jobs, a person's standing, comparisons,"
        " trends and the audit trail; accounting pushed from a PBS host; share edits. The"
        " same access rules as the pages. Authenticate with `Authorization: Bearer TOKEN` (a"
        " personal token from /accounts/tokens/) or the session."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {},
}

LOG_LEVEL = env.str("LOG_LEVEL", default="WARNING")
# Django's own records go to the root's handler only: its default console handler for DEBUG
# printed each of them (a refused page's "Forbidden: ...") a second time.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django": {"handlers": [], "level": LOG_LEVEL, "propagate": True}},
}
