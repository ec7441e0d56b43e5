#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    from django.core.management import execute_from_command_line

    if sys.argv[1:2] != ["demo"]:
        execute_from_command_line(sys.argv)
        return
    # The demo brings its own Postgres and Valkey when DATABASE_URL / CELERY_BROKER_URL are unset,
    # as children of this process; they must answer before the settings read those variables.
    from reviewapp.embedded import DEMO_STATE_DIR, servers_in_environment

    with servers_in_environment(keep_in=DEMO_STATE_DIR):
        execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
