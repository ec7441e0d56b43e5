"""judges.lexicon: lemmas, derivations, synonyms and antonyms read from WordNet 3.0's files.

Every expectation is a fact of WordNet 3.0 (its exception lists, synsets and pointers), not a
judgement of what should be related."""

import itertools
import re
import time

import pytest

from judges import lexicon


@pytest.mark.parametrize(
    ("word", "base"),
    [
        ("bought", "buy"),
        ("sold", "sell"),
        ("children", "child"),
        ("better", "good"),
        ("mice", "mouse"),
        ("running", "run"),
        ("increasing", "increase"),
        ("decisions", "decision"),
        ("was", "be"),
        ("species", "species"),
        ("news", "news"),
        ("Bought", "buy"),
        ("xyzzy", "xyzzy"),
    ],
)
def test_lemma_reads_exceptions_and_suffixes(word, base):
    assert lexicon.lemma(word) == base


@pytest.mark.parametrize(("a", "b"), [
    ("bought", "buy"), ("sold", "sell"), ("went", "go"), ("mice", "mouse"),
    ("decision", "decide"), ("decisions", "decided"), ("annual", "annually"), ("quickly", "quick"),
])
def test_inflections_and_derivations_are_the_same_word(a, b):
    assert lexicon.related(a, b) == "same"
    assert lexicon.related(b, a) == "same"


@pytest.mark.parametrize(("a", "b"), [
    ("purchase", "buy"), ("purchased", "bought"), ("big", "large"), ("car", "automobile"),
    ("cheap", "inexpensive"), ("allow", "permit"),
])
def test_words_sharing_a_synset_are_synonyms(a, b):
    assert lexicon.related(a, b) == "synonym"
    assert lexicon.related(b, a) == "synonym"
    assert lexicon.lemma(b) in lexicon.synonyms(a)


@pytest.mark.parametrize(("a", "b"), [
    ("increase", "decrease"), ("cheap", "expensive"), ("buy", "sell"), ("permitted", "forbidden"),
    ("happy", "unhappy"), ("large", "small"),
    ("increasing", "decreases"),  # through the inflections
    ("cheaply", "expensive"),  # through the adverb's adjective
    ("huge", "tiny"),  # satellites of the clusters of large and small (WordNet's indirect antonyms)
])
def test_wordnet_antonym_pairs_are_antonyms(a, b):
    assert lexicon.related(a, b) == "antonym"
    assert lexicon.related(b, a) == "antonym"


def test_antonymy_is_between_word_forms_as_wordnet_records_it():
    # allow/disallow and forbid/permit are WordNet's pairs; allow and forbid are not a pair.
    assert "disallow" in lexicon.antonyms("allowed")
    # the second through its cluster
    assert {"permit", "permissible"} <= lexicon.antonyms("forbidden")
    assert lexicon.antonyms("increase") == {"decrease"}
    assert "expensive" in lexicon.antonyms("cheap")


@pytest.mark.parametrize(("a", "b"), [
    ("car", "banana"), ("apple", "orange"), ("station", "pass"), ("minute", "hour"),
    ("xyzzy", "plugh"), ("", "buy"),
])
def test_unrelated_words_are_none(a, b):
    assert lexicon.related(a, b) is None


def test_rare_senses_do_not_make_synonyms():
    # bank's depository sense is its second, but WordNet names it only by collocations.
    assert lexicon.related("bank", "depository") is None
    assert all(len(lexicon._wn().offsets(word, "n")) > lexicon.SENSES for word in ("bank", "pass"))


def test_answers_are_lowercase_single_words():
    for word in ("buy", "big", "cheap", "bank", "good", "increase"):
        for found in lexicon.synonyms(word) | lexicon.antonyms(word):
            assert re.fullmatch(r"[a-z][a-z'.-]*", found), found
        assert word not in lexicon.synonyms(word)


def test_the_data_is_wordnet_3_0_with_its_license():
    folder = lexicon.data_dir()
    assert (folder / "LICENSE").read_text().startswith("WordNet Release 3.0")


def test_ten_thousand_lookups_take_under_half_a_second_after_load():
    lexicon.load()
    text = """The pass is sold at every station and gives unlimited travel on buses, trams and
    ferries for three days. Children under twelve travel free with an adult. The museum opened in
    1998 and houses the largest collection of medieval manuscripts in northern Europe; its director
    said prices would increase next year, while opening hours would be reduced on Mondays. Critics
    argued the decision was unfair to students. The council approved the budget after a long debate,
    rejecting a proposal to sell the old library building. Annual rainfall has decreased
    steadily."""
    words = sorted(set(re.findall(r"[a-z]+", text.lower())))
    pairs = list(itertools.islice(itertools.cycle(itertools.product(words, repeat=2)), 10_000))
    start = time.perf_counter()
    for a, b in pairs:  # most words seen for the first time here: not only cache hits
        lexicon.related(a, b)
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("jigokudani", True),
        ("kilmarnock", True),
        ("london", True),
        ("tuscany", True),  # unknown, or only named instances
        ("began", False),
        ("born", False),
        ("waters", False),  # words, though "Begin", "Born", "Waters" are people
        ("church", False),
        ("paris", False),
        ("history", False),
        ("ca n't", False),
        ("", False),
    ],
)
def test_name_like_reads_a_name_without_capitals(word, expected):
    assert lexicon.name_like(word) is expected
