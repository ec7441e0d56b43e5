"""The queue's, /answers/' and the review page's forms."""

from __future__ import annotations

from datetime import date

from django import forms

from reviewapp.models import VERDICT_CHOICES, Answer, AnswerComment
from reviewapp.review.service import assignable_reviewers


# The last day a filter may name: its end, the next midnight, must still be a date.
LAST_FILTER_DAY = date.max.replace(day=30)


class QueueFilterForm(forms.Form):
    """/queue/'s and /answers/'s filters. Unknown labels and categories are ignored, as links from
    older pages may carry them; text, dates and the answer states are checked."""

    client = forms.CharField(max_length=100, required=False)
    status = forms.ChoiceField(choices=[("", "Any status")] + Answer.Status.choices, required=False)
    verdict = forms.ChoiceField(choices=[("", "Any verdict")] + VERDICT_CHOICES, required=False)
    review_status = forms.ChoiceField(
        choices=[("", "Any routing")] + Answer.ReviewStatus.choices, required=False
    )
    profile = forms.CharField(max_length=100, required=False)
    q = forms.CharField(max_length=200, required=False)
    since = forms.DateField(required=False)
    until = forms.DateField(required=False)

    def clean(self):
        data = super().clean()
        for name in ("since", "until"):
            if data.get(name) and data[name] > LAST_FILTER_DAY:
                self.add_error(name, f"must be no later than {LAST_FILTER_DAY.isoformat()}")
        return data


class AssignForm(forms.Form):
    """A lead assigns one answer (`answer`), or the /answers/ filters' waiting answers, to a
    reviewer."""

    reviewer = forms.ModelChoiceField(queryset=None, to_field_name="username")
    answer = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reviewer"].queryset = assignable_reviewers()


class CommentForm(forms.Form):
    """A comment on an answer's thread: some text, at most AnswerComment.BODY_MAX characters, no
    NUL."""

    body = forms.CharField(
        max_length=AnswerComment.BODY_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Comment",
        error_messages={
            "required": "Write something first: an empty comment is not saved.",
            "max_length": (
                "A comment holds at most %(limit_value)d characters; this one has %(show_value)d."
            ),
        },
    )
