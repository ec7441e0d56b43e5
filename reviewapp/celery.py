import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

app = Celery("reviewapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["reviewapp"])


def _beat_schedule() -> dict:
    # Run by `celery beat` (compose's beat service) or a worker started with -B (the demo).
    from django.conf import settings

    return {
        "sweep-stuck-answers": {"task": "reviewapp.tasks.sweep_stuck_answers",
                                "schedule": settings.JUDGE_SWEEP_INTERVAL_SECONDS},
        "canary": {"task": "reviewapp.tasks.canary_dispatch", "schedule": settings.CANARY_INTERVAL_SECONDS},
    }


app.conf.beat_schedule = _beat_schedule()


@signals.worker_ready.connect
def _worker_ready(sender, **kwargs):
    from reviewapp.services.liveness import worker_started

    worker_started(hostname=sender.hostname)


@signals.worker_shutdown.connect
def _worker_shutdown(sender, **kwargs):
    from reviewapp.services.liveness import forget_worker

    try:
        forget_worker(hostname=sender.hostname)
    except Exception:  # the database may be what is going away; the row then stays, flagged stale
        pass
