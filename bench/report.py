"""Print bench/results/latest.json as a Markdown table: figure, value, target, met, when, machine.

    python bench/report.py [--file PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import RESULTS  # noqa: E402


def cell(value) -> str:
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"
    return "" if value is None else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=RESULTS)
    args = parser.parse_args()
    try:
        rows = json.loads(args.file.read_text())
    except (OSError, ValueError) as exc:
        print(f"no results in {args.file}: {exc}")
        return 1
    print(f"| figure | value | unit | target | met | measured (UTC) | machine |\n|{' --- |' * 7}")
    for row in rows:  # in the order they were measured
        target = (
            ""
            if row.get("target") is None
            else ("≥ " if row.get("direction") == "higher" else "≤ ") + cell(row["target"])
        )
        met = {True: "yes", False: "**no**", None: ""}[row.get("met")]
        m = row.get("machine", {})
        print(
            f"| {row['name']} | {cell(row['value'])} | {row['unit']} | {target} | {met} |"
            f" {row.get('measured_at', '')} | {m.get('cores')} cores, {m.get('ram_gib')}"
            f" GiB{f', loop {loop} ms' if (loop := m.get('reference_loop_ms')) else ''} |"
        )
    missed = [r["name"] for r in rows if r.get("met") is False]
    print(
        f"\n{len(rows)} figures, {len(missed)} below target"
        + (f": {', '.join(missed)}" if missed else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
