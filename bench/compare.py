"""Run the quick benchmarks for an older commit and for this checkout interleaved, and print each
figure's ratio, so a change that slows a figure shows in the session that made it.

    make bench-compare REF=<commit> [ONLY=export_labels,answer_cost] [ROUNDS=1]
    python bench/compare.py REF [--only NAME[,NAME]] [--rounds N] [--plan quick|full] [--json FILE]

REF is checked out into a temporary worktree (removed afterwards) and both trees run the same
steps (bench/steps.py, this checkout's list and arguments) with this venv, in the order A B B A
per round (A = REF, B = HEAD): a drift of the shared box's speed during the run falls on both
alike. Each run writes its own results file; the table shows each side's median and HEAD / REF.
For a figure where lower is better a ratio above 1 is a slowdown; "worse" marks a change of more
than the noise allowance (--noise, default 15%: figures on a shared 2-core box move ±20% within
an hour; the same commit against itself marked a third of the quick locator's figures so).
A change whose runs overlap the other side's is marked with "?". The load average and
`reference_loop_ms` of each run are printed with the table. Exits 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.steps import PLANS, names, run, select  # noqa: E402


def order(rounds: int) -> list[str]:
    """A B B A for each round."""
    return ["A", "B", "B", "A"] * rounds


def ratios(runs: dict[str, list[list[dict]]], noise: float) -> list[dict]:
    """One row per figure named in either side: each side's median, HEAD / REF, and the change."""
    by_side = {side: {} for side in runs}
    names: list[str] = []
    for side, results in runs.items():
        for rows in results:
            for row in rows:
                if row["name"] not in names:
                    names.append(row["name"])
                by_side[side].setdefault(row["name"], []).append(row)
    table = []
    for name in names:
        a, b = by_side["A"].get(name, []), by_side["B"].get(name, [])
        sample = (b or a)[0]
        line = {"name": name, "unit": sample.get("unit"), "target": sample.get("target"),
                "direction": sample.get("direction", "higher"),
                "ref": [row["value"] for row in a], "head": [row["value"] for row in b],
                "head_met": None if not b else all(row.get("met") is not False for row in b)}
        ref_median = statistics.median(line["ref"]) if a else None
        head_median = statistics.median(line["head"]) if b else None
        line["ref_median"], line["head_median"] = ref_median, head_median
        line["ratio"] = head_median / ref_median if a and b and ref_median else None
        if line["ratio"] is None:
            line["change"] = "only in HEAD" if b and not a else "only in REF" if a and not b else ""
        else:
            lower_is_better = line["direction"] == "lower"
            line["change"] = _change(line["ref"], line["head"], line["ratio"], lower_is_better,
                                     noise)
        table.append(line)
    return table


def _change(ref: list[float], head: list[float], ratio: float, lower_is_better: bool,
            noise: float) -> str:
    """"worse" / "better" when the medians differ by more than `noise` and no run of one side
    overlaps the other's; "worse?" / "better?" when only the medians differ that much."""
    if abs(ratio - 1) <= noise:
        return ""
    improved = (ratio < 1) == lower_is_better
    if lower_is_better:
        apart = max(head) < min(ref) if improved else min(head) > max(ref)
    else:
        apart = min(head) > max(ref) if improved else max(head) < min(ref)
    return ("better" if improved else "worse") + ("" if apart else "?")


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"
    return str(value)


def print_table(table: list[dict], ref: str) -> None:
    print(f"\n| figure | unit | target | REF {ref} | HEAD | HEAD / REF | change | HEAD meets it |")
    print("|" + " --- |" * 8)
    for line in table:
        target, met = "", ""
        if line["target"] is not None:
            target = ("≤ " if line["direction"] == "lower" else "≥ ") + cell(line["target"])
            met = {True: "yes", False: "**no**", None: ""}[line["head_met"]]
        change = f"**{line['change']}**" if line["change"] == "worse" else line["change"]
        ratio = "" if line["ratio"] is None else f"{line['ratio']:.2f}"
        print(f"| {line['name']} | {line['unit']} | {target} | {cell(line['ref_median'])} "
              f"| {cell(line['head_median'])} | {ratio} | {change} | {met} |")
    worse = [line["name"] for line in table if line["change"] == "worse"]
    print(f"\n{len(table)} figures; worse beyond the noise, every run: {len(worse)}"
          + (f" ({', '.join(worse)})" if worse else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", help="a commit, branch or tag")
    parser.add_argument("--only", type=names)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--plan", choices=sorted(PLANS), default="quick")
    parser.add_argument("--noise", type=float, default=0.15)
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args()
    steps = select(PLANS[args.plan], args.only)
    commit = subprocess.run(["git", "rev-parse", "--short", args.ref], cwd=ROOT,
                            capture_output=True, text=True)
    if commit.returncode:
        sys.exit(f"not a commit: {args.ref}")
    ref = commit.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch:
        tree = Path(scratch) / f"ref-{ref}"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), ref], cwd=ROOT,
                       check=True)
        runs: dict[str, list[list[dict]]] = {"A": [], "B": []}
        log = []
        try:
            for index, side in enumerate(order(args.rounds)):
                results = Path(scratch) / f"{index}-{side}.json"
                load = os.getloadavg()[0]
                started = time.monotonic()
                failed = run(steps, tree=tree if side == "A" else ROOT, results=results)
                rows = json.loads(results.read_text()) if results.exists() else []
                runs[side].append(rows)
                loops = [row["machine"]["reference_loop_ms"] for row in rows
                         if row.get("machine", {}).get("reference_loop_ms")]
                loop = cell(statistics.median(loops)) if loops else "?"
                log.append(f"run {index + 1} {side} ({'REF ' + ref if side == 'A' else 'HEAD'}): "
                           f"load {load:.1f} at start, {time.monotonic() - started:.0f} s, "
                           f"reference loop {loop} ms"
                           + (f", failed: {', '.join(failed)}" if failed else ""))
                print(log[-1], flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
    table = ratios(runs, args.noise)
    print("\n" + "\n".join(log))
    print_table(table, ref)
    if args.json:
        summary = {"ref": ref, "runs": log, "figures": table}
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
