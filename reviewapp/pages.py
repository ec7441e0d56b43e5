"""What every page view shares: the 400 page, and request values read the same way everywhere."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from reviewapp.forms import (
    NoteForm,
    form_errors,
)


class BadRequest(Exception):
    """A value from the request a form refused; the page answers 400 with its message."""


def bad_request(request: HttpRequest, error: str, *, back: str = "") -> HttpResponse:
    return render(request, "reviewapp/bad_request.html", {"error": error, "back": back}, status=400)


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
