"""A process's own peak resident set size, for measuring a management command in a child process.

Not wait4()'s ru_maxrss: that also counts the parent's pages the child carried between fork and
exec, i.e. the size of whatever started it (a test runner, a bench), not of the command.
"""

from __future__ import annotations

import sys

# `python -c PEAK_OF_COMMAND <command> <args...>` runs a management command and, as it ends, writes
# the process's own peak RSS (the VmHWM line of /proc/self/status) as the last line of stderr.
PEAK_OF_COMMAND = """
import sys
from django.core.management import execute_from_command_line
try:
    execute_from_command_line(["manage.py", *sys.argv[1:]])
finally:
    with open("/proc/self/status") as status:
        sys.stderr.write("\\n" + next(line for line in status if line.startswith("VmHWM:")))
"""


def command_line(*args: str) -> list[str]:
    return [sys.executable, "-c", PEAK_OF_COMMAND, *args]


def peak_kb(stderr: str) -> int:
    """The peak RSS in KiB that PEAK_OF_COMMAND wrote at the end of `stderr`."""
    return int(stderr.rsplit("VmHWM:", 1)[1].split()[0])
