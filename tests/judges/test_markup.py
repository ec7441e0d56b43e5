"""judges.markup blanks markup in place: same length, line breaks kept, the text's words
untouched."""

from hypothesis import given
from hypothesis import strategies as st

from judges.markup import plain_view


def test_markup_is_blanked_and_the_words_stay_where_they_were():
    text = (
        "# Fares\n- **Adults** pay <b>$2.75</b> [P1], see"
        " [policy](https://x.example/a_b)\n```py\n```"
    )
    view = plain_view(text)
    assert view.split() == ["Fares", "Adults", "pay", "$2.75", "[P1],", "see", "policy"]
    assert [i for i, c in enumerate(view) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]


def test_words_with_inner_underscores_dashes_and_arithmetic_are_not_markup():
    text = "Use snake_case names, e-readers and 3 - 2 = 1; *not* a_b."
    assert plain_view(text) == "Use snake_case names, e-readers and 3 - 2 = 1;  not  a_b."


def test_an_html_comment_over_lines_is_blanked_whole():
    assert plain_view("Fare <!-- ignore\nthis -->is $2.").split() == ["Fare", "is", "$2."]


@given(st.text(alphabet="ab *_#-<>/[]()`\n!~P1", max_size=60))
def test_the_view_has_the_texts_length_and_line_breaks_and_only_blanks(text):
    view = plain_view(text)
    assert len(view) == len(text)
    assert all(v == t or (v == " " and t not in "\r\n") for v, t in zip(view, text))


def test_a_lead_in_ends_in_a_colon_and_counts_nothing():
    from judges.markup import is_lead_in
    assert is_lead_in("Key points include:") and is_lead_in("Here is what the policy says:  ")
    assert not is_lead_in("The fare rose to $3: a record.")  # the colon does not end it
    assert not is_lead_in("The fare is $2.75 on these lines:")  # a quantity is a claim of its own
