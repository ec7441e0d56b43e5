"""What every page view shares: the 400 page, and request values read the same way everywhere."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class BadRequest(Exception):
    """A value from the request a form refused; the page answers 400 with its message."""


def bad_request(request: HttpRequest, error: str, *, back: str = "") -> HttpResponse:
    return render(request, "reviewapp/bad_request.html", {"error": error, "back": back}, status=400)


NOTE_MAX_CHARS = 2000


class NoteForm(forms.Form):
    """A reviewer's or admin's note: any text but a NUL, at most NOTE_MAX_CHARS (refused, not
    cut)."""

    note = forms.CharField(required=False, strip=False, max_length=NOTE_MAX_CHARS)


def form_errors(form: forms.Form) -> str:
    return "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())


def posted_note(request: HttpRequest) -> str:
    # A browser counts a line break as one character against maxlength and sends two (CRLF).
    form = NoteForm({"note": request.POST.get("note", "").replace("\r\n", "\n")})
    if not form.is_valid():
        raise BadRequest(f"Note not saved: {form_errors(form)}")
    return form.cleaned_data["note"]


def int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None
