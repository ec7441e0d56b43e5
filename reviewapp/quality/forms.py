"""The gold fields of the policy form, kept apart from the routing fields (reviewapp.policy)."""

from __future__ import annotations

from django import forms

GOLD_FIELDS = ("gold_rate", "gold_pause_below", "gold_min_claims")


class GoldPolicyForm(forms.Form):
    use_required_attribute = False

    # Not required: a form posted without them (an older page) keeps the values in force.
    gold_rate = forms.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        label="Gold rate",
        help_text="Share of “next item”s that hand a reviewer a gold answer they have not seen "
        "(0.05 = 5%; 0: none).",
    )
    gold_pause_below = forms.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        label="Pause reviewers below gold accuracy",
        help_text="A reviewer whose accuracy on their latest gold claims falls below this is "
        "paused from the "
        "live queue (0.8 = 80%).",
    )
    gold_min_claims = forms.IntegerField(
        min_value=1,
        max_value=10_000,
        required=False,
        label="Gold claims before pausing",
        help_text="How many gold claims a reviewer's window holds before it can pause them.",
    )

    def values(self, current) -> dict:
        """The cleaned values, each missing one taken from the policy in force."""
        return {
            f: getattr(current, f) if self.cleaned_data.get(f) is None else self.cleaned_data[f]
            for f in GOLD_FIELDS
        }
