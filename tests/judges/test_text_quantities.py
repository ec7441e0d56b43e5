"""judges.text.quantities / quantity_values: dates, times and number words on top of `numbers`."""

import pytest

from judges.text import numbers, quantities, quantity_values


def values(text: str) -> list[str]:
    return [q.value for q in quantities(text)]


def texts(text: str) -> list[str]:
    return [q.text for q in quantities(text)]


@pytest.mark.parametrize(
    "written",
    ["January 5, 2027", "Jan. 5, 2027", "Jan 5 2027", "January 5th, 2027", "5 January 2027",
     "5th of January, 2027", "2027-01-05", "1/5/2027", "01/05/2027", "2027-01-05T09:30:00Z"],
)
def test_every_way_of_writing_a_date_is_one_iso_token(written):
    [quantity] = quantities(f"It starts on {written}.")
    assert quantity.value == "2027-01-05"
    assert quantity.text == written
    assert quantity.is_date and quantity.kind == "date"


def test_month_and_year_month_and_day_and_bare_years():
    assert values("In July 2026, by June 30, since 2019.") == ["2026-07", "--06-30", "2019"]
    assert [q.kind for q in quantities("In July 2026, by June 30, since 2019.")] == ["date"] * 3


def test_an_impossible_date_is_not_a_date():
    assert values("on 2/30/2027") == ["2", "30", "2027"]


def test_may_the_verb_is_not_a_month():
    assert values("Riders may 5 times transfer.") == ["5"]


def test_a_date_span_points_at_what_the_answer_wrote():
    text = "Fares change on Jan. 5, 2027 and again in March 2028."
    for quantity in quantities(text):
        assert text[slice(*quantity.span)] == quantity.text
    assert texts(text) == ["Jan. 5, 2027", "March 2028"]


@pytest.mark.parametrize(
    ("written", "value"),
    [("8:00 a.m.", "08:00"), ("8 a.m.", "08:00"), ("5:00 p.m.", "17:00"), ("5 PM", "17:00"),
     ("12:30 pm", "12:30"), ("12 a.m.", "00:00"), ("17:00", "17:00")],
)
def test_clock_times_are_one_token_in_24_hours(written, value):
    [quantity] = quantities(f"Open until {written} daily")
    assert (quantity.value, quantity.text, quantity.kind) == (value, written, "time")


def test_number_words_that_count_something_are_numbers():
    assert values("fifty percent off for fourteen days") == ["50", "14"]
    assert values("valid for five years, three children per adult, twenty-five riders") == [
        "5",
        "3",
        "25",
    ]
    assert values("one hundred dollars") == ["100"]
    assert values("sixty-five and older") == ["65"]
    [percent] = quantities("fifty percent")
    assert percent.is_percent and percent.is_word


def test_number_words_that_count_nothing_are_not_claims():
    assert values("There are two ways to apply, and one of them is online.") == []


def test_passages_offer_every_number_word():
    assert {"1", "7"} <= quantity_values("Trips may be booked one to seven days ahead.")


@pytest.mark.parametrize(
    ("answer", "passage"),
    [
        ("$86", "86.00 dollars"),
        ("1,500 riders", "1500 riders"),
        ("50%", "50 percent"),
        ("50%", "fifty percent"),
        ("fourteen days", "14 days"),
        ("14 days", "fourteen days"),
        ("January 5, 2027", "2027-01-05"),
        ("2027-01-05", "Jan. 5, 2027"),
        ("1/5/2027", "5 January 2027"),
        ("July 2026", "on July 1, 2026"),
        ("2026", "on July 1, 2026"),
        ("June 30", "through June 30, 2027"),
        ("5 p.m.", "5:00 p.m."),
        ("5:00", "5:00 p.m."),
        ("50 cents", "$0.50"),
    ],
)
def test_equivalent_formats_match(answer, passage):
    [quantity] = quantities(answer)
    assert quantity.value in quantity_values(passage)


@pytest.mark.parametrize(
    ("answer", "passage"),
    [("$86", "$68"), ("January 5, 2027", "January 5, 2026"), ("2027-01-05", "July 2027"),
     ("5 p.m.", "5:00 a.m."), ("15 days", "fourteen days")],
)
def test_different_quantities_do_not_match(answer, passage):
    [quantity] = quantities(answer)
    assert quantity.value not in quantity_values(passage)


def test_citation_markers_list_numbers_urls_and_identifiers_are_not_quantities():
    text = (
        "1. Pay $2.75 [P2] [3] (P3)\n2) See https://metro.example/fares/2026/7 or"
        " help@metro.example\n- 3. zone P2"
    )
    assert texts(text) == ["$2.75"]


def test_a_list_number_of_tokenized_text_is_not_a_quantity():
    # CNN/DailyMail's tokenized text writes "1 ." for "1."; a number ending a sentence still counts.
    assert texts("two works :\n1 . the iliad\n2 ) the odyssey , in 24 books .\nit has 12 .") == [
        "24",
        "12",
    ]


def test_numbers_is_unchanged_for_the_offline_judge():
    # `numbers` still reads digits only: the offline judge v1 relies on it.
    assert [m.value for m in numbers("On January 5, 2027 at 8:00")] == ["5", "2027", "8", "0"]
