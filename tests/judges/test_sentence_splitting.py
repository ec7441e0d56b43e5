from judges.text import split_sentences


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


def test_it_splits_prose_into_sentences_without_surrounding_whitespace():
    text = "  The fare is $2.75.  Seniors pay $1.35. Children ride free.\n"
    assert sentences(text) == ["The fare is $2.75.", "Seniors pay $1.35.", "Children ride free."]


def test_it_does_not_split_after_abbreviations_or_inside_prices():
    text = "See Sec. 4.2 of the tariff, e.g. the table. The fare is $2.75 per ride. Dr. Lee agrees."
    assert sentences(text) == [
        "See Sec. 4.2 of the tariff, e.g. the table.",
        "The fare is $2.75 per ride.",
        "Dr. Lee agrees.",
    ]


def test_each_list_item_on_its_own_line_is_its_own_sentence():
    text = "Fares:\n- Adults pay $2.75\n- Seniors pay $1.35\n\n1. Tap your card\nAsk the agency."
    assert sentences(text) == [
        "Fares:",
        "- Adults pay $2.75",
        "- Seniors pay $1.35",
        "1. Tap your card",
        "Ask the agency.",
    ]


def test_blank_text_has_no_sentences():
    assert split_sentences("") == []
    assert split_sentences("  \n\t \r\n") == []


def test_repeated_sentences_each_get_their_own_span():
    assert split_sentences("Yes. Yes. Yes.") == [(0, 4), (5, 9), (10, 14)]


def test_spans_are_inside_the_text_in_order_and_cover_every_word():
    texts = [
        "No final punctuation here",
        'He said "the fare is $3." Then he left... Really?! Yes',
        "U.S. riders pay at 5 p.m. daily.\r\nWindows line end. Tab\tinside.",
        "Same. Same.\n\nSame.   Same",
        "“Curly quotes.” ‘Single ones.’ (Parenthetical. Still.) Done.",
    ]
    for text in texts:
        spans = split_sentences(text)
        previous_end = 0
        for start, end in spans:
            assert previous_end <= start < end <= len(text)
            assert text[start:end] == text[start:end].strip()
            previous_end = end
        covered = "".join(text[start:end] for start, end in spans)
        assert "".join(covered.split()) == "".join(text.split())  # no word left out


def test_it_is_deterministic():
    text = "The fare is $2.75. See Sec. 4.2.\n- Seniors pay $1.35\nAsk."
    assert split_sentences(text) == split_sentences(text) == split_sentences(str(text))


def test_times_abbreviations_numbers_and_versions_stay_inside_their_sentence():
    cases = {
        "The office opens at 9 a.m. and closes at 5 p.m. on weekdays. Riders may call.": 2,
        "Bring ID, e.g. a passport. Children, i.e. riders under 12, ride free.": 2,
        "Take bus No. 5 to the U.S. border. Dr. Lee drives it.": 2,
        "Fares rose 3.5 percent in version 2.1.3 of the rules. Upgrade to v4.0.1 first.": 2,
        "Service starts at 6 a.m. Riders must tap in.": 2,
    }
    for text, count in cases.items():
        assert len(sentences(text)) == count, sentences(text)


def test_an_abbreviation_pysbd_does_not_know_does_not_end_the_sentence():
    assert sentences("Valid for 30 days, incl. weekends. Buy online.") == [
        "Valid for 30 days, incl. weekends.", "Buy online."]
    assert sentences("See Fig. 3 and Tab. 2. Done.") == ["See Fig. 3 and Tab. 2.", "Done."]
    assert sentences("Open Mon.-Fri. 9 a.m. to 5 p.m. Closed on holidays.") == [
        "Open Mon.-Fri. 9 a.m. to 5 p.m.", "Closed on holidays."]


def test_a_sentence_opening_with_a_number_or_a_capital_still_starts_a_sentence():
    assert sentences("It opened in 1950 under a new system. 26 January was chosen.") == [
        "It opened in 1950 under a new system.", "26 January was chosen."]
    assert sentences("The fee is 3. 5 people paid.") == ["The fee is 3.", "5 people paid."]
    assert sentences("Buses run every 10 min. Trains run hourly.") == [
        "Buses run every 10 min.", "Trains run hourly."]


def test_lowercase_text_is_still_split_at_its_sentence_ends():
    assert sentences("the bus is late. we wait here.") == ["the bus is late.", "we wait here."]
