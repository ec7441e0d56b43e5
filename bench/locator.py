"""Benchmark of the evidence locator (not a test): quotes located per second on one core.

Synthetic transit-fare policy text from a fixed seed. For each passage size (2k, 5k, 10k, 20k
characters) a request holds --passages passages of that size; quotes of four kinds are located
with judges.locate.locate, the judge naming the right passage:

* exact:      a verbatim stretch of a passage (40-160 characters, on word boundaries);
* normalized: the same with case, whitespace, quotation-mark, dash and edge-punctuation edits;
* fuzzy:      the same with one or two typos (letters only, so numbers stay the same);
* not_found:  a sentence about something else, in no passage (the slowest: every passage is
              searched at every level, fuzzy included).

Figures are the median of several runs, with each passage's normalized form already cached (as
it is after the first quote of a request); "prep" is the one-off cost of normalizing one passage
(cache cleared). The "matched as" line shows that each kind of quote got the match it stands for.

Run from the repo root: `python bench/locator.py [--quick] [--passages N] [--quotes N]`.
Prints figures, exits 0.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import record  # noqa: E402
from judges import locate as locator  # noqa: E402
from judges.types import Passage  # noqa: E402

SEED = 20260816
SIZES = (2_000, 5_000, 10_000, 20_000)
# toward 10x the largest size (issue 8, item 7): a passage holds at most 100k; full run only
LARGE = (99_000,)
COMMAND = "python bench/locator.py"
KINDS = ("exact", "normalized", "fuzzy", "not_found")

RIDERS = ["adult", "senior", "student", "child", "veteran", "disabled", "youth", "commuter"]
PRODUCTS = [
    "single-ride ticket",
    "day pass",
    "7-day pass",
    "30-day pass",
    "transfer",
    "paratransit trip",
]
DOCUMENTS = ["Senior ID card", "Medicare card", "student ID", "Reduced Fare card", "proof of age"]
PLACES = ["customer service center", "ticket vending machine", "station agent", "mobile app"]
MONTHS = ["January", "March", "June", "September", "November"]

SENTENCES = [
    "The {product} fare for {rider} riders is ${price}, according to Sec. {section} of the tariff.",
    "Riders aged {age} and older qualify for the reduced fare with a valid {document}.",
    "A {rider} {product} can be bought at any {place}; it is valid for {minutes} minutes.",
    "Applications for the {rider} discount program must be submitted by {month} {day}, {year}.",
    (
        "Eligible {rider} riders pay {percent}% of the regular {product} fare \u2014 e.g. ${price}"
        " per trip."
    ),
    "Up to {count} children under {age} may ride free with each paying {rider} rider.",
    "The {document} must be shown to the operator on request (a copy is not accepted).",
    "Lost {document}s are replaced at the {place} for a fee of ${price}.",
    (
        "The agency calls the {product} \u201cthe best value for {rider} riders\u201d in its {year}"
        " guide."
    ),
]
# Sentences about other things: quotes a judge invented.
UNRELATED = [
    "The museum opens its new sculpture garden to members on the first weekend of {month}.",
    "Our quarterly earnings rose {percent} percent on strong demand for cloud storage products.",
    "The recipe calls for {count} cups of flour, a pinch of salt and warm water.",
    "Volunteers planted {count} hundred oak saplings along the river trail last {month}.",
]


def fill(template: str, rng: random.Random) -> str:
    return template.format(
        product=rng.choice(PRODUCTS), rider=rng.choice(RIDERS), document=rng.choice(DOCUMENTS),
        place=rng.choice(PLACES), month=rng.choice(MONTHS),
        price=f"{rng.randint(1, 120)}.{rng.choice(['00', '25', '50', '75'])}",
        section=f"{rng.randint(1, 9)}.{rng.randint(1, 9)}", age=rng.choice([5, 6, 12, 18, 62, 65]),
        minutes=rng.choice([90, 120, 180]), day=rng.randint(1, 28), year=rng.choice([2025, 2026]),
        percent=rng.choice([25, 50, 75]), count=rng.randint(2, 9),
    )


def passage_text(rng: random.Random, chars: int) -> str:
    parts: list[str] = []
    length = 0
    while length < chars:
        sentence = fill(rng.choice(SENTENCES), rng) + rng.choice([" ", " ", " ", "\n\n"])
        parts.append(sentence)
        length += len(sentence)
    return "".join(parts)[:chars].rstrip() + "."


def verbatim(rng: random.Random, text: str) -> str:
    """A stretch of 40-160 characters starting and ending at word boundaries."""
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    start = rng.choice(spaces[:-40]) + 1
    ends = [i for i in spaces if 40 <= i - start <= 160]
    return text[start:rng.choice(ends)] if ends else text[start:start + 80]


def normalized_edit(rng: random.Random, quote: str) -> str:
    edited = quote.replace("\u201c", '"').replace("\u201d", '"').replace("\u2014", "-")
    edited = rng.choice([edited.lower(), edited.upper(), edited.title(), edited])
    words = edited.split(" ")
    index = rng.randrange(1, len(words))
    words[index] = rng.choice(["\n", "  ", "\t"]) + words[index]
    return '"' + " ".join(words) + rng.choice(['."', ',"', '"'])


def typo_edit(rng: random.Random, quote: str) -> str:
    chars = list(quote)
    letters = [i for i, ch in enumerate(chars) if ch.isalpha()]
    for index in rng.sample(letters, min(len(letters), rng.choice([1, 2]))):
        chars[index] = rng.choice([c for c in "etaoinshrdlu" if c != chars[index].lower()])
    return "".join(chars)


def workload(rng: random.Random, size: int, passages: int, quotes: int):
    texts = [passage_text(rng, size) for _ in range(passages)]
    request = [Passage(id=f"P{n}", text=text) for n, text in enumerate(texts, start=1)]
    by_kind: dict[str, list[tuple[str, str]]] = {kind: [] for kind in KINDS}
    for _ in range(quotes):
        target = rng.choice(request)
        quote = verbatim(rng, target.text)
        by_kind["exact"].append((quote, target.id))
        by_kind["normalized"].append((normalized_edit(rng, quote), target.id))
        by_kind["fuzzy"].append((typo_edit(rng, quote), target.id))
        by_kind["not_found"].append((fill(rng.choice(UNRELATED), rng), target.id))
    return request, by_kind


def run(request, quotes) -> tuple[float, Counter]:
    matches: Counter = Counter()
    start = time.perf_counter()
    for quote, pid in quotes:
        matches[locator.locate(quote, request, pid).match] += 1
    return time.perf_counter() - start, matches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer quotes and runs (a few seconds)"
    )
    parser.add_argument("--passages", type=int, default=5, help="passages per request (default 5)")
    parser.add_argument("--quotes", type=int, default=None, help="quotes of each kind per size")
    parser.add_argument(
        "--runs", type=int, default=None, help="runs per figure; the median is shown"
    )
    args = parser.parse_args(argv)
    quotes = args.quotes or (40 if args.quick else 200)
    runs = args.runs or (3 if args.quick else 7)

    plural = "s" if args.passages != 1 else ""
    print(
        f"judges.locate: quotes/s on one core, {args.passages} passage{plural} per request, judge "
        f"names the right passage; median of {runs} runs of {quotes} quotes per kind (FUZZY_FLOOR "
        f"{locator.FUZZY_FLOOR:g}, MIN_FUZZY_CHARS {locator.MIN_FUZZY_CHARS})"
    )
    header = (
        f"{'passage chars':>13} | "
        + " | ".join(f"{kind:>10}" for kind in KINDS)
        + " | prep ms/passage"
    )
    print(header)
    print("-" * len(header))
    rng = random.Random(SEED)
    seen: dict[str, Counter] = {kind: Counter() for kind in KINDS}
    for size in SIZES + (() if args.quick else LARGE):
        request, by_kind = workload(rng, size, args.passages, quotes)
        prep = []
        for passage in request:
            locator.normalized.cache_clear()
            started = time.perf_counter()
            locator.normalized(passage.text)
            prep.append(time.perf_counter() - started)
        for passage in request:
            locator.normalized(passage.text)  # warm, as after a request's first quote
        rates = []
        for kind in KINDS:
            timings = []
            for _ in range(runs):
                elapsed, matches = run(request, by_kind[kind])
                timings.append(elapsed)
            seen[kind] += matches
            rates.append(len(by_kind[kind]) / statistics.median(timings))
        print(f"{size:>13,} | " + " | ".join(f"{rate:>10,.0f}" for rate in rates)
              + f" | {statistics.median(prep) * 1000:>6.2f}", flush=True)
        for kind, rate in zip(KINDS, rates):
            record(
                f"locator {kind} quotes/s ({size:,} chars x {args.passages} passages)",
                rate,
                "quotes/s",
                None,
                command=COMMAND,
                runs=runs,
                quotes=len(by_kind[kind]),
            )
        record(
            f"locator prep ms/passage ({size:,} chars)",
            statistics.median(prep) * 1000,
            "ms",
            None,
            higher_is_better=False,
            command=COMMAND,
        )
    print("matched as: " + "; ".join(
        f"{kind} quotes -> " + ", ".join(f"{match} {count / sum(counter.values()):.0%}"
                                         for match, count in counter.most_common())
        for kind, counter in seen.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
