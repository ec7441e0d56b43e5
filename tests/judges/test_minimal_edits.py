"""bench/minimal_edits.py: each kind of minimal edit changes exactly the one slot it names, only
where the sentence has that slot (a handwritten passage, never the shared dev data)."""

import random

import pytest

from bench.minimal_edits import _FLIPS, _UNITS, EDIT_KINDS, Context, edit, name_pool

PASSAGE = (
    "The 2023 conference was held in Lisbon. The 2024 conference will be held in Porto from 10 to"
    " 12 June. Checked bags may weigh up to 23 kg on all flights. Pets are not allowed in the"
    " apartments. Northwind Rail acquired Harbor Freight Lines in 2019."
)
SENTENCES = {
    "number": "The 2024 conference will be held in Porto from 10 to 12 June.",
    "year": "The 2023 conference was held in Lisbon.",
    "negation_added": "The 2024 conference will be held in Porto from 10 to 12 June.",
    "negation_dropped": "Pets are not allowed in the apartments.",
    "entity": "The 2023 conference was held in Lisbon.",
    "unit": "Checked bags may weigh up to 23 kg on all flights.",
    "flip": "Checked bags may weigh up to 23 kg on all flights.",
    "swap": "Northwind Rail acquired Harbor Freight Lines in 2019.",
    "qualifier": "The 2023 conference was held in Lisbon.",
}
CONTEXT = Context(document_names=name_pool(PASSAGE), corpus_names=("Madrid",), passage_text=PASSAGE)


def one_slot(source: str, text: str, before: str, after: str) -> bool:
    """`text` is `source` with one occurrence of `before` replaced by `after`, nothing else."""
    return any(
        source[:i] + after + source[i + len(before):] == text
        for i in range(len(source) - len(before) + 1) if source.startswith(before, i)
    )


@pytest.mark.parametrize("kind", EDIT_KINDS)
def test_each_edit_kind_changes_one_slot_and_keeps_the_rest(kind):
    sentence = SENTENCES[kind]
    result = edit(kind, sentence, random.Random(7), CONTEXT)
    assert result is not None and result.kind == kind and result.source == sentence
    assert result.text != sentence and result.before != result.after
    assert one_slot(sentence, result.text, result.before, result.after)


def test_a_changed_number_is_a_different_number_not_found_in_the_passage():
    result = edit("number", SENTENCES["number"], random.Random(1), CONTEXT)
    assert (
        result.before in {"10", "12"}
        and result.after.isdigit()
        and result.after not in PASSAGE.split()
    )


def test_a_changed_year_is_another_year():
    result = edit("year", SENTENCES["year"], random.Random(1), CONTEXT)
    assert result.before == "2023" and len(result.after) == 4 and result.after != "2023"


def test_negation_added_and_dropped_touch_only_the_auxiliary():
    added = edit("negation_added", SENTENCES["negation_added"], random.Random(1), CONTEXT)
    assert (added.before, added.after) == ("will ", "will not ")
    dropped = edit("negation_dropped", SENTENCES["negation_dropped"], random.Random(1), CONTEXT)
    assert dropped.text == "Pets are allowed in the apartments."


def test_a_swapped_entity_comes_from_the_same_document_first():
    result = edit("entity", SENTENCES["entity"], random.Random(1), CONTEXT)
    assert (
        result.before == "Lisbon"
        and result.after in CONTEXT.document_names
        and result.after != "Lisbon"
    )


def test_a_unit_and_a_flip_use_their_counterparts():
    unit = edit("unit", SENTENCES["unit"], random.Random(1), CONTEXT)
    assert (unit.before, unit.after) == ("kg", _UNITS["kg"])
    flip = edit("flip", SENTENCES["flip"], random.Random(1), CONTEXT)
    assert flip.after == _FLIPS[flip.before.lower()]


def test_a_subject_object_swap_exchanges_the_two_names():
    result = edit("swap", SENTENCES["swap"], random.Random(1), CONTEXT)
    assert result.text == "Harbor Freight Lines acquired Northwind Rail in 2019."


def test_an_added_qualifier_is_inserted_after_the_verb():
    result = edit("qualifier", SENTENCES["qualifier"], random.Random(1), CONTEXT)
    assert (
        result.before == "was "
        and result.after.startswith("was ")
        and len(result.after.split()) == 2
    )


@pytest.mark.parametrize("kind", ["number", "year", "negation_dropped", "unit", "swap"])
def test_a_sentence_without_the_slot_is_not_edited(kind):
    assert (
        edit(
            kind,
            "Visitors enjoy the quiet garden behind the old library.",
            random.Random(1),
            CONTEXT,
        )
        is None
    )


def test_controls_keep_the_sentence_word_for_word():
    sentence = SENTENCES["year"]
    assert edit("verbatim", sentence, random.Random(1), CONTEXT).text == sentence
    framed = edit("framed", sentence, random.Random(1), CONTEXT).text
    assert (
        framed.endswith(sentence[1:])
        and framed != sentence
        and framed.lower().endswith(sentence.lower())
    )


def test_the_same_seed_gives_the_same_edit():
    for kind in EDIT_KINDS:
        first = edit(kind, SENTENCES[kind], random.Random(3), CONTEXT)
        assert first == edit(kind, SENTENCES[kind], random.Random(3), CONTEXT)
