import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

app = Celery("reviewapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["reviewapp"])


@signals.worker_init.connect
def _load_judges(**kwargs):
    """Import the judge backends and profiles before the first task, not inside it: importing
    `openai` builds hundreds of pydantic models (seconds of CPU), and on a thread pool every
    thread's first task would wait on that import while holding its answer's claim."""
    from judges.backends import openai_chat  # noqa: F401
    from judges.checks import apply_checks  # noqa: F401
    from judges.offline import judge_offline  # noqa: F401
    from judges.profiles import list_profiles

    list_profiles()
