"""Worker liveness from canaries: a process that is up but no longer consumes is caught.

A periodic `canary_dispatch` sends one `canary` to every known worker's own queue
(CELERY_WORKER_DIRECT) and one to the judge queue. A worker records itself when
it starts; each canary it *runs* stamps `last_consumed_at`. A worker whose last consumed canary is
older than two intervals, although canaries were sent to it since, is stale: its process may
answer pings, but it is not taking work (e.g. it did not resume consuming after a broker
reconnect, or it is wedged).

Beat (the scheduler) stamps its own heartbeat as it publishes each dispatch. When beat dies no
canaries are sent, so none are consumed: the workers are then not stale (nothing was sent to them
since they last consumed), beat is, and /health/ says to restart beat, not the workers.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from celery.utils.nodenames import worker_direct
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from reviewapp import enqueue
from reviewapp.models import SchedulerHeartbeat, WorkerHeartbeat
from reviewapp.judging.sweeper import stuck_answers

BEAT = "beat"


def worker_started(*, hostname: str) -> None:
    now = timezone.now()
    WorkerHeartbeat.objects.update_or_create(hostname=hostname, defaults={"started_at": now})


def canary_sent(*, hostnames: list[str], at: datetime) -> None:
    WorkerHeartbeat.objects.filter(hostname__in=hostnames).update(last_sent_at=at)


def canary_consumed(*, hostname: str, sent_at: datetime) -> None:
    now = timezone.now()
    updated = WorkerHeartbeat.objects.filter(hostname=hostname).update(
        last_consumed_at=now, consumed=F("consumed") + 1
    )
    if not updated:  # a worker that started before the table existed, or whose row was removed
        WorkerHeartbeat.objects.create(
            hostname=hostname, started_at=None, last_consumed_at=now, consumed=1
        )


def beat_sent() -> None:
    SchedulerHeartbeat.objects.update_or_create(
        name=BEAT, defaults={"last_beat_at": timezone.now()}
    )


def forget_worker(*, hostname: str) -> None:
    """A worker that shut down cleanly is not stale; one that was killed stays listed as stale."""
    WorkerHeartbeat.objects.filter(hostname=hostname).delete()


def worker_status(now: datetime | None = None) -> dict:
    """For /health/ and the policy page: beat's and every worker's last sign of life, stale ones
    flagged, and which process to restart."""
    now = now or timezone.now()
    stale_after = timedelta(seconds=2 * settings.CANARY_INTERVAL_SECONDS)
    beat = _beat_status(now, stale_after)
    workers = [
        _worker(hb, now, stale_after, beat["last_beat_at"])
        for hb in WorkerHeartbeat.objects.order_by("hostname")
    ]
    stale_workers = [w["hostname"] for w in workers if w["stale"]]
    stuck = stuck_answers(now).count()
    return {
        "ok": bool(workers) and not stale_workers and not beat["stale"] and stuck == 0,
        "beat": beat,
        "workers": workers,
        "stale_workers": stale_workers,
        "stuck_answers": stuck,
        "restart": ([BEAT] if beat["stale"] else []) + stale_workers,
        "canary_interval_seconds": settings.CANARY_INTERVAL_SECONDS,
    }


def _beat_status(now: datetime, stale_after: timedelta) -> dict:
    row = SchedulerHeartbeat.objects.filter(name=BEAT).first()
    seen = row.last_beat_at if row else None
    # Never seen: beat has not run since this table existed; stale once a worker has been up that
    # long.
    return {
        "last_beat_at": seen,
        "seconds_since_beat": round((now - seen).total_seconds(), 1) if seen else None,
        "stale": seen is None or now - seen > stale_after,
    }


def _worker(
    hb: WorkerHeartbeat, now: datetime, stale_after: timedelta, beat_at: datetime | None
) -> dict:
    seen = hb.last_consumed_at or hb.started_at
    # Silent for two intervals *although beat sent canaries since*: with beat down, silence is
    # expected.
    stale = seen is None or (now - seen > stale_after and (beat_at is None or beat_at > seen))
    return {
        "hostname": hb.hostname,
        "last_consumed_at": hb.last_consumed_at,
        "last_sent_at": hb.last_sent_at,
        "seconds_since_consumed": round((now - seen).total_seconds(), 1) if seen else None,
        "consumed": hb.consumed,
        "stale": stale,
    }


def canary_dispatch() -> list[str]:
    """Send a canary to every known worker's own queue and one to the judge queue."""
    now = timezone.now()
    # A worker killed long ago (its container is gone) would be flagged forever; forget it after a
    # day.
    day_ago = now - timedelta(days=1)
    WorkerHeartbeat.objects.filter(
        Q(last_consumed_at__lt=day_ago) | Q(last_consumed_at__isnull=True, started_at__lt=day_ago)
    ).delete()
    hostnames = list(WorkerHeartbeat.objects.values_list("hostname", flat=True))
    # a canary nobody took in time is dropped, not piled up
    expires = settings.CANARY_INTERVAL_SECONDS * 2
    for hostname in hostnames:
        enqueue.canary_later(now.isoformat(), queue=worker_direct(hostname), expires=expires)
    enqueue.canary_later(now.isoformat(), expires=expires)
    canary_sent(hostnames=hostnames, at=now)
    return hostnames
