"""The precision harnesses of issue 27 (bench/oracle.py, bench/controls.py, bench/edit_styles.py)
at a toy size, on inline records (no ../shared): each script ends well, computes its figures and
records them in the shape bench/README.md promises; and the pieces the figures rest on (the gold
of a sentence, the fake's closest quote, the controls, the tokenized style) do what they say.
No figure of the judge is asserted beyond what must hold for any judge worth the name (a claim
that is its own quote stays SUPPORTED; an invented number behind an always-SUPPORTED LLM is caught).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from bench.controls import KINDS as CONTROL_KINDS
from bench.controls import make
from bench.minimal_edits import tokenized
from bench.oracle import (
    Judges,
    OracleLLM,
    closest,
    figures,
    gold_sentences,
    note_group,
    passage_sentences,
    record_gold,
    run_records,
    split_notes,
    styled_record,
)
from judges.eval import parse_record
from judges.types import JudgeRequest
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.bench, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
ROW_KEYS = {
    "name",
    "value",
    "unit",
    "target",
    "met",
    "direction",
    "command",
    "measured_at",
    "machine",
}

TOWER = (
    "The Eiffel Tower is 330 metres tall and stands on the Champ de Mars in Paris. It was completed"
    " in 1889 as the entrance arch to the World's Fair. The tower was designed by the engineering"
    " company of Gustave Eiffel, and it is not painted red. In 1957, a broadcasting aerial was"
    " added to the top of the tower. The tower has three levels for visitors, with restaurants on"
    " the first and second levels."
)
BRIDGE = (
    "The Golden Gate Bridge opened in 1937 and spans the strait between San Francisco and Marin"
    " County. The bridge is 2,737 metres long, and its towers rise 227 metres above the water. It"
    " was the longest suspension bridge in the world until 1964. The bridge does not carry trains,"
    " but it carries six lanes of traffic and two paths."
)
SUPPORTED = "The Eiffel Tower is 330 metres tall and stands on the Champ de Mars in Paris."
INVENTED = "The Eiffel Tower is 450 metres tall and stands on the Champ de Mars in Paris."
SUMMARY = "The Golden Gate Bridge opened in 1937. It was painted gold by its builders in 1940."


def _records() -> tuple[list[dict], list[dict]]:
    hagrid = [
        {
            "id": "h-1",
            "dataset": "HAGRID",
            "task_type": "qa",
            "question": "How tall is the Eiffel Tower?",
            "passages": [{"id": "P1", "text": TOWER}],
            "answer": SUPPORTED + " [1]",
            "hallucinated": False,
            "spans": [],
        },
        {
            "id": "h-2",
            "dataset": "HAGRID",
            "task_type": "qa",
            "question": "How tall is the Eiffel Tower?",
            "passages": [{"id": "P1", "text": TOWER}],
            "answer": INVENTED + " [1]",
            "hallucinated": True,
            "spans": [],
        },
        {
            "id": "h-3",
            "dataset": "HAGRID",
            "task_type": "qa",
            "question": "How long is the bridge?",
            "passages": [{"id": "P2", "text": BRIDGE}],
            "answer": "The bridge is 2,737 metres long [2].",
            "hallucinated": False,
            "spans": [],
        },
    ]
    start = SUMMARY.index("painted gold")
    faith = [
        {"id": "f-1", "dataset": "FaithBench", "task_type": "summarization", "question": None,
         "passages": [{"id": "P1", "text": BRIDGE}], "answer": SUMMARY, "hallucinated": True,
         "spans": [{"start": start, "end": start + len("painted gold"), "text": "painted gold",
                    "label": "Unwanted.Extrinsic"}]},
    ]
    return hagrid, faith


@pytest.fixture
def data(tmp_path):
    hagrid, faith = _records()
    paths = []
    for name, records in (("hagrid-dev", hagrid), ("faithbench-dev", faith)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        paths.append(path)
    return paths


def _script(tmp_path, *argv: str) -> tuple[str, list[dict]]:
    results = tmp_path / "latest.json"
    env = os.environ | {"BENCH_RESULTS": str(results), "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout, json.loads(results.read_text()) if results.exists() else []


def _rows(rows: list[dict], prefix: str) -> list[dict]:
    found = [row for row in rows if row["name"].startswith(prefix)]
    assert found, f"no figure named {prefix!r}... in {[row['name'] for row in rows]}"
    for row in found:
        assert ROW_KEYS <= row.keys(), row
        assert isinstance(row["value"], (int, float)) and row["value"] >= 0
    return found


# --- the oracle
# ----------------------------------------------------------------------------------------


def test_gold_sentences_follow_the_spans_or_the_record():
    sentences = gold_sentences(
        SUMMARY, True, [(SUMMARY.index("painted"), SUMMARY.index("painted") + 7, "Unwanted")]
    )
    assert [g.supported for g in sentences] == [True, False]
    benign = gold_sentences(SUMMARY, False, [(0, 3, "Benign")])
    assert all(g.supported for g in benign)
    # HAGRID: the record's label
    assert not any(g.supported for g in gold_sentences(INVENTED, True, []))


def test_a_styled_record_is_tokenized_and_each_gold_sentence_keeps_its_class():
    hagrid, faith = _records()
    record = parse_record(faith[0])
    request, gold = styled_record(record, "tokenized")
    assert request.answer == tokenized(SUMMARY) and request.passages[0].text == tokenized(BRIDGE)
    assert [(request.answer[g.start:g.end], g.supported) for g in gold] == [
        ("the golden gate bridge opened in 1937 .", True),
        ("it was painted gold by its builders in 1940 .", False),
    ]
    assert styled_record(record, "plain") == (record.request, record_gold(record))
    # "... Paris. [1]": the marker kept
    request, gold = styled_record(parse_record(hagrid[1]), "tokenized")
    assert request.answer.endswith("paris . [ 1 ]") and [g.supported for g in gold] == [False]
    listed = parse_record(
        {
            **faith[0],
            "answer": "Two bridges:\n1. The Golden Gate Bridge opened in 1937.",
            "spans": [],
        }
    )
    request, gold = styled_record(listed, "tokenized")  # a list item still opens its line
    assert (
        request.answer == "two bridges :\n1 . the golden gate bridge opened in 1937 ."
        and len(gold) == 2
    )


def test_the_fake_quotes_the_closest_passage_sentence_exactly():
    request = JudgeRequest.model_validate(
        {"passages": [{"id": "P1", "text": TOWER}], "answer": SUPPORTED}
    )
    pool = passage_sentences(request)
    pid, quote = closest("A broadcasting aerial was added in 1957.", pool)
    assert (
        pid == "P1" and quote == "In 1957, a broadcasting aerial was added to the top of the tower."
    )
    assert quote in TOWER


def test_notes_split_and_group_by_their_first_words():
    notes = split_notes("checked Quote check: the quote from P3 does not say 'won', '2000'. "
                        "Number check: '68' appears in no passage.")
    assert notes == ["Quote check: the quote from P3 does not say 'won', '2000'.",
                     "Number check: '68' appears in no passage."]
    assert note_group(notes[0]) == "Quote check: the quote from Px does not"
    assert note_group(notes[1]) == "Number check: '…' appears in no passage."


def test_the_oracle_keeps_a_claim_that_is_its_own_quote_and_catches_an_invented_number():
    hagrid, faith = _records()
    records = [parse_record(r) for r in hagrid + faith]
    llm = OracleLLM()
    with FakeOpenAI(default=llm) as fake:
        perfect = run_records(records, "toy", "perfect", fake, llm, "claim_audit@v1")
        always = run_records(records, "toy", "always", fake, llm, "claim_audit@v1")
    assert llm.requests == 2 * len(records)  # every record went through the openai backend
    first = next(r for r in perfect if r.record_id == "h-1")
    assert first.gold_supported and first.outcome.kept, first.outcome  # the quote equals the claim
    p, a = figures(perfect), figures(always)
    assert p.supported >= 3 and p.unsupported >= 1 and p.errors == 0
    assert (p.clean_answers, p.bad_answers) == (2, 2) and p.clean_lowered <= p.clean_answers
    assert p.caught == p.unsupported  # the checks never raise an UNSUPPORTED label
    assert a.unsupported == p.unsupported and 0 <= a.caught <= a.unsupported
    invented = next(r for r in always if r.record_id == "h-2" and not r.gold_supported)
    assert not invented.outcome.kept and invented.outcome.notes  # '450' is in no passage
    assert not invented.bad and (first.bad is False)


def test_the_oracle_script_records_both_directions(tmp_path, data):
    out, rows = _script(
        tmp_path, "bench/oracle.py", "--data", *map(str, data), "--split", "all", "--examples", "2"
    )
    assert "perfect: gold-supported" in out and "always: gold-unsupported" in out
    perfect = _rows(rows, "oracle perfect LLM supported lowered")
    always = _rows(rows, "oracle always-SUPPORTED LLM unsupported caught")
    assert {r["name"].split()[-3] for r in perfect} == {"hagrid-dev", "faithbench-dev"}
    assert all(r["target"] == 5.0 and r["direction"] == "lower" for r in perfect)
    assert all(r["target"] == 85.0 for r in always)
    assert sum(r["sentences"] for r in perfect) >= 3


# --- controls
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "item", "expected"),
    [
        (
            "clause_dropped",
            "The tower, which was built for the fair, stands on the Champ de Mars in Paris.",
            "The tower stands on the Champ de Mars in Paris.",
        ),
        (
            "merged",
            ("The bridge opened in 1937.", "It carries six lanes of traffic."),
            "The bridge opened in 1937, and it carries six lanes of traffic.",
        ),
        (
            "reordered",
            "In 1957, a broadcasting aerial was added to the top of the tower.",
            "A broadcasting aerial was added to the top of the tower in 1957.",
        ),
        (
            "synonym",
            "The tower was completed for the fair.",
            "The tower was finished for the fair.",
        ),
        ("number_format", "The bridge is 2,737 metres long.", "The bridge is 2737 metres long."),
        ("contraction", "The bridge does not carry trains.", "The bridge doesn't carry trains."),
        (
            "pronoun",
            ("The bridge opened in 1937.", "The bridge carries six lanes of traffic."),
            "The bridge opened in 1937. It carries six lanes of traffic.",
        ),
    ],
)
def test_each_control_keeps_the_meaning_and_changes_the_words(kind, item, expected):
    control = make(kind, item, random.Random(0))
    assert control is not None and control.kind == kind
    assert control.text == expected


def test_number_formats_go_both_ways():
    rng = random.Random(0)
    assert (
        make("number_format", "It has three levels for visitors.", rng).text
        == "It has 3 levels for visitors."
    )
    assert (
        make("number_format", "It has 3 levels for visitors.", rng).text
        == "It has three levels for visitors."
    )
    assert (
        make("number_format", "The ticket costs $5 at the gate.", rng).text
        == "The ticket costs 5 dollars at the gate."
    )
    # not "Ninety-5"
    assert make("number_format", "Ninety-five theses were published.", rng) is None


def test_no_control_rewords_a_quotation():
    rng = random.Random(0)
    assert (
        make("number_format", 'He said "the two most recent surveys agree" in 2010.', rng) is None
    )
    assert make("number_format", 'He said "the surveys agree" in two reports.', rng).after == "2"


def test_citation_markers_alone_are_no_sentence():
    answer = "Finland has a population of 5.5 million people. [1][2]"
    assert len(gold_sentences(answer, True, [])) == 1


def test_the_controls_script_records_a_kept_share_per_judge(tmp_path, data):
    out, rows = _script(tmp_path, "bench/controls.py", "--data", *map(str, data), "--split", "all")
    assert "meaning-preserving controls" in out
    kept = _rows(rows, "controls kept")
    assert {r["name"].split()[2] for r in kept} == set(Judges.NAMES)
    overall = [r for r in kept if r["name"].split()[3] == "all"]
    assert len(overall) == 2 and all(r["controls"] >= len(CONTROL_KINDS) - 1 for r in overall)
    assert all(0.0 <= r["value"] <= 1.0 and r["target"] == 0.97 for r in kept)


# --- text styles
# ---------------------------------------------------------------------------------------------


def test_tokenized_text_is_lowercased_ptb():
    assert tokenized("He couldn't go (really), and I don't know why.") == \
        "he could n't go -lrb- really -rrb- , and i do n't know why ."
    assert tokenized("John's dog won't bark at the U.S. border; it can't.") == \
        "john 's dog wo n't bark at the u.s. border ; it ca n't ."
    assert tokenized('It cost $5, "a bargain".') == "it cost $ 5 , `` a bargain '' ."


def test_the_edit_styles_script_judges_both_styles_with_both_judges(tmp_path, data):
    out, rows = _script(
        tmp_path,
        "bench/edit_styles.py",
        "--data",
        *map(str, data),
        "--split",
        "all",
        "--kinds",
        "number",
        "year",
        "verbatim",
    )
    assert "tokenized always" in out
    figures_ = _rows(rows, "minimal edits ")
    names = {r["name"] for r in figures_}
    for style in ("plain", "tokenized"):
        for judge in Judges.NAMES:
            assert f"minimal edits {style} {judge} verbatim kept all" in names
            assert f"minimal edits {style} {judge} number flagged all" in names
    verbatim = [r for r in figures_ if " verbatim " in r["name"]]
    assert all(r["target"] == 0.97 for r in verbatim)
