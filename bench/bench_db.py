"""Create or drop the benchmarks' own Postgres database, the one DATABASE_URL names.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/bench_db.py
    create|drop

`make bench` creates it before the scale benchmarks and drops it after, even when one fails. Only a
database whose name contains "bench" is touched, so a mistyped DATABASE_URL cannot drop real data.
"""

from __future__ import annotations

import os
import sys

import dj_database_url
import psycopg


def main(action: str) -> int:
    config = dj_database_url.parse(os.environ["DATABASE_URL"])
    name = config["NAME"]
    if "bench" not in name or not config["ENGINE"].endswith("postgresql"):
        print(
            f"refusing to {action} {name!r}: a benchmark database is on Postgres and has 'bench' in"
            " its name"
        )
        return 2
    with psycopg.connect(
        host=config["HOST"] or None,
        port=config["PORT"] or None,
        user=config["USER"] or None,
        password=config["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    ) as admin:
        exists = (
            admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            is not None
        )
        if action == "create" and not exists:
            admin.execute(f'CREATE DATABASE "{name}"')
        elif action == "drop" and exists:
            # a bench's leftover connection must not block it
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    print(f"{action}: {name}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("create", "drop"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
