"""Calibration: judge-versus-human agreement, misses on the audit sample, rates over time, drift."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reviewapp.labels import calibration
from reviewapp.labels.calibration import (
    cohen_kappa,
    confusion_matrix,
    drift,
    flag_precision_recall,
    line_chart,
    raw_agreement,
)
from tests import factories as make

S, P, C, U = "SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"

# --- pure functions, hand-computed ---------------------------------------------------------------


def test_the_confusion_matrix_has_judge_labels_as_rows_and_human_labels_as_columns():
    matrix = confusion_matrix({(S, S): 20, (S, U): 5, (U, S): 10, (U, U): 15})
    assert matrix == [[20, 0, 0, 5], [0, 0, 0, 0], [0, 0, 0, 0], [10, 0, 0, 15]]


def test_kappa_and_flag_precision_recall_match_a_hand_computed_two_label_case():
    # po = 35/50 = 0.7; judge marginals .5/.5, human .6/.4, so pe = .3 + .2 = .5; kappa = .2/.5 = .4
    matrix = confusion_matrix({(S, S): 20, (S, U): 5, (U, S): 10, (U, U): 15})
    assert raw_agreement(matrix) == pytest.approx(0.7)
    assert cohen_kappa(matrix) == pytest.approx(0.4)
    # flagged by the judge: 25, of which humans flagged 15 -> precision .6; humans flagged 20, judge
    # caught 15 -> .75
    figures = flag_precision_recall(matrix)
    assert (figures["precision"], figures["recall"]) == (pytest.approx(0.6), pytest.approx(0.75))


def test_kappa_matches_a_hand_computed_four_label_case():
    # n = 25, diagonal 10 + 5 + 4 = 19; judge rows S 12, P 6, C 4, U 3; human columns S 13, P 7, C
    # 5, U 0 pe = (12*13 + 6*7 + 4*5 + 3*0) / 625 = 218/625; kappa = (475 - 218) / (625 - 218) =
    # 257/407
    matrix = confusion_matrix({(S, S): 10, (S, P): 2, (P, P): 5, (P, C): 1, (C, C): 4, (U, S): 3})
    assert cohen_kappa(matrix) == pytest.approx(257 / 407)
    assert raw_agreement(matrix) == pytest.approx(19 / 25)


def test_kappa_is_one_for_perfect_agreement_and_undefined_without_data_or_variety():
    assert cohen_kappa(confusion_matrix({(S, S): 3, (U, U): 2, (C, C): 1})) == pytest.approx(1.0)
    assert cohen_kappa(confusion_matrix({})) is None
    assert cohen_kappa(confusion_matrix({(S, S): 7})) is None  # chance agreement is already 1


def test_drift_alerts_outside_mean_plus_minus_two_sd_and_needs_three_weeks():
    history = [0.80, 0.82, 0.79, 0.81]
    assert drift("pass rate", 0.50, history).status == "alert"
    assert drift("pass rate", 0.80, history).status == "ok"
    assert drift("pass rate", 0.50, history[:2]).status == "not enough history"
    assert drift("pass rate", None, history).status == "no data this week"
    steady = drift("pass rate", 0.81, [0.8, 0.8, 0.8])  # sd 0 would make any wobble an alert
    assert steady.status == "ok"


def test_a_chart_is_geometry_from_numbers_and_a_missing_value_breaks_the_line():
    chart = line_chart("t", ["a", "b", "c", "d"], [("pass rate", [1.0, 0.0, None, 0.5])])
    [line] = chart.lines
    top, bottom = calibration.PAD_TOP, calibration.CHART_H - calibration.PAD_BOTTOM
    assert line["segments"][0].split() == [
        f"{calibration.PAD_LEFT}.0,{top}.0",
        f"{line['dots'][1][0]},{bottom}.0",
    ]
    assert len(line["segments"]) == 2 and len(line["dots"]) == 3
    assert line["dots"][2][2] == "d: 50%"


# --- the page ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_calibration_is_for_admins_strangers_sign_in_reviewers_get_403(client):
    response = client.get("/calibration/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(make.user("rita", "reviewer"))
    assert client.get("/calibration/").status_code == 403
    client.force_login(make.admin())
    assert client.get("/calibration/").status_code == 200


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.django_db
def test_the_page_shows_agreement_per_judge_with_its_matrix_charts_and_number_tables(client):
    rita = make.user("rita", "reviewer")
    for judge, human in [(U, U), (U, S), (S, S), (C, C)]:
        make.claim(make.answer(), judge, human, reviewer=rita, quote=("$1.00", "exact"))
    make.claim(make.answer(version="v2"), U, U, reviewer=rita, quote=("made up", "not_found"))
    make.claim(make.answer(), U)  # undecided: not counted
    client.force_login(make.admin())
    html = client.get("/calibration/").content.decode()
    text = _text(html)
    assert html.count("<svg viewBox") == 3 and "<polyline" in html and "<circle" in html
    # claim_audit@v1: 4 claims, 3 agree; kappa: po .75, pe (2*1 + 1*2 + 1*1)/16 = 5/16 ->
    # (12-5)/(16-5) = 7/11
    assert (
        "claim_audit@v1 · gpt-4o-mini 4 0.0% (0 of 4) 75.0% 0.64 66.7% 100.0% 0.0% (0 of 4)" in text
    )
    assert (
        "claim_audit@v2 · gpt-4o-mini 1 0.0% (0 of 1) 100.0%" in text and "100.0% (1 of 1)" in text
    )
    assert "UNSUPPORTED 1 0 0 1" in text  # the v1 matrix's UNSUPPORTED row
    today = timezone.now().date()
    assert f"{today:%Y-%m-%d} 6 0 0.0% 6 100.0%" in text  # the daily table: 6 judged, all to review


@pytest.mark.django_db
def test_claims_accepted_in_bulk_are_left_out_of_agreement_and_their_share_is_shown(client):
    rita = make.user("rita", "reviewer")
    for judge, human in [(U, U), (U, S), (S, C)]:
        make.claim(make.answer(), judge, human, reviewer=rita)
    for _ in range(5):  # "Confirm the rest & finish" on SUPPORTED claims nobody read
        make.claim(make.answer(), S, S, reviewer=rita, mode="bulk")
    [row] = calibration.judge_agreement(calibration.audit_misses())
    assert (row["claims"], row["bulk"]) == (3, {"claims": 5, "share": 5 / 8})
    # counted as agreement, the bulk ones made it 6 / 8
    assert row["agreement"] == pytest.approx(1 / 3)
    # po 1/3; pe: judge (2 U, 1 S) x human (1 U, 1 S, 1 C) = (2*1 + 1*1) / 9 -> (3 - 3) / (9 - 3) =
    # 0
    assert row["kappa"] == pytest.approx(0.0)
    assert row["flag"]["precision"] == pytest.approx(0.5)
    client.force_login(make.admin())
    assert "claim_audit@v1 · gpt-4o-mini 3 62.5% (5 of 8) 33.3% 0.00" in _text(
        client.get("/calibration/").content.decode()
    )


@pytest.mark.django_db
def test_the_false_negative_rate_counts_audit_answers_with_a_human_flag_or_an_added_claim():
    rita = make.user("rita", "reviewer")
    clean, overturned, added = (make.answer(routing_reason="audit sample") for _ in range(3))
    make.claim(clean, S, S, reviewer=rita)
    make.claim(overturned, S, C, reviewer=rita)
    make.claim(added, S, S, reviewer=rita)
    make.claim(added, U, U, reviewer=rita, origin="reviewer", span=(19, 47))
    make.claim(make.answer(), S, C, reviewer=rita)  # not in the audit sample
    audit = calibration.audit_misses()
    assert (audit["answers"], audit["missed"], audit["rate"]) == (3, 2, pytest.approx(2 / 3))


@pytest.mark.django_db
def test_a_drop_in_this_weeks_pass_rate_raises_a_drift_alert(client):
    now = timezone.now()
    for weeks_ago in range(1, 6):
        for n in range(10):  # 9 of 10 passed, every earlier week
            make.answer(review_status="auto_passed" if n < 9 else "in_review", routing_reason="",
                        judged_at=now - timedelta(weeks=weeks_ago))
    for n in range(10):  # this week: 2 of 10
        make.answer(
            review_status="auto_passed" if n < 2 else "in_review", routing_reason="", judged_at=now
        )
    client.force_login(make.admin())
    text = _text(client.get("/calibration/").content.decode())
    assert "Drift alert: this week's pass rate is 20.0%, outside its band" in text
    assert "Raw agreement: no data this week" in text


@pytest.mark.django_db
def test_with_under_three_weeks_of_history_the_page_says_so(client):
    now = timezone.now()
    make.answer(review_status="auto_passed", judged_at=now - timedelta(weeks=1))
    make.answer(review_status="auto_passed", judged_at=now)
    client.force_login(make.admin())
    text = _text(client.get("/calibration/").content.decode())
    assert (
        "Pass rate 100.0%: not enough history for a band (1 earlier week with data; needs 3)"
        in text
    )


@pytest.mark.django_db
def test_the_page_reuses_its_figures_for_the_cache_ttl_and_says_when_they_were_computed(
    client, settings
):
    settings.CALIBRATION_CACHE_SECONDS = 60
    rita = make.user("rita", "reviewer")
    make.claim(make.answer(), U, U, reviewer=rita)
    client.force_login(make.admin())
    first = _text(client.get("/calibration/").content.decode())
    assert (
        "claim_audit@v1 · gpt-4o-mini 1 0.0% (0 of 1) 100.0%" in first
        and "recomputed at most every 60 s" in first
    )
    make.claim(make.answer(), U, S, reviewer=rita)
    # within the TTL: same figures
    assert _text(client.get("/calibration/").content.decode()) == first
    settings.CALIBRATION_CACHE_SECONDS = 0  # off: computed on every view
    fresh = _text(client.get("/calibration/").content.decode())
    assert (
        "claim_audit@v1 · gpt-4o-mini 2 0.0% (0 of 2) 50.0%" in fresh
        and "recomputed at most" not in fresh
    )


@pytest.mark.django_db
def test_figures_past_their_ttl_are_shown_while_one_viewer_recomputes_them(
    client, settings, monkeypatch
):
    settings.CALIBRATION_CACHE_SECONDS = 60
    client.force_login(make.admin())
    old = calibration.cached_calibration_page()
    aged = old | {"computed_at": old["computed_at"] - timedelta(seconds=61)}
    calibration.cache.set(calibration.CACHE_KEY, aged, 600)
    # Another viewer has the turn: this one is shown the older figures at once, not made to wait.
    calibration.cache.add(f"{calibration.CACHE_KEY}:recomputing", True, 120)
    monkeypatch.setattr(calibration, "calibration_page", lambda: pytest.fail("recomputed twice"))
    assert calibration.cached_calibration_page()["computed_at"] == aged["computed_at"]
    assert "Figures as of" in client.get("/calibration/").content.decode()
    # The turn is free: this viewer recomputes, and frees it.
    calibration.cache.delete(f"{calibration.CACHE_KEY}:recomputing")
    monkeypatch.undo()
    fresh = calibration.cached_calibration_page()
    assert fresh["computed_at"] > aged["computed_at"]
    assert calibration.cache.get(calibration.CACHE_KEY)["computed_at"] == fresh["computed_at"]
    assert calibration.cache.add(f"{calibration.CACHE_KEY}:recomputing", True, 1)  # freed
