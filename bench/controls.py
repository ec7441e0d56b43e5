"""Meaning-preserving controls (issue 27, item 6): answers built from true sentences of the shared
dev passages (HAGRID passages, FaithBench sources) by a change that keeps them true, judged
against their own record's passages. Each must stay SUPPORTED (every claim SUPPORTED, no
fabrication). Kinds:

* `clause_dropped` -- a parenthesis, a ", which/who ...," clause or a second clause after ";",
  ", and" or ", but" left out;
* `merged` -- two adjacent sentences of a passage joined by ", and";
* `reordered` -- a leading phrase ("In 1990, X ...") moved to the end, or "A and B" exchanged;
* `synonym` -- one word swapped for a synonym from a small fixed list (a test generator, not a
  judge's lexicon);
* `number_format` -- "1,500" <-> "1500", "ten" <-> "10", "$5" <-> "5 dollars";
* `contraction` -- "do not" <-> "don't" and the like;
* `pronoun` -- two adjacent sentences with the same subject, the second's subject a pronoun.

Two judges (bench.oracle.Judges): `offline` (offline judge + checks) and `always` (the openai
backend against a fake LLM that marks every sentence SUPPORTED and quotes the closest passage
sentence, plus the one holding most of the rest of its words with `--quotes 2`, the default; so
the checks alone decide). Target: >= 97% kept per kind. Seeded: every run builds the same cases.

    python bench/controls.py                      # report half, both judges
    python bench/controls.py --limit 20 --examples 3 --no-record
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.checklist import DATA, DATASETS, sources, usable  # noqa: E402
from bench.oracle import Judges, base_explanation, note_group, split_notes, spread  # noqa: E402
from bench.results import record as record_figure  # noqa: E402
from judges.eval import predicted_hallucinated, source_key, split_of  # noqa: E402
from judges.text import split_sentences  # noqa: E402
from judges.types import JudgeRequest  # noqa: E402

KEPT_TARGET = 0.97
KINDS: tuple[str, ...] = (
    "clause_dropped", "merged", "reordered", "synonym", "number_format", "contraction", "pronoun",
)


@dataclass(frozen=True)
class Control:
    kind: str
    source: str  # the passage sentence(s) it was made from
    text: str  # the answer
    before: str  # what changed, as the source has it
    after: str  # ... and as the answer has it


def _case_like(model: str, word: str) -> str:
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _sub(kind: str, sentence: str, start: int, end: int, new: str) -> Control:
    return Control(
        kind, sentence, sentence[:start] + new + sentence[end:], sentence[start:end], new
    )


def _pick(rng: random.Random, items: Sequence):
    return items[rng.randrange(len(items))] if items else None


# --- one sentence
# -----------------------------------------------------------------------------------

_PAREN = re.compile(r" \([^()]{1,80}\)| -LRB- .{1,80}? -RRB-")
_RELATIVE = re.compile(r", (?:which|who|whose|where) [^,;()]{3,100},")
_SECOND_CLAUSE = re.compile(r"(?:; |, but |, and )(?=[a-z])")


def clause_dropped(sentence: str, rng: random.Random, context: dict[str, Any]) -> Control | None:
    options: list[tuple[int, int, str]] = [
        (m.start(), m.end(), "") for m in _PAREN.finditer(sentence)
    ]
    options += [(m.start(), m.end(), "") for m in _RELATIVE.finditer(sentence)]
    for m in _SECOND_CLAUSE.finditer(sentence):
        head, tail = sentence[:m.start()], sentence[m.end():]
        # A clause, not the last item of a list: the head has no comma, both sides have some length.
        if (
            "," not in head
            and len(head.split()) >= 4
            and len(tail.split()) >= 4
            and sentence[-1] in ".!?"
        ):
            options.append((m.start(), len(sentence) - 1, ""))
    chosen = _pick(rng, options)
    if chosen is None:
        return None
    start, end, new = chosen
    return _sub("clause_dropped", sentence, start, end, new)


_LEADING = re.compile(
    r"^((?:In|On|At|During|After|Before|By|Since|From|Until|Following|Between|Throughout)"
    r" [^,]{2,60}), "
    r"(?=[A-Za-z])"
)
_PAIR = re.compile(r"(?<=[a-z] )([A-Z][a-z]+) and ([A-Z][a-z]+)\b")


def reordered(sentence: str, rng: random.Random, context: dict[str, Any]) -> Control | None:
    options = []
    lead = _LEADING.match(sentence)
    if lead and sentence[-1] in ".!?":
        phrase, rest = lead.group(1), sentence[lead.end():-1].rstrip(" ")
        first = rest.split(" ", 1)[0]
        if first in LOWER_FIRST or not first[:1].isupper():
            rest = rest[:1].upper() + rest[1:]
        text = f"{rest} {phrase[:1].lower()}{phrase[1:]}{sentence[-1]}"
        options.append(Control("reordered", sentence, text, phrase + ", ", "(moved to the end)"))
    for m in _PAIR.finditer(sentence):
        before = sentence[:m.start()].split()
        after = sentence[m.end():].split()
        # Two one-word names between lowercase words, not parts of longer names ("Galway Finn and
        # United Harps").
        if (
            before
            and before[-1].islower()
            and not (after and after[0][:1].isupper())
            and m.group(1) != m.group(2)
        ):
            options.append(
                _sub("reordered", sentence, m.start(), m.end(), f"{m.group(2)} and {m.group(1)}")
            )
    return _pick(rng, options)


SYNONYMS: dict[str, str] = {
    "large": "big",
    "big": "large",
    "begin": "start",
    "began": "started",
    "start": "begin",
    "started": "began",
    "purchase": "buy",
    "purchased": "bought",
    "bought": "purchased",
    "buy": "purchase",
    "approximately": "roughly",
    "roughly": "approximately",
    "help": "assist",
    "helped": "assisted",
    "built": "constructed",
    "constructed": "built",
    "famous": "well-known",
    "well-known": "famous",
    "located": "situated",
    "largest": "biggest",
    "biggest": "largest",
    "film": "movie",
    "movie": "film",
    "films": "movies",
    "movies": "films",
    "usually": "typically",
    "typically": "usually",
    "often": "frequently",
    "frequently": "often",
    "quickly": "rapidly",
    "rapidly": "quickly",
    "completed": "finished",
    "finished": "completed",
    "nearly": "almost",
    "almost": "nearly",
    "entire": "whole",
    "whole": "entire",
    "huge": "enormous",
    "enormous": "huge",
    "attempted": "tried",
    "tried": "attempted",
    "attempt": "try",
    "several": "a number of",
    "children": "kids",
    "currently": "presently",
    "commonly": "usually",
    "additional": "extra",
    "extra": "additional",
    "died": "passed away",
    "receive": "get",
    "received": "got",
    "shown": "displayed",
    "chosen": "selected",
    "selected": "chosen",
    "created": "made",
    "however": "but",
}
_SYNONYM = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, SYNONYMS), key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def synonym(sentence: str, rng: random.Random, context: dict[str, Any]) -> Control | None:
    # A capitalised word inside the sentence is part of a name ("the Big Three"): left alone.
    matches = [m for m in _SYNONYM.finditer(sentence) if m.start() == 0 or m.group().islower()]
    # "however" only where it joins clauses (", however,"), not "however long".
    matches = [
        m
        for m in matches
        if m.group().lower() != "however" or sentence[m.start() - 2 : m.start()] == ", "
    ]
    m = _pick(rng, matches)
    if m is None:
        return None
    return _sub(
        "synonym", sentence, m.start(), m.end(), _case_like(m.group(), SYNONYMS[m.group().lower()])
    )


NUMBER_WORDS = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
_WORD_NUMBER = re.compile(
    r"(?<![\w-])(" + "|".join(NUMBER_WORDS) + r")\b(?![-'’])(?= [a-z])", re.IGNORECASE
)
_DIGIT_NUMBER = re.compile(r"(?<![\w$.,/-])([2-9]|1[0-2])(?= [a-z]{3,})(?! (?:percent|am|pm)\b)")
_COMMA_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,]|\.\d)")
_PLAIN_NUMBER = re.compile(r"(?<![\w.,$])\d{5,}(?![\w,]|\.\d)")
_DOLLARS = re.compile(
    r"\$ ?(\d[\d,]*(?:\.\d+)?)((?: (?:million|billion|thousand|trillion))?)(?![\w])"
)
_WORD_DOLLARS = re.compile(
    r"(?<![\w$.,])(\d[\d,]*(?:\.\d+)?)((?: (?:million|billion|thousand|trillion))?) dollars\b"
)


def number_format(sentence: str, rng: random.Random, context: dict[str, Any]) -> Control | None:
    options: list[tuple[int, int, str]] = []
    options += [(m.start(), m.end(), str(NUMBER_WORDS.index(m.group().lower()) + 2))
                for m in _WORD_NUMBER.finditer(sentence)]
    options += [
        (m.start(), m.end(), NUMBER_WORDS[int(m.group()) - 2])
        for m in _DIGIT_NUMBER.finditer(sentence)
    ]
    options += [
        (m.start(), m.end(), m.group().replace(",", "")) for m in _COMMA_NUMBER.finditer(sentence)
    ]
    options += [
        (m.start(), m.end(), f"{int(m.group()):,}") for m in _PLAIN_NUMBER.finditer(sentence)
    ]
    options += [
        (m.start(), m.end(), f"{m.group(1)}{m.group(2)} dollars")
        for m in _DOLLARS.finditer(sentence)
    ]
    options += [
        (m.start(), m.end(), f"${m.group(1)}{m.group(2)}") for m in _WORD_DOLLARS.finditer(sentence)
    ]
    chosen = _pick(rng, options)
    if chosen is None:
        return None
    start, end, new = chosen
    if new[:1].isalpha() and start == 0:
        new = new[:1].upper() + new[1:]
    return _sub("number_format", sentence, start, end, new)


CONTRACTIONS: tuple[tuple[str, str], ...] = (
    ("do not", "don't"),
    ("does not", "doesn't"),
    ("did not", "didn't"),
    ("is not", "isn't"),
    ("are not", "aren't"),
    ("was not", "wasn't"),
    ("were not", "weren't"),
    ("cannot", "can't"),
    ("could not", "couldn't"),
    ("would not", "wouldn't"),
    ("should not", "shouldn't"),
    ("will not", "won't"),
    ("has not", "hasn't"),
    ("have not", "haven't"),
    ("had not", "hadn't"),
    ("it is", "it's"),
)
_CONTRACT = {a: b for a, b in CONTRACTIONS} | {b: a for a, b in CONTRACTIONS}
_CONTRACTION = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _CONTRACT), key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def contraction(sentence: str, rng: random.Random, context: dict[str, Any]) -> Control | None:
    matches = list(_CONTRACTION.finditer(sentence.replace("’", "'")))
    m = _pick(rng, matches)
    if m is None:
        return None
    return _sub(
        "contraction",
        sentence,
        m.start(),
        m.end(),
        _case_like(m.group(), _CONTRACT[m.group().lower()]),
    )


# --- two adjacent sentences
# -------------------------------------------------------------------------

LOWER_FIRST = frozenset(
    "The A An In On At It Its This These Those There They He She His Her Their During After Before"
    " For By As When While Some Many Most All Each However Also".split()
)


def merged(pair: tuple[str, str], rng: random.Random, context: dict[str, Any]) -> Control | None:
    first, second = pair
    if first[-1] != "." or len(first) + len(second) > 400:
        return None
    word = second.split(" ", 1)[0]
    body = second[:1].lower() + second[1:] if word in LOWER_FIRST else second
    text = f"{first[:-1].rstrip()}, and {body}"
    return Control("merged", f"{first} {second}", text, ". ", ", and ")


_SUBJECT = re.compile(r"^(?:The [a-z]+|(?:The )?[A-Z][\w'’-]+(?: [A-Z][\w'’-]+){0,3})(?= [a-z])")
_PLURAL_VERB = re.compile(r"^ (?:are|were|have|do)\b")
_SINGULAR_VERB = re.compile(r"^ (?:is|was|has|does|\w+s|\w+ed)\b")


def pronoun(pair: tuple[str, str], rng: random.Random, context: dict[str, Any]) -> Control | None:
    first, second = pair
    subject = _SUBJECT.match(first)
    if subject is None:
        return None
    name = subject.group()
    candidates = [name] + ([name.split(" ")[-1]] if " " in name and name[:4] != "The " else [])
    for used in candidates:
        if not second.startswith(used + " "):
            continue
        after = second[len(used):]
        both = f" {first} {second} ".lower()
        if _PLURAL_VERB.match(after):
            word = "They"
        elif not _SINGULAR_VERB.match(after):
            continue
        elif name.startswith("The ") and name[4:5].islower():
            word = "It"
        elif re.search(r"\b(?:he|his|him)\b", both) and not re.search(r"\b(?:she|her)\b", both):
            word = "He"
        elif re.search(r"\b(?:she|her)\b", both) and not re.search(r"\b(?:he|his|him)\b", both):
            word = "She"
        else:
            continue
        text = f"{first} {word}{after}"
        return Control("pronoun", f"{first} {second}", text, used, word)
    return None


SINGLE: dict[str, Callable[[str, random.Random, dict[str, Any]], Control | None]] = {
    "clause_dropped": clause_dropped, "reordered": reordered, "synonym": synonym,
    "number_format": number_format, "contraction": contraction,
}
PAIRED: dict[str, Callable[[tuple[str, str], random.Random, dict[str, Any]], Control | None]] = {
    "merged": merged, "pronoun": pronoun,
}


def make(
    kind: str, item, rng: random.Random, context: dict[str, Any] | None = None
) -> Control | None:
    """A control of `kind` from a sentence (or, for merged and pronoun, a pair of adjacent
    sentences), or None when it has nothing to change."""
    editors = PAIRED if kind in PAIRED else SINGLE
    control = editors[kind](item, rng, context or {})
    if control is None or control.text == control.source or _inside_quotation(control):
        return None
    return control


_QUOTATION = re.compile(r'"[^"]*"|“[^”]*”|``.*?\'\'')


def _inside_quotation(control: Control) -> bool:
    """Whether the change falls inside a quotation ("..."): words in quotation marks are someone's
    own words, and a quotation reworded is no longer true as a quotation."""
    source, text = control.source, control.text
    start = next(
        (i for i, (a, b) in enumerate(zip(source, text)) if a != b), min(len(source), len(text))
    )
    tail = next((i for i, (a, b) in enumerate(zip(reversed(source), reversed(text))) if a != b),
                min(len(source), len(text)))
    end = max(start, len(source) - tail)
    return any(m.start() < end and start < m.end() for m in _QUOTATION.finditer(source))


# --- cases
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    source_id: str
    dataset: str
    split: str
    control: Control
    request: JudgeRequest


def source_cases(
    dataset: str,
    source_id: str,
    record: dict[str, Any],
    *,
    seed: int,
    per_source: int,
    kinds: Sequence[str],
) -> list[Case]:
    passages = [{"id": p.get("id"), "text": p["text"]} for p in record["passages"]]
    split = split_of(source_key(p["text"] for p in passages))
    singles, pairs = [], []
    for p in passages:
        sentences = [p["text"][s:e] for s, e in split_sentences(p["text"])]
        singles += [s for s in sentences if usable(s)]
        pairs += [(a, b) for a, b in zip(sentences, sentences[1:]) if usable(a) and usable(b)]
    fields = {"question": record.get("question") or "", "passages": passages}
    cases = []
    for kind in kinds:
        rng = random.Random(f"{seed}:{source_id}:{kind}")
        order = list(pairs if kind in PAIRED else singles)
        rng.shuffle(order)
        made = 0
        for item in order:
            if made >= per_source:
                break
            control = make(kind, item, rng)
            if control is None:
                continue
            request = JudgeRequest.model_validate(fields | {"answer": control.text})
            cases.append(Case(source_id, dataset, split, control, request))
            made += 1
    return cases


# FaithBench has ~50 sources (ten summaries each), HAGRID ~1,000: more controls per FaithBench
# source.
PER_SOURCE = {"faithbench-dev": 8}


def build_cases(paths: Sequence[Path], *, seed: int = 27, per_source: int | None = None,
                kinds: Sequence[str] = KINDS) -> list[Case]:
    """Every control of every source, in a fixed order; `per_source` per kind and source (default
    1, and PER_SOURCE's for the sets named there)."""
    cases = []
    for dataset, source_id, record in sources(paths):
        if record["passages"]:
            n = per_source or PER_SOURCE.get(dataset, 1)
            cases += source_cases(dataset, source_id, record, seed=seed, per_source=n, kinds=kinds)
    return cases


# --- judging
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    case: Case
    judge: str
    kept: bool | None  # None: the judge failed
    notes: tuple[str, ...]


def run(
    cases: Sequence[Case], judge_names: Sequence[str], profile: str, quotes: int
) -> list[Outcome]:
    outcomes = []
    with Judges(profile, max_quotes=quotes) as judges:
        for name in judge_names:
            started = time.perf_counter()
            for case in cases:
                result = judges.run(name, case.request)
                if result is None:
                    outcomes.append(Outcome(case, name, None, ()))
                    continue
                notes = tuple(n for c in result.claims if c.label != "SUPPORTED"
                              for n in split_notes(c.explanation, base_explanation(name)))
                notes += tuple(f"Fabrication: {f.reason or f.text}" for f in result.fabrications)
                outcomes.append(Outcome(case, name, not predicted_hallucinated(result), notes))
            print(
                f"{name}: {len(cases)} controls in {time.perf_counter() - started:.1f} s",
                flush=True,
            )
    return outcomes


def kept_share(outcomes: Sequence[Outcome]) -> float:
    return sum(bool(o.kept) for o in outcomes) / len(outcomes) if outcomes else 0.0


def format_table(
    outcomes: Sequence[Outcome], judge_names: Sequence[str], split: str, quotes: int
) -> str:
    datasets = sorted({o.case.dataset for o in outcomes})
    lines = [
        f"meaning-preserving controls, split {split!r}"
        + (" (untuned half)" if split == "report" else ""),
        (
            f"kept = every claim SUPPORTED, no fabrication (target >= {KEPT_TARGET:.2f}); offline ="
            f" offline judge + checks; always = always-SUPPORTED fake LLM ({quotes} quote(s) a"
            " sentence) + checks"
        ),
        "",
    ]
    header = f"{'kind':<15} {'n':>5}  " + "  ".join(f"{name:>8}" for name in judge_names)
    header += "   " + "  ".join(
        f"{d[:14] + ' ' + name:>24}" for d in datasets for name in judge_names
    )
    lines.append(header)
    for kind in (*KINDS, "all"):
        group = [o for o in outcomes if kind == "all" or o.case.control.kind == kind]
        if not group:
            continue
        cells = []
        for name in judge_names:
            value = kept_share([o for o in group if o.judge == name])
            cells.append(f"{value:.3f}" + ("" if value >= KEPT_TARGET else "*"))
        per = []
        for d in datasets:
            for name in judge_names:
                part = [o for o in group if o.judge == name and o.case.dataset == d]
                per.append(f"{kept_share(part):.3f} (n={len(part)})" if part else "-")
        n = len(group) // max(len(judge_names), 1)
        lines.append(f"{kind:<15} {n:>5}  " + "  ".join(f"{c:>8}" for c in cells)
                     + "   " + "  ".join(f"{p:>24}" for p in per))
    lines.append("(* below target)")
    return "\n".join(lines)


def format_notes(
    outcomes: Sequence[Outcome], judge_names: Sequence[str], top: int, examples: int
) -> str:
    lines = []
    for name in judge_names:
        lost = [o for o in outcomes if o.judge == name and not o.kept]
        groups: dict[str, list[Outcome]] = {}
        for o in lost:
            for key in dict.fromkeys(note_group(n) for n in o.notes) or {"(no note)": None}:
                groups.setdefault(key, []).append(o)
        lines.append(f"\n{name}: {len(lost)} controls not kept, top note groups")
        for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]:
            lines.append(f"  {len(members):>5}  {key}")
            for o in members[:examples]:
                c = o.case.control
                note = next((n for n in o.notes if note_group(n) == key), "")
                lines.append(
                    f"         - [{o.case.source_id} {c.kind}] {c.before!r} -> {c.after!r}"
                )
                lines.append(f"           answer: {c.text[:220]}")
                if note:
                    lines.append(f"           {note[:220]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", type=Path, default=[DATA / name for name in DATASETS])
    parser.add_argument("--split", choices=("tune", "report", "all"), default="report")
    parser.add_argument("--kinds", nargs="*", choices=KINDS, default=list(KINDS))
    parser.add_argument("--judges", nargs="*", choices=Judges.NAMES, default=list(Judges.NAMES))
    parser.add_argument(
        "--profile", default="claim_audit@v1", help="the always-SUPPORTED fake's profile"
    )
    parser.add_argument(
        "--quotes", type=int, choices=(1, 2), default=2, help="quotes the fake gives a sentence"
    )
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--per-source", type=int, default=None,
                        help="controls per kind and source (default 1; FaithBench 8)")
    parser.add_argument(
        "--limit", type=int, default=None, help="at most N controls per kind (spread evenly)"
    )
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--examples", type=int, nargs="?", const=5, default=0)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)

    cases = [
        c
        for c in build_cases(
            args.data, seed=args.seed, per_source=args.per_source, kinds=args.kinds
        )
        if args.split == "all" or c.split == args.split
    ]
    if args.limit:
        chosen = []
        for kind in args.kinds:
            of_kind = [c for c in cases if c.control.kind == kind]
            chosen += spread(of_kind, args.limit)
        cases = chosen
    started = time.perf_counter()
    outcomes = run(cases, args.judges, args.profile, args.quotes)
    print()
    print(format_table(outcomes, args.judges, args.split, args.quotes))
    print(
        f"\n{len(outcomes)} judgements of {len(cases)} controls in"
        f" {time.perf_counter() - started:.1f} s; seed {args.seed}"
    )
    print(format_notes(outcomes, args.judges, args.top, args.examples))
    if not args.no_record and not args.limit:
        for name in args.judges:
            for kind in (*args.kinds, "all"):
                part = [
                    o
                    for o in outcomes
                    if o.judge == name and (kind == "all" or o.case.control.kind == kind)
                ]
                if part:
                    record_figure(
                        f"controls kept {name} {kind} {args.split}",
                        kept_share(part),
                        "share",
                        target=KEPT_TARGET,
                        command=f"python bench/controls.py --split {args.split}",
                        controls=len(part),
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
