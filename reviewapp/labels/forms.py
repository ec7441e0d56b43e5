"""The worked-examples page's forms."""

from __future__ import annotations

from django import forms

from reviewapp.policy.forms import profile_choices


class ExampleSetForm(forms.Form):
    """The picked claims come as `claim` checkboxes and their reasons as `reason-<claim id>`
    fields."""

    profile = forms.ChoiceField(
        choices=lambda: profile_choices()[1:],
        label="For profile",
        help_text="The set is for this profile's version (latest unless named).",
    )
    note = forms.CharField(
        max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


class ProfileFilterForm(forms.Form):
    profile = forms.CharField(max_length=150, required=False)
