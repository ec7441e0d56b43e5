#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    from django.core.management import execute_from_command_line

    from reviewapp import embedded

    if sys.argv[1:2] != ["demo"]:
        # With DATABASE_URL unset, a running demo's servers (their ports are chosen at start).
        if urls := embedded.demo_servers_into_environment():
            print(f"Using the running demo's database: {urls['DATABASE_URL']}", file=sys.stderr)
        execute_from_command_line(sys.argv)
        return
    # The demo brings its own Postgres and Valkey when DATABASE_URL / CELERY_BROKER_URL are unset,
    # as children of this process; they must answer before the settings read those variables.
    own_servers = not os.environ.get("DATABASE_URL")
    with embedded.servers_in_environment(keep_in=embedded.DEMO_STATE_DIR) as urls:
        recorded = embedded.demo_servers_write(urls) if own_servers else None
        try:
            execute_from_command_line(sys.argv)
        finally:
            if recorded is not None:
                recorded.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
