import os

from celery import Celery, shared_task, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

app = Celery("reviewapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["reviewapp.judging", "reviewapp.webhooks"])

# Tasks were named "reviewapp.tasks.<function>" before they moved to their folders.
FORMER_TASK_PREFIX = "reviewapp.tasks."


def task(**options):
    """A Celery task named after its module path ("reviewapp.judging.tasks.judge_answer": the name
    leads to its file), also registered under its former name ("reviewapp.tasks.judge_answer") so
    that messages a previous release queued still run. The former names go one release on."""

    def register(function):
        shared_task(name=FORMER_TASK_PREFIX + function.__name__, **options)(function)
        return shared_task(name=f"{function.__module__}.{function.__name__}", **options)(function)

    return register


@signals.worker_init.connect
def _load_judges(**kwargs):
    """Import the judge backends and profiles before the first task, not inside it: importing
    `openai` builds hundreds of pydantic models (seconds of CPU), and on a thread pool every
    thread's first task would wait on that import while holding its answer's claim."""
    from judges.backends import openai_chat  # noqa: F401
    from judges.checks import apply_checks  # noqa: F401
    from judges.backends.offline.judge import judge_offline  # noqa: F401
    from judges.profiles import list_profiles

    list_profiles()


def _beat_schedule() -> dict:
    # Run by `celery beat` (compose's beat service) or a worker started with -B (the demo).
    from django.conf import settings

    return {
        "sweep-stuck-answers": {
            "task": "reviewapp.judging.tasks.sweep_stuck_answers",
            "schedule": settings.JUDGE_SWEEP_INTERVAL_SECONDS,
        },
        "canary": {
            "task": "reviewapp.judging.tasks.canary_dispatch",
            "schedule": settings.CANARY_INTERVAL_SECONDS,
        },
        # A delivery whose task was lost (broker down at commit, a purged queue) is sent again.
        "resend-overdue-webhooks": {
            "task": "reviewapp.webhooks.tasks.resend_overdue_webhooks",
            "schedule": settings.WEBHOOK_RESEND_INTERVAL_SECONDS,
        },
    }


@app.on_after_configure.connect
def _schedule(sender, **kwargs):
    # When the configuration is first read, not at import: importing reviewapp must not load the
    # settings (manage.py and the test plugin start servers first and put their URLs in the
    # environment).
    sender.conf.beat_schedule = _beat_schedule()


@signals.worker_ready.connect
def _worker_ready(sender, **kwargs):
    from reviewapp.judging.liveness import worker_started

    worker_started(hostname=sender.hostname)


@signals.worker_shutdown.connect
def _worker_shutdown(sender, **kwargs):
    from reviewapp.judging.liveness import forget_worker

    try:
        forget_worker(hostname=sender.hostname)
    except Exception:  # the database may be what is going away; the row then stays, flagged stale
        pass


@signals.beat_init.connect
def _beat_started(sender=None, **kwargs):
    """Beat's first dispatch comes one canary interval after it starts: stamp the heartbeat at start
    so a freshly started fleet is not reported with beat stale until then."""
    from reviewapp.judging.liveness import beat_sent

    try:
        beat_sent()
    except Exception:  # the database may not be up yet; the first dispatch stamps it then
        pass


@signals.before_task_publish.connect
def _beat_sent(sender=None, **kwargs):
    """Beat's heartbeat: stamped by the process that publishes the canary dispatch (beat, or the
    demo's worker running it with -B), not by the worker that later runs it."""
    if sender != "reviewapp.judging.tasks.canary_dispatch":
        return
    from reviewapp.judging.liveness import beat_sent

    try:
        beat_sent()
    except Exception:  # the database may be down; the dispatch itself must still go out
        pass
