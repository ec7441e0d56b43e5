from judges.text import content_words, key_terms, number_values, numbers


def values(text: str) -> list[str]:
    return [mention.value for mention in numbers(text)]


def test_every_way_of_writing_eighty_six_dollars_is_the_same_number():
    assert values("$86, 86.00, 86 dollars, $86.00 and 86") == ["86"] * 5


def test_prices_keep_their_cents():
    assert values("$2.75 and 2.75 and $1.35") == ["2.75", "2.75", "1.35"]


def test_cents_are_counted_in_dollars():
    assert values("50 cents") == values("$0.50") == ["0.5"]


def test_thousands_separators_are_ignored():
    assert values("1,500 riders") == values("1500 riders") == ["1500"]


def test_percentages_ages_ordinals_and_years_are_numbers():
    assert values("50% off for riders 65+ from the 1st of June 2026") == ["50", "65", "1", "2026"]


def test_citation_markers_and_identifiers_are_not_numbers():
    assert values("Seniors pay less [P2] [3, 4] in zone P2 per rule c1 and COVID19") == []


def test_a_number_mention_points_at_what_the_answer_wrote():
    text = "Weekend passes cost $10.00 or 15% less."
    mentions = numbers(text)
    assert [text[slice(*mention.span)] for mention in mentions] == ["$10.00", "15%"]
    assert [mention.text for mention in mentions] == ["$10.00", "15%"]
    assert mentions[0].is_money and mentions[1].is_percent


def test_a_four_digit_amount_of_money_is_not_a_year():
    year, money = numbers("In 2026 it costs $2026.")
    assert year.looks_like_year and not money.looks_like_year


def test_content_words_are_lowercase_without_stopwords_punctuation_or_plurals():
    assert content_words("The Seniors' passes: riders don't pay fees for policies!") == [
        "senior", "pass", "rider", "pay", "fee", "policy",
    ]


def test_key_terms_combine_words_and_normalized_numbers():
    assert key_terms("Seniors pay $1.35.") == {"senior", "pay", "1.35"}
    assert number_values("$86 or 86.00") == {"86"}


def test_a_lowercase_month_with_its_day_or_year_is_a_date_but_the_verb_may_is_not():
    from judges.text import quantities
    assert [(q.text, q.value) for q in quantities("played on january 4 , 2000 , at home")] == [
        ("january 4 , 2000", "2000-01-04")]
    assert [(q.text, q.value) for q in quantities("born on 16 september in meath")] == [
        ("16 september", "--09-16")
    ]
    assert [q.value for q in quantities("you may 5 times ride")] == ["5"]
    assert [(q.text, q.value) for q in quantities("on may 30 , 2012 , it won")] == [
        ("may 30 , 2012", "2012-05-30")
    ]
