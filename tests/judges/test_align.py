"""The aligner (judges.align) and the offline judge's labels built on it."""

import pytest

from judges.align import Shortfall, align, quote_shortfall, tokens
from judges.backends.offline.judge import judge_offline
from judges.types import JudgeRequest


def judged(passage: str, answer: str):
    [claim] = judge_offline(
        JudgeRequest(passages=[{"id": "P1", "text": passage}], answer=answer)
    ).claims
    return claim


def test_a_dropped_not_is_contradicted_quoting_the_source():
    claim = judged("Pets are not allowed in the apartments.", "Pets are allowed in the apartments.")
    assert claim.label == "CONTRADICTED"
    assert claim.explanation == "P1 says 'not allowed'."


def test_a_place_swapped_for_one_of_the_neighbouring_sentence_is_contradicted():
    claim = judged(
        "The 2023 conference was held in Lisbon. The 2024 conference will be held in Porto from 10"
        " to 12 June.",
        "The 2024 conference will be held in Lisbon from 10 to 12 June.",
    )
    assert claim.label == "CONTRADICTED"
    assert claim.explanation == "P1 says 'Porto' where the claim says 'Lisbon'."


def test_words_of_two_sentences_fused_into_one_claim_are_not_supported():
    claim = judged(
        "Residents over 65 can apply online. Residents with disabilities must apply in person.",
        "Residents with disabilities can apply online.",
    )
    assert claim.label != "SUPPORTED"
    assert "'over 65' where the claim says 'with disabilities'" in claim.explanation


def test_a_unit_attached_to_another_number_is_contradicted():
    claim = judged(
        "Checked bags may weigh up to 23 kg (50 lb).", "Checked bags may weigh up to 23 lb."
    )
    assert claim.label == "CONTRADICTED"
    assert claim.explanation == "P1 says '23 kg' where the claim says '23 lb'."


def test_a_verbatim_copy_after_an_ellipsis_is_supported():
    claim = judged(
        "Cash fares do not include a transfer.", "... cash fares do not include a transfer."
    )
    assert claim.label == "SUPPORTED"


@pytest.mark.parametrize(
    "source, claim, kind, shown",
    [
        (
            "Children under 5 ride free.",
            "Children under 5 do not ride free.",
            "negation_added",
            "'not ride'",
        ),
        ("You can bring pets.", "You can't bring pets.", "negation_added", "'can't bring'"),
        ("Prices are lower on weekends.", "Prices are higher on weekends.", "opposite", "'lower'"),
        ("The bus leaves at 6 pm.", "The bus leaves at 5 pm.", "number", "'6'"),
        ("The fare is $2.75 per ride.", "The fare is $3.25 per ride.", "number", "'$2.75'"),
        (
            "The Celtics beat the Lakers in Boston.",
            "The Lakers beat the Celtics in Boston.",
            "swap",
            "'Celtics beat the Lakers'",
        ),
        ("Some riders must pay.", "All riders must pay.", "scale", "'Some'"),
    ],
)
def test_each_kind_of_difference_is_read_and_quotes_the_source(source, claim, kind, shown):
    alignment = align(claim, source)
    [difference] = alignment.differences
    assert difference.kind == kind
    assert shown in difference.explain("P1")


def test_an_answering_no_negates_nothing():
    assert align("No, children under 5 ride free.", "Children under 5 ride free.").differences == ()


def test_a_negation_of_another_clause_is_no_difference():
    source = "The museum, which is not free, opens at 9 and closes at 5."
    assert align("The museum opens at 9 and closes at 5.", source).contradictions == ()


def test_a_passive_is_no_swap():
    assert (
        align(
            "Slavery was abolished by France in 1848.", "France abolished slavery in 1848."
        ).contradictions
        == ()
    )


def test_a_number_in_another_slot_of_a_different_statement_is_no_contradiction():
    alignment = align("The board was established in 1998.",
                      "The board is the largest in Canada, governing 451 elementary schools.")
    assert alignment.contradictions == ()


def test_digits_glued_to_letters_are_not_numbers():
    alignment = align(
        "The circuit was built in 1959.", "The circuit has hosted F1 races since 1962."
    )
    assert all(d.kind != "number" or "F1" not in d.source_words for d in alignment.differences)


def test_coverage_counts_only_the_chosen_sentence():
    alignment = align(
        "Residents with disabilities can apply online.",
        "Residents over 65 can apply online. Residents with disabilities must apply in person.",
    )
    assert alignment.coverage < 1.0


def test_an_unrelated_sentence_aligns_with_nothing():
    assert align("Students ride free on holidays.", "Bikes are welcome on all buses.") is None


def test_explanations_show_words_as_written_never_stems_or_scores(fare_request):
    result = judge_offline(
        fare_request(
            "A monthly pass costs $86 for weekend riders. Seniors ride on the Orange Line."
        )
    )
    for claim in result.claims:
        assert "%" not in claim.explanation and "weighted" not in claim.explanation
        assert "'orang'" not in claim.explanation and "'month'" not in claim.explanation


def test_an_adverb_added_to_a_copied_sentence_is_partially_supported():
    claim = judged(
        "Galati is the capital city of Galati County.",
        "Galati is temporarily the capital city of Galati County.",
    )
    assert claim.label == "PARTIALLY_SUPPORTED"
    assert claim.explanation.startswith("P1 does not say 'temporarily'.")


def test_a_noun_that_names_what_the_sentence_means_is_no_qualifier():
    claim = judged(
        "The minimum age is 16 in Argentina.", "The minimum voting age is 16 in Argentina."
    )
    assert claim.label == "SUPPORTED"


def test_a_percentage_written_as_percentage_points_is_another_unit():
    claim = judged(
        "Turnout rose by 23.5% in 2010.", "Turnout rose by 23.5 percentage points in 2010."
    )
    assert claim.label == "CONTRADICTED"


def test_an_opposite_in_the_slot_counts_though_the_sentence_uses_it_elsewhere():
    source = "The church was becoming more and more gentile, and less and less Jewish."
    alignment = align(
        "The church was becoming less and more gentile, and less and less Jewish.", source
    )
    assert [d.kind for d in alignment.contradictions] == ["opposite"]


def test_a_name_in_brackets_swapped_for_another_is_contradicted():
    alignment = align("Polycyclic aromatic hydrocarbons (Vietnam) consist of fused aromatic rings.",
                      "Polycyclic aromatic hydrocarbons (PAHs) consist of fused aromatic rings.")
    assert [d.explain("P1") for d in alignment.contradictions] == [
        "P1 says 'PAHs' where the claim says 'Vietnam'."
    ]


def test_a_number_the_sentence_has_elsewhere_is_a_reordering_not_a_change():
    source = "In June 2011, during the symposium, the probe added ten new objects to the catalogue."
    alignment = align(
        "Ten new objects were added to the catalogue during the symposium in June 2011.", source
    )
    assert alignment.contradictions == ()


def test_an_unrelated_quote_does_not_say_the_claim():
    shortfall = quote_shortfall(
        "Students ride free on holidays.", [("P1", "Bikes are welcome on all buses.")]
    )
    assert shortfall == Shortfall(
        "PARTIALLY_SUPPORTED", "the quote from P1 shares none of the claim's words"
    )


def test_without_a_quote_the_reason_speaks_of_passage_sentences():
    assert quote_shortfall("Students ride free on holidays.", [], quoted=False) == Shortfall(
        "PARTIALLY_SUPPORTED", "no passage sentence shares any of the claim's words")
    shortfall = quote_shortfall("Students ride free on holidays and summer weekends.",
                                [("P1", "Students ride free.")], quoted=False)
    assert shortfall.reason == "no passage sentence says 'holidays', 'summer', 'weekends'"


def test_words_a_quote_lacks_are_no_evidence_against_the_claim():
    # A paraphrase is not a fabrication: the shortfall names the words, but gives no label.
    quote = [("P1", "The pass is sold at every station.")]
    # a converse, not an opposite
    assert quote_shortfall("The pass can be bought at any station.", quote) is None
    shortfall = quote_shortfall("Riders can purchase the pass at any station.", quote)
    assert (
        shortfall.label is None
        and shortfall.lacking == ("Riders", "purchase")
        and 0 < shortfall.coverage < 1
    )
    strict = quote_shortfall(
        "Riders can purchase the pass at any station.", quote, absence_is_evidence=True
    )
    assert strict.label == "PARTIALLY_SUPPORTED"


def test_a_quote_that_copies_the_claim_says_it():
    assert (
        quote_shortfall(
            "Pets are not allowed in the apartments.",
            [("P1", "Pets are not allowed in the apartments")],
        )
        is None
    )


def test_a_quote_with_the_claim_negated_does_not_say_it():
    shortfall = quote_shortfall(
        "Pets are allowed in the apartments.", [("P1", "Pets are not allowed in the apartments.")]
    )
    assert (shortfall.label, shortfall.reason) == ("CONTRADICTED", "P1 says 'not allowed'")


def test_a_quote_sharing_a_few_words_does_not_say_the_claim():
    shortfall = quote_shortfall(
        "Seniors ride free on all buses during holidays.", [("P1", "Children ride free.")]
    )
    assert shortfall.label is None and "'Seniors'" in shortfall.reason
    assert (
        quote_shortfall(
            "Seniors ride free on all buses during holidays.",
            [("P1", "Children ride free.")],
            absence_is_evidence=True,
        ).label
        == "PARTIALLY_SUPPORTED"
    )


def test_a_number_in_a_sentence_about_something_else_contradicts_nothing():
    shortfall = quote_shortfall(
        "Adults pay $2.75 per ride.", [("P1", "Parking at the station costs $5.00 a day.")]
    )
    assert shortfall.label is None


def test_one_quote_that_says_the_claim_is_enough():
    quotes = [
        ("P1", "Bikes are welcome on all buses."),
        ("P2", "Pets are not allowed in the apartments."),
    ]
    assert quote_shortfall("Pets are not allowed in the apartments.", quotes) is None


def test_a_long_quote_is_read_sentence_by_sentence():
    quote = (
        "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card."
        " Children under 5 ride free with a paying adult."
    )
    shortfall = quote_shortfall(
        "Seniors ride free with a paying adult.", [("P1", quote)], minimum=1.0
    )
    assert shortfall is not None and "'Seniors'" in shortfall.reason


def test_a_pair_of_sentences_is_taken_only_when_it_matches_two_words_more_than_the_best_one():
    source = "Seniors pay $1.35 per ride. Children under 5 ride free with a paying adult."
    alignment = align("Seniors ride free with a paying adult.", source)
    assert alignment.source_span == (28, len(source))


# --- roles exchanged and names swapped: hand cases beyond the checklist's generator -------------


@pytest.mark.parametrize(
    "source, claim, shown",
    [
        (
            "The Labour Corps recruited from the British Isles were included.",
            "The British Isles recruited from the Labour Corps were included.",
            "'Labour Corps recruited from the British Isles'",
        ),
        (
            "Jehovah's Witnesses in Buchenwald could not send letters.",
            "Buchenwald in Jehovah's Witnesses could not send letters.",
            "'Jehovah's Witnesses in Buchenwald'",
        ),
        ("Acme acquired Beta in 2001.", "Beta acquired Acme in 2001.", "'Acme acquired Beta'"),
        (
            "The night train runs from Vienna to Rome.",
            "The night train runs from Rome to Vienna.",
            "'Vienna to Rome'",
        ),
        (
            "Lisbon, not Porto, hosted the final.",
            "Porto, not Lisbon, hosted the final.",
            "'Lisbon, not Porto'",
        ),
    ],
)
def test_roles_exchanged_around_the_same_words_are_contradicted(source, claim, shown):
    [difference] = align(claim, source).contradictions
    assert difference.kind == "swap"
    assert shown in difference.explain("P1")


@pytest.mark.parametrize(
    "source, claim",
    [
        ("Acme acquired Beta in 2001.", "Beta was acquired by Acme in 2001."),  # passive
        ("Beta was acquired by Acme in 2001.", "Acme acquired Beta in 2001."),
        # a copula names one thing
        (
            "Paris is the capital of France.",
            "The capital of France is Paris.",
        ),
        ("Tea, coffee and juice are served.", "Juice, coffee and tea are served."),  # a list
        ("Tea, coffee, juice are served.", "Juice, coffee, tea are served."),
        ("The talks between Spain and France ended.", "The talks between France and Spain ended."),
        (
            "Barack Obama, the former president, visited Paris.",
            "The former president, Barack Obama, visited Paris.",
        ),
        (
            "In June 2011 the probe added ten objects to the catalogue.",
            "The probe added ten objects to the catalogue in June 2011.",
        ),
        # a date between the two words places the statement; it has no roles
        (
            "Arbroath were relegated after finishing season 2013-14 bottom of League One.",
            "Arbroath was relegated after finishing bottom of League One in the 2013-14 season.",
        ),
        # "X is a film" told as "a film titled X"
        (
            "Excuse My French is a 2014 Egyptian film Comedy directed by Amr Salama.",
            'A 2014 Egyptian comedy film titled "Excuse My French," directed by Amr Salama.',
        ),
    ],
)
def test_a_reordered_paraphrase_is_no_swap(source, claim):
    assert align(claim, source).contradictions == ()


def test_an_opposite_in_a_long_stretch_of_another_statement_is_no_contradiction():
    source = ("The Judicial order is the first category of common courts (excluding the "
              "Constitutional Court), forming a hierarchy that has the Supreme Court of Justice in "
              "Lisbon as its superior body.")
    claim = (
        "The Judicial Order is the first category of common courts, which includes the Supreme "
        "Court of Justice in Lisbon as its superior body."
    )
    assert align(claim, source).contradictions == ()
    in_the_slot = align("The first category includes the Constitutional Court.",
                        "The first category excludes the Constitutional Court.")
    assert [d.kind for d in in_the_slot.contradictions] == ["opposite"]


@pytest.mark.parametrize("source, claim", [
    ("The TDSB was created in 1998 following the merger of six boards.",
     "The Toronto District School Board was created in 1998 following the merger of six boards."),
    ("The Toronto District School Board was created in 1998.", "The TDSB was created in 1998."),
])
def test_initials_name_the_words_they_stand_for(source, claim):
    assert align(claim, source).contradictions == ()


def test_initials_of_other_words_are_another_name():
    alignment = align("The NHS pays for the scheme.",
                      "The Toronto District School Board pays for the scheme.")
    assert [d.kind for d in alignment.contradictions] == ["entity"]


def test_an_adverb_that_restates_the_tense_is_no_qualifier():
    claim = judged("Championship bottom side St Mirren host Falkirk on Saturday.",
                   "St Mirren, currently bottom of the Championship, host Falkirk on Saturday.")
    assert "currently" not in claim.explanation


def test_a_name_the_sentence_uses_elsewhere_put_in_another_slot_is_contradicted():
    source = (
        "During the campaign for the United States elections, Fox News had the highest ratings."
    )
    alignment = align(
        "During the campaign for the Fox News elections, Fox News had the highest ratings.", source
    )
    assert [d.explain("P1") for d in alignment.contradictions] == [
        "P1 says 'United States' where the claim says 'Fox News'."]


def test_a_name_of_the_neighbouring_sentence_never_fills_a_slot():
    claim = judged(
        "Fengjia Night Market is a night market in Taichung. The market is located next to Feng"
        " Chia University.",
        "The market is located next to Fengjia Night Market.",
    )
    assert claim.label == "CONTRADICTED"
    assert (
        claim.explanation
        == "P1 says 'Feng Chia University' where the claim says 'Fengjia Night Market'."
    )


def test_two_sentences_fused_with_a_name_of_each_stay_supported():
    claim = judged(
        "Fengjia Night Market is a night market in Taichung. The market is located next to Feng"
        " Chia University.",
        "Fengjia Night Market is located next to Feng Chia University.",
    )
    assert claim.label == "SUPPORTED"


def test_a_clause_ending_in_a_swapped_name_is_contradicted():
    claim = judge_offline(
        JudgeRequest(
            passages=[
                {
                    "id": "P1",
                    "text": (
                        "Polycyclic aromatic hydrocarbons (PAHs) are hydrocarbons that consist of"
                        " fused aromatic rings."
                    ),
                },
                {"id": "P2", "text": "Vietnam exports rice."},
            ],
            answer=(
                "Polycyclic aromatic hydrocarbons (Vietnam) are hydrocarbons that consist of fused"
                " aromatic rings."
            ),
        )
    ).claims
    assert "CONTRADICTED" in [c.label for c in claim]


def test_an_apposition_moved_keeps_a_copy_supported():
    claim = judged("Barack Obama, the former president, visited Paris in 2019.",
                   "The former president, Barack Obama, visited Paris in 2019.")
    assert claim.label == "SUPPORTED"


@pytest.mark.parametrize(
    "source, claim, shown",
    [
        (
            "The film will be released in US cinemas on 17 March.",
            "The film will be released in UK cinemas on 17 March.",
            "P1 says 'US' where the claim says 'UK'.",
        ),
        (
            "Scooby-Doo was first broadcast on CBS in 1969.",
            "Hanna-Barbera was first broadcast on CBS in 1969.",
            "P1 says 'Scooby-Doo' where the claim says 'Hanna-Barbera'.",
        ),
        (
            (
                "Thailand is home to 63 million people, and Buddhism is central to the identity of"
                " Thailand."
            ),
            (
                "Buddhist is home to 63 million people, and Buddhism is central to the identity of"
                " Thailand."
            ),
            "P1 says 'Thailand' where the claim says 'Buddhist'.",
        ),
    ],
)
def test_a_name_written_as_one_elsewhere_swapped_is_contradicted(source, claim, shown):
    assert [d.explain("P1") for d in align(claim, source).contradictions] == [shown]


def test_a_pronoun_us_is_no_name():
    assert (
        align(
            "The staff will call us within a day.", "The staff will call us within a day."
        ).differences
        == ()
    )
    assert (
        align(
            "The staff will call you within a day.", "The staff will call us within a day."
        ).contradictions
        == ()
    )


def test_a_common_noun_named_from_the_sentence_before_stays_supported():
    claim = judged("The Middle Ages saw the Hundred Years' War between England and France. "
                   "The war began in 1337 when the king of France laid claim to Gascony.",
                   "The Hundred Years' War began in 1337.")
    assert claim.label == "SUPPORTED"


# --- lowercased text: a name no passage has, in a slot (issue 27)
# ------------------------------------

MACAQUES = (
    "macaques at jigokudani monkey park are notable for visiting the hot springs in the winter . "
    "wilk started his career with greta in 1990 ."
)


def _passages_have(text: str):
    from judges.text import stems
    found = stems(text)
    return lambda word_stem: word_stem in found


def test_in_lowercased_text_a_name_no_passage_has_in_a_slot_is_evidence():
    claim = (
        "macaques at london stock exchange are notable for visiting the hot springs in the winter ."
    )
    shortfall = quote_shortfall(claim, [("P1", MACAQUES)], passages_have=_passages_have(MACAQUES))
    assert shortfall is not None and shortfall.label == "PARTIALLY_SUPPORTED"
    assert (
        shortfall.reason
        == "P1 says 'jigokudani monkey park' where the claim says 'london stock exchange'"
    )
    # Without the passages' words to read novelty by, the quote holds enough of it to say it.
    assert quote_shortfall(claim, [("P1", MACAQUES)]) is None


def test_in_lowercased_text_a_slot_that_held_a_name_reads_a_new_word_there_as_another_name():
    claim = "wilk started his career with national grid in 1990 ."  # "greta": a name WordNet lacks
    shortfall = quote_shortfall(claim, [("P1", MACAQUES)], passages_have=_passages_have(MACAQUES))
    assert shortfall is not None and shortfall.label == "PARTIALLY_SUPPORTED", shortfall


@pytest.mark.parametrize(
    "claim",
    [
        # a pronoun for the name: the words are the writer's own
        "he began his career with greta in 1990 .",
        (
            "macaques at jigokudani monkey park are famous for visiting the hot springs in the"
            " winter ."
        ),
        "wilk started his career with greta in 1990 .",
    ],
)
def test_in_lowercased_text_new_wording_is_no_evidence(claim):
    shortfall = quote_shortfall(claim, [("P1", MACAQUES)], passages_have=_passages_have(MACAQUES))
    assert shortfall is None or shortfall.label is None, shortfall


def test_in_cased_text_a_new_word_in_a_slot_is_no_evidence():
    source = "Locke will speak at a press conference on Friday."
    claim = "Locke will address the Kilmarnock media at a press conference on Friday."
    shortfall = quote_shortfall(claim, [("P1", source)], passages_have=_passages_have(source))
    assert shortfall is None or shortfall.label is None, shortfall


def test_a_year_range_written_short_names_its_full_years():
    source = "Wilk drummed for Rage Against the Machine (1991–2000, 2007–11)."
    assert (
        quote_shortfall(
            "Wilk drummed for Rage Against the Machine from 2007 to 2011.", [("P1", source)]
        )
        is None
    )
    shortfall = quote_shortfall(
        "Wilk drummed for Rage Against the Machine from 2007 to 2012.", [("P1", source)]
    )
    assert shortfall is not None and shortfall.label == "CONTRADICTED", shortfall
    # A month after a year ("2010-05") or a digit after a dash is no range.
    assert [t.norm for t in tokens("in 2010-05 and 1998 - 2") if t.kind == "number"] == [
        "2010",
        "5",
        "1998",
        "2",
    ]
