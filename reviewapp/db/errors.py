"""Which database errors are transient, to be retried with backoff: the database is unreachable,
restarting or failing over (OperationalError, InterfaceError), or read-only for a while (a primary
demoted, a standby not yet promoted: SQLSTATE 25006, which Django raises as InternalError). Any
other database error is a bug or bad data, and retrying it would only repeat it."""

from __future__ import annotations

from django.db import DatabaseError, InterfaceError, OperationalError

READ_ONLY_SQL_TRANSACTION = "25006"


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    return (
        isinstance(exc, DatabaseError)
        and getattr(exc.__cause__, "sqlstate", None) == READ_ONLY_SQL_TRANSACTION
    )
