"""The policy and jobs pages' forms (every value a page takes from a request is read through a
form, so bad input is a 400 with its message, never a 500). AuditSamplingForm posts with the policy
form (same <form>, own fields and partial)."""

from __future__ import annotations

from django import forms
from django.conf import settings

import judges
from judges.profiles import list_profiles
from judges.types import CATEGORIES, LABELS
from reviewapp.labels.examples import example_set_problem
from reviewapp.models import ExampleSet, MultiReviewScope


def profile_choices() -> list[tuple[str, str]]:
    choices = [("", f"(the JUDGE_PROFILE setting: {settings.JUDGE_PROFILE})")]
    for name, versions in list_profiles():
        choices.append((name, f"{name} (latest, {versions[-1]})"))
        choices.extend((f"{name}@{v}", f"{name}@{v}") for v in versions)
    return choices


def judge_choice_problems(*, backend: str, profile: str, model: str) -> dict[str, str]:
    """Why a judge configuration would run other than it reads, or not at all ({} when it runs as
    chosen), by the field to correct: `backend` is the one in force, `profile` and `model` as chosen
    (empty: the default). The offline judge reads neither; the openai one needs an endpoint."""
    problems = {}
    if backend == "offline":
        if profile:
            offline = judges.identify(judges.JudgeConfig(backend="offline"))
            problems["profile"] = (
                "The offline backend judges by its own rules"
                f" ({offline.profile}@{offline.prompt_version}) and reads no profile: leave it"
                " empty, or choose the openai backend."
            )
        if model:
            problems["model"] = (
                "The offline backend calls no model: leave it empty, or choose the openai backend."
            )
    elif backend == "openai" and not settings.OPENAI_BASE_URL:
        problems["backend"] = (
            "The openai backend needs an endpoint, and OPENAI_BASE_URL is not set: "
            "every run would fail. Set it, or choose the offline backend."
        )
    return problems


class PolicyForm(forms.Form):
    # The live preview posts this form on every change, note or not; the browser's own
    # "required" check would block it, so the server alone enforces the note (on save).
    use_required_attribute = False

    score_threshold = forms.FloatField(
        min_value=0, max_value=1, help_text="Answers scoring below go to review."
    )
    blocking_labels = forms.MultipleChoiceField(
        choices=[(label, label) for label in LABELS if label != "SUPPORTED"],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Any claim with one of these labels sends the answer to review.",
    )
    critical_categories = forms.MultipleChoiceField(
        choices=[(c, c) for c in CATEGORIES], required=False, widget=forms.CheckboxSelectMultiple)
    critical_single_claim_blocks = forms.BooleanField(
        required=False, label="One flagged claim in a critical category is enough")
    audit_sample_rate = forms.FloatField(
        min_value=0,
        max_value=1,
        help_text="Share of auto-passed answers sent to review anyway (0.05 = 5%).",
    )
    lease_seconds = forms.IntegerField(min_value=30, max_value=86_400)
    # Not required: a form posted without them (an older page) keeps one review, in every lane.
    reviewers_per_answer = forms.IntegerField(
        min_value=1,
        max_value=3,
        initial=1,
        required=False,
        help_text=(
            "Different reviewers who review each answer in the scope below (1: one review; 2 or 3:"
            " double review)."
        ),
    )
    multi_review_scope = forms.ChoiceField(
        choices=MultiReviewScope.choices,
        initial=MultiReviewScope.ALL,
        required=False,
        label="Reviewers per answer apply to",
    )
    multi_review_share = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=1.0,
        required=False,
        help_text="Of those answers, the share that gets them (1 = all; 0.2 = a random fifth).",
    )
    supported_confidence_floor = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.0,
        required=False,
        label="Review SUPPORTED claims below confidence",
        help_text=(
            "A SUPPORTED claim the judge is less sure of (its quote does not say it word for word)"
            " sends the answer to review (0 = never; 0.6 = below 60%)."
        ),
    )
    blind = forms.BooleanField(
        required=False,
        initial=True,
        label="Blind review",
        help_text=(
            "Each reviewer sees the judge's labels but not the other reviewers' decisions until"
            " they finish."
        ),
    )
    judge_profile = forms.ChoiceField(
        choices=profile_choices,
        required=False,
        help_text="For the openai backend; the offline judge reads none.",
    )
    judge_backend = forms.ChoiceField(
        choices=lambda: [
            ("", f"(the JUDGE_BACKEND setting: {settings.JUDGE_BACKEND})"),
            ("offline", "offline"),
            ("openai", "openai"),
        ],
        required=False,
    )
    judge_model = forms.CharField(
        max_length=200,
        required=False,
        help_text="For the openai backend; empty: the JUDGE_MODEL setting.",
    )
    escalation_profile = forms.ChoiceField(
        choices=profile_choices,
        required=False,
        label="Escalate to profile",
        help_text="A second judge for flagged or borderline answers, before a human.",
    )
    escalation_backend = forms.ChoiceField(
        choices=[
            ("", "(no escalation unless a profile is set)"),
            ("offline", "offline"),
            ("openai", "openai"),
        ],
        required=False,
    )
    escalation_model = forms.CharField(
        max_length=200, required=False, help_text="e.g. a stronger model"
    )
    escalation_margin = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.05,
        help_text="Also escalate when the score is this close to the threshold.",
    )
    example_set = forms.ModelChoiceField(
        queryset=ExampleSet.objects.all(), required=False, label="Worked examples",
        empty_label="(none: the profile's own prompt)",
        help_text="A set made on the Examples page, for the judge profile above (and its version).")
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=2000,
                           help_text="Why this change? Required; kept with the version.")

    def __init__(self, *args, preview: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if preview:
            self.fields["note"].required = False

    def clean(self):
        data = super().clean()
        for field, default in (
            ("reviewers_per_answer", 1),
            ("multi_review_scope", MultiReviewScope.ALL),
            ("multi_review_share", 1.0),
            ("supported_confidence_floor", 0.0),
        ):
            if field in data and data[field] in (None, ""):
                data[field] = default
        if (data.get("reviewers_per_answer") or 1) > 1 and data.get("multi_review_share") == 0:
            self.add_error(
                "multi_review_share",
                "With a share of 0 no answer gets several reviewers: "
                "raise it, or set reviewers per answer to 1.",
            )
        if data.get("example_set") and "judge_profile" in data:
            problem = example_set_problem(
                data["example_set"],
                profile=data["judge_profile"] or settings.JUDGE_PROFILE,
                backend=data.get("judge_backend") or settings.JUDGE_BACKEND,
            )
            if problem:
                self.add_error("example_set", problem)
        backend = data.get("judge_backend") or settings.JUDGE_BACKEND
        escalates = bool(data.get("escalation_backend") or data.get("escalation_profile"))
        self._add_judge_problems(backend, prefix="judge")
        if escalates:
            self._add_judge_problems(data.get("escalation_backend") or backend, prefix="escalation")
        return data

    def _add_judge_problems(self, backend: str, *, prefix: str) -> None:
        data = self.cleaned_data
        problems = judge_choice_problems(
            backend=backend,
            profile=data.get(f"{prefix}_profile") or "",
            model=data.get(f"{prefix}_model") or "",
        )
        for field, problem in problems.items():
            # The setting's backend is in force when the field is empty: the message goes beside it
            # anyway.
            self.add_error(f"{prefix}_{field}", problem)


class RejudgeForm(forms.Form):
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    review_status = forms.ChoiceField(
        required=False,
        choices=[
            ("", "any"),
            ("in_review", "waiting for review"),
            ("auto_passed", "auto-passed"),
            ("adjudicated", "adjudicated"),
        ],
    )
    limit = forms.IntegerField(min_value=1, max_value=10_000, initial=500)
    profile = forms.ChoiceField(
        choices=lambda: [("", "(none: the offline judge's own rules)")] + profile_choices()[1:],
        required=False,
    )
    backend = forms.ChoiceField(choices=[("openai", "openai"), ("offline", "offline")])
    model = forms.CharField(
        max_length=200, required=False, help_text="openai only; empty: the JUDGE_MODEL setting."
    )
    example_set = forms.ModelChoiceField(
        queryset=ExampleSet.objects.all(),
        required=False,
        label="Worked examples",
        empty_label="(none)",
    )
    include_golden = forms.BooleanField(
        required=False,
        label="Include golden-set answers",
        help_text="Imported for evaluation; left out unless ticked.",
    )

    def clean(self):
        data = super().clean()
        backend, profile = data.get("backend"), data.get("profile")
        if not backend or profile is None:
            return data  # the field's own error says what is wrong
        # Read before any add_error: it drops the field from cleaned_data.
        problems = judge_choice_problems(
            backend=backend, profile=profile, model=data.get("model", "")
        )
        if backend == "openai" and not profile:
            problems["profile"] = "The openai backend judges with a profile: choose one."
        if data.get("example_set"):
            problems["example_set"] = example_set_problem(
                data["example_set"], profile=profile, backend=backend
            )
        for field, problem in problems.items():
            if problem:
                self.add_error(field, problem)
        return data


class AuditSamplingForm(forms.Form):
    use_required_attribute = False  # the live preview posts on every change (see PolicyForm)

    # Not required: a form posted without them (an older page) keeps one audit rate for all.
    audit_near_rate = forms.FloatField(
        min_value=0, max_value=1, initial=0.0, required=False,
        label="Audit rate near the threshold",
        help_text="Share of passed answers audited when they score just above the threshold or "
                  "hold a claim of low confidence (0 = the audit sample rate for all).")
    audit_near_margin = forms.FloatField(
        min_value=0, max_value=1, initial=0.05, required=False, label="Near means within",
        help_text="of the threshold, above it (0.05: a 0.95 threshold audits 0.95-1.00 at the "
                  "near rate).")
    audit_confidence_below = forms.FloatField(
        min_value=0, max_value=1, initial=0.0, required=False,
        label="or a claim of confidence below",
        help_text="0 = confidence does not raise the audit rate.")
    miss_rate_target = forms.FloatField(
        min_value=0, max_value=1, required=False, label="Miss-rate target",
        help_text="At most this share of passed answers may hold a claim a human flagged "
                  "(0.02 = 2%); above it the pages say so and alert.miss_rate fires. Empty: no "
                  "target.")

    DEFAULTS = {"audit_near_rate": 0.0, "audit_near_margin": 0.05, "audit_confidence_below": 0.0}

    def clean(self):
        data = super().clean()
        for field, default in self.DEFAULTS.items():
            if field in data and data[field] is None:
                data[field] = default
        return data


class CatchForm(forms.Form):
    """/policy/?catch=90: the catch (a whole percentage) to choose the threshold for."""

    catch = forms.IntegerField(min_value=1, max_value=100, required=False)


class GuidelinesForm(forms.Form):
    """The reviewers' annotation guidelines (markdown): saved as a new policy version."""

    guidelines = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12}),
        required=False,
        max_length=20_000,
        label="Annotation guidelines",
        help_text=(
            "Markdown (headings, lists, emphasis, links; raw HTML shows as text, an image as a"
            " link). Reviewers read them beside every answer."
        ),
    )
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=2000,
        label="Why this change",
        help_text="Required; kept with the version.",
    )
