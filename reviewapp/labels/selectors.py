"""The worked-examples page's reads: the claims reviewers overturned."""

from __future__ import annotations

from django.db.models import F, QuerySet

from reviewapp.models import Claim


EXAMPLE_CANDIDATES_SHOWN = 200


def overturned_claims(*, profile: str = "") -> QuerySet[Claim]:
    """Claims whose current human label differs from the judge's (claims reviewers added are not the
    judge's mistakes), newest decision first; `profile` keeps those of runs of that profile name."""
    qs = (
        Claim.objects.filter(origin=Claim.Origin.JUDGE)
        .exclude(human_label="")
        .exclude(human_label=F("label"))
        .select_related("run", "answer", "decided_by")
    )
    if profile:
        qs = qs.filter(run__profile=profile)
    return qs.order_by("-decided_at", "-id")


def overturned_profiles() -> list[str]:
    """The profile names of the runs whose claims were overturned, for the page's filter."""
    return sorted(
        set(overturned_claims().order_by().values_list("run__profile", flat=True).distinct())
    )
