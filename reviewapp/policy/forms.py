"""The policy page's forms of this folder: risk-based audit sampling and the miss-rate target,
posted with the policy form (same <form>, own fields and partial)."""

from __future__ import annotations

from django import forms


class AuditSamplingForm(forms.Form):
    use_required_attribute = False  # the live preview posts on every change (see PolicyForm)

    # Not required: a form posted without them (an older page) keeps one audit rate for all.
    audit_near_rate = forms.FloatField(
        min_value=0, max_value=1, initial=0.0, required=False, label="Audit rate near the threshold",
        help_text="Share of passed answers audited when they score just above the threshold or hold a "
                  "claim of low confidence (0 = the audit sample rate for all).")
    audit_near_margin = forms.FloatField(
        min_value=0, max_value=1, initial=0.05, required=False, label="Near means within",
        help_text="of the threshold, above it (0.05: a 0.95 threshold audits 0.95-1.00 at the near rate).")
    audit_confidence_below = forms.FloatField(
        min_value=0, max_value=1, initial=0.0, required=False, label="or a claim of confidence below",
        help_text="0 = confidence does not raise the audit rate.")
    miss_rate_target = forms.FloatField(
        min_value=0, max_value=1, required=False, label="Miss-rate target",
        help_text="At most this share of passed answers may hold a claim a human flagged (0.02 = 2%); "
                  "above it the pages say so and alert.miss_rate fires. Empty: no target.")

    DEFAULTS = {"audit_near_rate": 0.0, "audit_near_margin": 0.05, "audit_confidence_below": 0.0}

    def clean(self):
        data = super().clean()
        for field, default in self.DEFAULTS.items():
            if field in data and data[field] is None:
                data[field] = default
        return data
