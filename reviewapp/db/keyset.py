"""Keyset pages (no OFFSET: deep pages cost what the first does), for the pages and the API."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable
from uuid import UUID

from django.db import models
from django.db.models import Q, QuerySet


@dataclass(frozen=True)
class PageOrder:
    """An order to page through by keyset (no OFFSET: deep pages cost what the first does):
    (field, descending, how a cursor's value parses) per key, the primary key last."""

    keys: tuple[tuple[str, bool, Callable[[str], Any]], ...]

    @classmethod
    def of(cls, model: type[models.Model], order_by: Sequence[str]) -> PageOrder:
        """The keyset form of `model`'s `order_by` ("-field" names, a unique field last), each
        cursor value parsed by its field's type."""
        keys = []
        for name in order_by:
            field = model._meta.get_field(name.lstrip("-"))
            parse = (datetime.fromisoformat if isinstance(field, models.DateTimeField)
                     else UUID if isinstance(field, models.UUIDField) else int)
            keys.append((name.lstrip("-"), name.startswith("-"), parse))
        return cls(tuple(keys))

    def order_by(self, *, backwards: bool = False) -> list[str]:
        return [
            ("-" if descending != backwards else "") + name for name, descending, _ in self.keys
        ]

    def beyond(self, values: tuple, *, backwards: bool = False) -> Q:
        """Rows after the row with these key values in this order (before it, backwards)."""
        condition, equal = Q(), {}
        for (name, descending, _), value in zip(self.keys, values):
            condition |= Q(
                **equal, **{f"{name}__{'lt' if descending != backwards else 'gt'}": value}
            )
            equal[name] = value
        return condition

    def cursor(self, values: tuple) -> str:
        return "~".join(v.isoformat() if isinstance(v, datetime) else str(v) for v in values)

    def decoded(self, cursor: str) -> tuple | None:
        """The cursor's key values; None for one this page did not hand out (then: the first
        page)."""
        parts = cursor.split("~")
        try:
            return tuple(parse(part) for (_, _, parse), part in zip(self.keys, parts, strict=True))
        except ValueError:
            return None


def keyset_ids(
    qs: QuerySet, order: PageOrder, *, size: int, after: str = "", before: str = ""
) -> tuple[list[int], str, str]:
    """One page of primary keys in `order`: (ids, the previous page's `before` cursor, the next
    page's `after` cursor), each "" when there is no such page."""
    names = [name for name, _, _ in order.keys]
    key = order.decoded(before) if before else None
    if key:
        found = list(
            qs.filter(order.beyond(key, backwards=True))
            .order_by(*order.order_by(backwards=True))
            .values_list(*names)[: size + 1]
        )
        earlier, found = len(found) > size, found[:size][::-1]
        return ([row[-1] for row in found], order.cursor(found[0]) if earlier else "",
                order.cursor(found[-1]) if found else "")
    key = order.decoded(after) if after else None
    if key:
        qs = qs.filter(order.beyond(key))
    found = list(qs.order_by(*order.order_by()).values_list(*names)[: size + 1])
    later, found = len(found) > size, found[:size]
    return ([row[-1] for row in found], order.cursor(found[0]) if key and found else "",
            order.cursor(found[-1]) if later else "")
