"""/policy/'s load-versus-catch curve and /calibration/'s miss rate in a real browser (Chromium):
drawn under the page's CSP, choosing a catch fills the threshold, nothing axe calls serious."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from reviewapp.models import Policy
from tests import factories as make
from tests.conftest import CHROMIUM
from tests.test_browser import _sign_in, page  # noqa: F401  (a fixture)
from tests.test_miss_rate import (  # noqa: F401  (a fixture; its two audits: one miss of two)
    curve_case,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
]


def test_choosing_a_catch_on_the_drawn_curve_fills_the_threshold_and_axe_finds_nothing_serious(
        page, live_server, curve_case):  # noqa: F811
    from axe_playwright_python.sync_playwright import Axe

    admins = Group.objects.get_or_create(name="admin")[0]
    get_user_model().objects.get(username="rita").groups.add(admins)
    make.next_policy(miss_rate_target=0.02, note="2%")
    _sign_in(page, "/policy/")
    page.wait_for_url("**/policy/")
    chart = page.locator("#curve svg[role=img]")
    assert chart.locator("polyline").count() == 3  # load, catch, precision, each one unbroken line
    assert page.locator("#miss-rate-alert").inner_text().startswith("Above the target of 2.0%")
    page.fill("#choose-threshold input[name=catch]", "60")
    with page.expect_navigation():
        page.press("#choose-threshold input[name=catch]", "Enter")
    assert "threshold 0.62" in page.locator("#chosen-threshold").inner_text()
    assert page.locator("input[name=score_threshold]").input_value() == "0.62"
    found = {}
    for url in ("/policy/?catch=60", "/calibration/"):
        page.goto(url)
        violations = Axe().run(page).response["violations"]
        found[url] = [(v["id"], [n["target"] for n in v["nodes"]]) for v in violations
                      if v["impact"] in ("serious", "critical")]
    assert found == {url: [] for url in found}, found
    assert page.js_errors == []
    assert Policy.current().score_threshold == 0.95  # choosing saves nothing
