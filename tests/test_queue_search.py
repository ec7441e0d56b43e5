"""The queue's search on Postgres: every word, in the question or the answer, the last one by its
start as it is being typed (the full-text index of migration 0012). What it finds and what it no
longer finds."""

from __future__ import annotations

import pytest
from django.db import connection

from reviewapp.review import selectors
from reviewapp.models import Answer

pytestmark = pytest.mark.django_db

FARE = (
    "Riders aged 65 and older pay a reduced fare of $1.00 per ride with a valid card, as Sec. 4.2"
    " says."
)


def waiting(question: str = "How much does a ride cost?", answer: str = FARE, **fields) -> Answer:
    defaults = {"status": "judged", "review_status": "in_review", "priority": 100}
    return Answer.objects.create(question=question, answer=answer, **(defaults | fields))


def found(text: str, user) -> set[int]:
    rows, _ = selectors.queue_page(
        selectors.queue_answers(filters=selectors.QueueFilters(q=text), user=user)
    )
    return {row.pk for row in rows}


def test_the_search_runs_on_the_full_text_index():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'answer_search_document'")
        assert "gin (search_document)" in cursor.fetchone()[0]


def test_a_word_is_found_in_the_question_or_the_answer_whatever_its_case(rita):
    bicycle = waiting(question="Is there a BICYCLE fare?")
    in_answer = waiting(answer="Bicycles ride free on weekends.")
    other = waiting()
    assert found("bicycle", rita) == {bicycle.pk, in_answer.pk}
    assert found("Bicycle", rita) == found("BICYCLE", rita) == {bicycle.pk, in_answer.pk}
    assert other.pk in found("reduced", rita)


def test_a_word_is_found_by_its_start_as_it_is_typed(rita):
    bicycle = waiting(question="Is there a bicycle fare?")
    for typed in ("bi", "bic", "bicyc", "bicycle"):
        assert bicycle.pk in found(typed, rita), typed
    assert found("bicycles", rita) == set()  # longer than the word: not a start of it


def test_one_letter_matches_a_whole_word_not_every_word_it_starts(rita):
    # 'b':* would hold nearly every answer: the index would read them all to find nothing useful.
    bicycle = waiting(question="Is there a bicycle fare?")
    plan_b = waiting(question="What is plan b for late buses?")
    late = waiting(question="Why was my train late?")
    assert found("b", rita) == {plan_b.pk}
    # Typed after other words it waits for its next letter; the words before it still count.
    assert found("late b", rita) == {plan_b.pk, late.pk} and bicycle.pk not in found("late b", rita)
    assert found("late bu", rita) == {plan_b.pk}


def test_the_word_being_typed_matches_by_its_start_the_earlier_ones_whole(rita):
    answer = waiting(question="Is there a bicycle fare?", answer="Send an e-mail to the agency.")
    assert answer.pk in found("bicycle fa", rita)
    assert answer.pk in found("fare bicyc", rita)
    # as the substring search: "bicyc fare" is not in the text
    assert found("bicyc fare", rita) == set()
    for typed in ("e-", "e-m", "e-ma", "e-mail", "an e-ma", "e-mail to the ag"):
        assert answer.pk in found(typed, rita), typed


def test_several_words_must_all_be_there_in_any_order_and_field(rita):
    both = waiting(question="Is there a bicycle fare?", answer="Weekends only.")
    split = waiting(question="Bicycle?", answer="They ride free on weekends.")
    plural = waiting(question="Bicycles on weekends?", answer="Yes.")
    one = waiting(question="Is there a bicycle fare?", answer="No.")
    assert found("bicycle weekends", rita) == {both.pk, split.pk}
    # the last word by its start
    assert found("weekends bicycle", rita) == {
        both.pk,
        split.pk,
        plural.pk,
    }
    assert found("bicycle fare", rita) == {both.pk, one.pk}
    assert found("bicycle ferry", rita) == set()


def test_numbers_prices_and_sections_are_found_as_written(rita):
    answer = waiting()
    other = waiting(answer="Seniors pay $2.50 per ride, as Sec. 7 says.")
    assert found("$1.00", rita) == {answer.pk}
    assert found("1.00 per ride", rita) == {answer.pk}
    assert found("Sec. 4.2", rita) == {answer.pk}
    assert found("$2.5", rita) == {other.pk}
    assert found("65", rita) == {answer.pk}


def test_what_the_substring_search_found_and_this_one_does_not(rita):
    # The change of 0012, on purpose: a piece from the middle of a word no longer matches (the
    # index holds words); the start of a word still does.
    waiting(question="Is there a bicycle fare?")
    assert found("icycle", rita) == set()
    assert found("educed", rita) == set()


def test_text_without_a_word_finds_nothing_and_query_syntax_is_plain_text(rita):
    answer = waiting(answer="O'Brien said the fare is 50% off: a & b | !c (d) <-> e:* \\ f.")
    assert found("?!", rita) == set()
    for text in ("O'Brien", "o'brien 50%", "a & b", "b | !c", "(d)", "e:*", "\\ f", "<-> e"):
        assert answer.pk in found(text, rita), text
    assert found("O'Connor", rita) == set()


def test_an_edited_answer_is_found_by_its_new_words(rita):
    answer = waiting()
    assert found("trolleybus", rita) == set()
    Answer.objects.filter(pk=answer.pk).update(answer="The trolleybus fare is $2.00.")
    assert found("trolleybus", rita) == {answer.pk}
    assert found("reduced", rita) == set()


def test_only_answers_in_review_are_searched(rita):
    waiting(question="Bicycle?", review_status="auto_passed")
    waiting(question="Bicycle?", review_status="done")
    assert found("bicycle", rita) == set()


def test_search_pages_by_keyset_in_queue_order(rita):
    matching = [waiting(question=f"Bicycle rule {n}?", priority=300 - n) for n in range(55)]
    for n in range(10):
        waiting(question=f"Ferry rule {n}?", priority=400)
    query = selectors.queue_answers(filters=selectors.QueueFilters(q="bicycle rule"), user=rita)
    first, cursor = selectors.queue_page(query)
    second, last = selectors.queue_page(query, after=cursor)
    assert [a.pk for a in first + second] == [a.pk for a in matching] and last == ""


def test_the_queue_page_and_start_reviewing_use_the_search(client, rita):
    bicycle = waiting(question="Is there a bicycle fare?", priority=100)
    ferry = waiting(question="Is there a ferry fare?", priority=300)
    client.force_login(rita)
    body = client.get("/queue/?q=bicyc").content.decode()
    assert f"/review/{bicycle.pk}/" in body and f"/review/{ferry.pk}/" not in body
    assert client.get("/queue/?q=%27%22%5C%26").status_code == 200  # ' " \ &: no syntax error
    response = client.post("/queue/next?q=bicycle")
    assert response.status_code == 302 and response["Location"] == f"/review/{bicycle.pk}/"
    bicycle.refresh_from_db()
    assert bicycle.lease_holder == rita
    # Blank search (the view strips it): the whole queue.
    body = client.get("/queue/?q=+++").content.decode()
    assert f"/review/{ferry.pk}/" in body


@pytest.mark.parametrize("few", [0, 2, 200])
def test_few_or_many_answers_with_the_whole_words_find_the_same(rita, monkeypatch, few):
    # Past SEARCH_FEW answers holding the whole words the index runs the whole query; below, the
    # few are checked one by one. Either way the same answers.
    monkeypatch.setattr(selectors, "SEARCH_FEW", few)
    fares = [waiting(question=f"Ride {n} fare?", answer="Ask the agency.") for n in range(4)]
    waiting(question="Ride fee?", answer="Ask the agency.")
    waiting(question="Bus fare?", answer="Ask the agency.")
    assert found("ride fa", rita) == {a.pk for a in fares}
    assert found("ride 2 fa", rita) == {fares[2].pk}
    assert found("agency ride fa", rita) == {a.pk for a in fares}
    assert found("ride bicyc", rita) == set()
