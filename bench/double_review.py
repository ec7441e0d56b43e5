"""A scripted double review of the demo through the real pages (issue 21's closing note): the flow
with its timings, the agreement figures, and what a lead sees.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench \\
        CELERY_BROKER_URL=redis://127.0.0.1:6379/12 python bench/double_review.py \\
        [--answers N] [--seed S] [--resamples R] [--json [PATH]]

On a database of its own (DATABASE_URL's name + `_double_review`, created and dropped), under a
policy asking two blind reviewers per answer (set before judging, so answers are routed with it),
the demo's answers are ingested and judged in this process by the offline judge (no worker: the
enqueue after ingest is swapped for a list). Three users then work through the pages with Django's
test client, each request timed:

* reviewer A (alice) presses "next", decides every flagged claim by the demo's golden spans (a
  claim overlapping a span marked hallucinated keeps the judge's label, any other is SUPPORTED),
  with a note on each, and finishes; until the queue is empty.
* reviewer B (bob) does the same and follows A, except on every third flagged claim B reaches,
  where B picks another label (seeded random; printed), with a note. B's pages are checked to show
  nothing of A's.
* a lead (lee) opens /adjudication/, and for each answer listed opens it (checked: every claim the
  reviewers disagree on shows both reviewers' labels and notes side by side), takes it, decides
  the disagreeing claims as A did, and finishes.

Keystroke-equivalent actions are counted as the review page's keys would do it (n, j/k to reach a
claim from the one the page selected, c or o + digit, e and Esc around a note, t, f); note text is
counted apart, in characters. Times are server time of each request in this process (no network,
no think time). `--answers N` above 12 adds copies of the demo answers under new external ids.
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import os
import random
import re
import statistics
import sys
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.workload import admin_sql, bench_database_url  # noqa: E402

COMMAND = "python bench/double_review.py"
DEMO = ROOT / "reviewapp" / "demo_data"
# the page's o + 1-4
LABEL_KEYS = (
    "SUPPORTED",
    "PARTIALLY_SUPPORTED",
    "CONTRADICTED",
    "UNSUPPORTED",
)
CLAIM_CARD = re.compile(r'<li class="claim-card label-(\w+)([^"]*)" id="claim-(\d+)"')
PASS_ROW = re.compile(
    r'<tr><td>([^<]*)</td><td><span class="label label-(\w+)">.*?</td><td>([^<]*)</td>'
    r'<td class="untrusted" hx-disable>([^<]*)</td></tr>',
    re.DOTALL,
)
ADJUDICATION_ROW = re.compile(r'<tr>\s*<td><a href="/review/(\d+)/">')


def percentile(values: list[float], share: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(share * len(values)))]


class Session:
    """One signed-in user on the pages: every request timed by its kind, actions counted per
    answer."""

    def __init__(self, user, timings: dict[str, list[float]]):
        from django.test import Client

        self.user, self.timings = user, timings
        self.client = Client(SERVER_NAME="127.0.0.1")
        self.client.force_login(user)
        self.seconds: dict[int, float] = defaultdict(float)  # per answer
        self.actions: dict[int, int] = defaultdict(int)
        self.typed: dict[int, int] = defaultdict(int)

    def request(
        self,
        kind: str,
        method: str,
        url: str,
        answer: int | None = None,
        *,
        htmx: bool = False,
        **data,
    ):
        headers = {"HX-Request": "true"} if htmx else {}
        started = time.perf_counter()
        response = getattr(self.client, method)(url, data or None, headers=headers)
        spent = time.perf_counter() - started
        assert response.status_code in (
            200,
            204,
            302,
        ), f"{method.upper()} {url}: {response.status_code}"
        self.timings[kind].append(spent * 1000)
        if answer is not None:
            self.seconds[answer] += spent
        return response


def cards(page: str) -> list[dict]:
    """The claim cards of a review page (or its htmx panel), in order, with their decide form."""
    found = list(CLAIM_CARD.finditer(page))
    out = []
    for n, match in enumerate(found):
        body = page[match.start(): found[n + 1].start() if n + 1 < len(found) else len(page)]
        version = re.search(r'name="version" value="(\d+)"', body)
        out.append(
            {
                "pk": int(match[3]),
                "label": match[1].upper(),
                "selected": " selected" in match[2],
                "version": int(version[1]) if version else None,
                "body": body,
                "cid": re.search(r"<b>(c?\w+)</b>", body)[1],
            }
        )
    return out


def moves(page: str, target: int) -> int:
    """j/k presses from the claim the page selected to `target`."""
    shown = cards(page)
    order = [c["pk"] for c in shown]
    selected = next((i for i, c in enumerate(shown) if c["selected"]), 0)
    return abs(order.index(target) - selected)


def decide(session: Session, answer: int, page: str, claim: dict, label: str, note: str) -> str:
    """Decide one claim as the page's keys would: move to it, c or o + digit, e + note + Esc."""
    session.actions[answer] += moves(page, claim["pk"]) + (1 if label == claim["label"] else 2)
    if note:
        session.actions[answer] += 2
        session.typed[answer] += len(note)
    choice = {"decision": "confirm"} if label == claim["label"] else {"overturn_to": label}
    url = f"/review/{answer}/claims/{claim['pk']}/decide"
    response = session.request(
        "decide", "post", url, answer, htmx=True, version=claim["version"], note=note, **choice
    )
    return response.content.decode()


def golden_spans() -> dict[str, list[tuple[int, int]]]:
    rows = (
        json.loads(line)
        for line in (DEMO / "golden.jsonl").read_text().splitlines()
        if line.strip()
    )
    return {row["id"]: [(s["start"], s["end"]) for s in row["spans"]] for row in rows}


def load_demo(count: int) -> list[int]:
    """Ingest `count` demo answers (copies past the twelve) and judge them here; their ids."""
    from judges import JudgeRequest
    from reviewapp import enqueue
    from reviewapp.api.clients import api_client_create
    from reviewapp.api.ingest import answer_ingest
    from reviewapp.judging.service import answer_judge

    payloads = json.loads((DEMO / "answers.json").read_text())
    client, _ = api_client_create(name="demo", actor_label="bench")
    queued: list[int] = []
    # The one swap: ingest's enqueue (after commit) lists the answer for this process to judge.
    enqueue.judge_answer_later = queued.append
    for n in range(count):
        payload = dict(payloads[n % len(payloads)])
        if n >= len(payloads):
            payload["external_id"] = f"{payload['external_id']}-copy{n // len(payloads)}"
        answer_ingest(client=client, request=JudgeRequest.model_validate(payload))
    for answer_id in queued:
        answer_judge(answer_id=answer_id)
    return queued


def reviewer_pass(session: Session, rule, seen_by_b: list[str] | None = None) -> list[int]:
    """Press next until the queue is empty; decide each flagged claim by `rule`, finish. Answer
    ids."""
    done = []
    while True:
        response = session.request("next", "post", "/queue/next")
        location = response["Location"]
        if not location.startswith("/review/"):
            return done
        answer = int(location.split("/")[2])
        session.actions[answer] += 1  # n
        page = session.request("page", "get", location, answer).content.decode()
        if seen_by_b is not None:
            seen_by_b.append(page)
        for claim in [c for c in cards(page) if c["label"] != "SUPPORTED"]:
            label, note = rule(answer, claim)
            page = decide(session, answer, page, claim, label, note)
            if seen_by_b is not None:
                seen_by_b.append(page)
        session.actions[answer] += 1  # f
        session.request("finish", "post", f"/review/{answer}/finish", answer, htmx=True)
        done.append(answer)


def lead_pass(session: Session, decided: dict, notes: dict, names: tuple[str, str]) -> dict:
    """Adjudicate every answer /adjudication/ lists; what the lead saw."""
    listing = session.request("adjudication list", "get", "/adjudication/").content.decode()
    listed = list(dict.fromkeys(int(pk) for pk in ADJUDICATION_ROW.findall(listing)))
    rows_of_two = len(re.findall(r'<td class="reason">[^<]+</td>\s*<td>2</td>', listing))
    shown_claims, side_by_side, agreeing = 0, 0, 0
    for answer in listed:
        session.actions[answer] += 1  # open it from the list
        page = session.request("page", "get", f"/review/{answer}/", answer).content.decode()
        disagreeing = [c for c in cards(page) if "pass-decisions disagree" in c["body"]]
        agreeing += sum("Reviewers' decisions</caption>" in c["body"] for c in cards(page))
        for claim in disagreeing:
            rows = {name: (label.upper(), html.unescape(note))
                    for name, label, _, note in PASS_ROW.findall(claim["body"])}
            shown_claims += 1
            decisions = {
                name: (decided[name][claim["pk"]], notes[name][claim["pk"]]) for name in names
            }
            side_by_side += rows == decisions
        session.actions[answer] += 1  # t
        session.request("take", "post", f"/review/{answer}/take", answer)
        page = session.request("page", "get", f"/review/{answer}/", answer).content.decode()
        for claim in [c for c in cards(page) if c["pk"] in {d["pk"] for d in disagreeing}]:
            page = decide(session, answer, page, claim, decided[names[0]][claim["pk"]], "")
        session.actions[answer] += 1  # f
        # a refusal is a 409
        session.request("finish", "post", f"/review/{answer}/finish", answer, htmx=True)
    return {
        "listed": listed,
        "disagreeing_claims_shown": shown_claims,
        "shown_side_by_side": side_by_side,
        "agreeing_claims_shown": agreeing,
        "listed_with_reason_and_two_reviewers": rows_of_two,
    }


def figure(f) -> dict:
    return {
        "value": rounded(f.value),
        "low": rounded(f.low),
        "high": rounded(f.high),
        "reason": f.reason,
    }


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def agreement_dict(a) -> dict:
    return {
        "claims": a.claims,
        "ratings": a.ratings,
        "percent": figure(a.percent),
        "kappa": figure(a.kappa),
        "alpha": figure(a.alpha),
    }


def shown(f: dict) -> str:
    if f["value"] is None:
        return f"— ({f['reason']})" if f["reason"] else "—"
    ci = f" [{f['low']:.2f}, {f['high']:.2f}]" if f["low"] is not None else ""
    return f"{f['value']:.2f}{ci}"


class Rules:
    """How A and B decide a flagged claim, and what each decided (the script's record, not a
    page's)."""

    def __init__(self, ids: list[int], seed: int):
        from reviewapp.models import Answer, Claim

        self.spans = golden_spans()
        self.external = dict(Answer.objects.filter(pk__in=ids).values_list("pk", "external_id"))
        self.where = {
            c.pk: (c.answer_start, c.answer_end) for c in Claim.objects.filter(answer_id__in=ids)
        }
        self.decided: dict[str, dict[int, str]] = {"alice": {}, "bob": {}}
        self.notes: dict[str, dict[int, str]] = {"alice": {}, "bob": {}}
        self.rng, self.reached, self.differs = random.Random(seed), 0, []

    def _keep(self, name: str, claim: dict, label: str, note: str) -> tuple[str, str]:
        self.decided[name][claim["pk"]], self.notes[name][claim["pk"]] = label, note
        return label, note

    def alice(self, answer: int, claim: dict) -> tuple[str, str]:
        """The golden spans: a claim overlapping one keeps the judge's label; any other is
        SUPPORTED."""
        start, end = self.where[claim["pk"]]
        marked = self.spans.get(self.external[answer].split("-copy")[0], [])
        if start is not None and any(start < e and s < end for s, e in marked):
            return self._keep("alice", claim, claim["label"], "A: inside a golden span")
        return self._keep("alice", claim, "SUPPORTED", "A: no golden span here")

    def bob(self, answer: int, claim: dict) -> tuple[str, str]:
        """A's label, except on every third flagged claim B reaches: another, seeded."""
        self.reached += 1
        label = self.decided["alice"][claim["pk"]]
        if self.reached % 3:
            return self._keep("bob", claim, label, "")
        other = self.rng.choice([choice for choice in LABEL_KEYS if choice != label])
        self.differs.append((answer, claim["cid"], label, other))
        return self._keep("bob", claim, other, f"B: reads it as {other}")

    def disagreements(self) -> int:
        return sum(self.decided["alice"][pk] != label for pk, label in self.decided["bob"].items())


def users_and_policy():
    """ada (admin), alice and bob (reviewers), lee (lead); and a policy of two blind reviewers."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from reviewapp.access import ADMIN, LEAD, REVIEWER
    from reviewapp.models import Policy
    from reviewapp.policy.service import policy_create, policy_values

    def user(name: str, role: str):
        account = get_user_model().objects.create_user(name, password=None, is_staff=role == ADMIN)
        account.groups.add(Group.objects.get_or_create(name=role)[0])
        return account

    people = [user("ada", ADMIN), user("alice", REVIEWER), user("bob", REVIEWER), user("lee", LEAD)]
    values = policy_values(Policy.current()) | {
        "reviewers_per_answer": 2,
        "blind": True,
        "multi_review_scope": "all",
        "multi_review_share": 1.0,
    }
    return people, policy_create(
        user=people[0], values=values, note="bench: two blind reviewers per answer"
    )


def timing_summary(timings: dict[str, list[float]]) -> dict:
    return {kind: {"n": len(v), "median": round(statistics.median(v), 1),
                   "p95": round(percentile(v, 0.95), 1)} for kind, v in sorted(timings.items())}


def people_summary(worked: dict[str, tuple[Session, list[int]]]) -> tuple[dict, dict]:
    """Seconds and actions per answer, per person."""
    seconds, actions = {}, {}
    for name, (session, answers) in worked.items():
        spent = sorted(session.seconds[pk] for pk in answers)
        seconds[name] = {"answers": len(spent),
                         "median": round(statistics.median(spent), 3) if spent else None,
                         "p95": round(percentile(spent, 0.95), 3) if spent else None}
        counts = [session.actions[pk] for pk in answers]
        actions[name] = {
            "median": statistics.median(counts) if counts else None,
            "total": sum(counts),
            "note_chars": sum(session.typed[pk] for pk in answers),
        }
    return seconds, actions


def agreement_summary(resamples: int) -> dict:
    from reviewapp.labels.reviewer_agreement import reviewers_agreement

    figures = reviewers_agreement(resamples=resamples)
    with_bulk = reviewers_agreement(include_bulk=True, resamples=resamples)
    return {
        "overall": agreement_dict(figures["overall"]),
        "overall_with_bulk": agreement_dict(with_bulk["overall"]),
        "bulk_left_out": figures["bulk"].left_out,
        "pairs": [
            {"pair": f"{p.first}-{p.second}", "shared": p.shared, "bulk_left_out": p.bulk.left_out}
            | agreement_dict(p.figures)
            for p in figures["pairs"]
        ],
        "by_label": {label: agreement_dict(x) for label, x in figures["by_label"]},
        "by_category": {category: agreement_dict(x) for category, x in figures["by_category"]},
        "vs_final": {
            r.reviewer: {
                "claims": r.claims,
                "agreed": r.agreed,
                "percent": figure(r.percent),
                "kappa": figure(r.kappa),
            }
            for r in figures["reviewers"]
        },
        "resamples": resamples,
    }


def judge_summary() -> list[dict]:
    """/calibration/'s judge rows: against all reviewers' final labels, and by how they were
    reached."""
    from reviewapp.labels import calibration

    return [
        {
            "judge": j["judge"],
            "claims": j["claims"],
            "agreement": rounded(j["agreement"]),
            "kappa": rounded(j["kappa"]),
            "flag": j["flag"],
            "by_method": {
                group: {
                    "claims": m["claims"],
                    "percent": figure(m["agreement"]),
                    "kappa": figure(m["kappa"]),
                }
                for group, m in j["by_method"].items()
            },
        }
        for j in calibration.judge_agreement(calibration.audit_misses())
    ]


def run(args) -> dict:
    from django.core.management import call_command

    from reviewapp.models import Answer, Claim

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    (admin, alice, bob, lee), policy = users_and_policy()
    judging = time.perf_counter()
    ids = load_demo(args.answers)
    judged_s = time.perf_counter() - judging
    answers = Answer.objects.filter(pk__in=ids)
    routed = Counter(answers.values_list("review_status", flat=True))
    routed["needing two reviewers"] = answers.filter(
        review_status="in_review", reviews_required=2
    ).count()
    rules = Rules(ids, args.seed)

    # Warm-up, untimed: the first request of a process compiles templates and resolves URLs.
    warm = Session(admin, defaultdict(list))
    warm.request("warm", "get", "/queue/")
    warm.request("warm", "get", f"/review/{ids[0]}/")
    timings: dict[str, list[float]] = defaultdict(list)
    a, b, lead = Session(alice, timings), Session(bob, timings), Session(lee, timings)
    reviewed_a = reviewer_pass(a, rules.alice)
    b_pages: list[str] = []
    reviewed_b = reviewer_pass(b, rules.bob, b_pages)
    # Blind: B's pages and panels carry none of A's notes, nor the side-by-side table.
    leaked = sum(any(n in page for n in rules.notes["alice"].values()) or "pass-decisions" in page
                 for page in b_pages)
    adjudicating = set(answers.filter(review_status="adjudicating").values_list("pk", flat=True))
    seen = lead_pass(lead, rules.decided, rules.notes, ("alice", "bob"))
    assert set(seen["listed"]) == adjudicating, (seen["listed"], adjudicating)
    logging.getLogger("django.request").setLevel(logging.ERROR)  # the lead's 403 below is expected
    lead_calibration = lead.client.get(
        "/calibration/"
    ).status_code  # leads read the agreement figures too
    calibration_page = (
        Session(admin, timings).request("calibration", "get", "/calibration/").content.decode()
    )
    reviewers_page = lead.request("reviewers", "get", "/reviewers/").content.decode()

    reviewed = sorted(set(reviewed_a) & set(reviewed_b))
    methods = Counter(
        Claim.objects.filter(answer_id__in=reviewed).values_list("consensus_method", flat=True)
    )
    seconds, actions = people_summary({"alice": (a, reviewed_a), "bob": (b, reviewed_b),
                                       "lee": (lead, seen["listed"])})
    assert leaked == 0, f"{leaked} of B's pages showed A's decisions"
    assert seen["shown_side_by_side"] == seen["disagreeing_claims_shown"], "shown unlike decided"
    assert seen["listed_with_reason_and_two_reviewers"] == len(seen["listed"])
    return {
        "command": COMMAND,
        "seed": args.seed,
        "policy_version": policy.version,
        "answers": {
            "loaded": len(ids),
            "judge_seconds": round(judged_s, 2),
            "routed": dict(sorted(routed.items())),
            "reviewed_by_both": len(reviewed),
            "adjudicating_after_reviewers": len(adjudicating),
            "final_status": dict(Counter(answers.values_list("review_status", flat=True))),
        },
        "claims": {
            "flagged_decided_by_each": len(rules.decided["alice"]),
            "b_differs": [list(d) for d in rules.differs],
            "disagreements": rules.disagreements(),
            "consensus_method": dict(methods),
            "in_reviewed_answers": sum(methods.values()),
        },
        "timings_ms": timing_summary(timings),
        "seconds_per_answer": seconds,
        "actions_per_answer": actions,
        "agreement": agreement_summary(args.resamples),
        "judge_vs_human": judge_summary(),
        "lead_saw": {
            "answers_listed": len(seen["listed"]),
            "listed_with_reason_and_two_reviewers": seen["listed_with_reason_and_two_reviewers"],
            "disagreeing_claims_shown": seen["disagreeing_claims_shown"],
            "shown_with_both_labels_and_notes": seen["shown_side_by_side"],
            "agreeing_claims_shown_settled": seen["agreeing_claims_shown"],
            "b_pages_showing_a": leaked,
            "lead_calibration_status": lead_calibration,
            "calibration_has_reviewer_agreement": "Agreement between reviewers" in calibration_page
            and "alice" in calibration_page
            and "bob" in calibration_page,
            "reviewers_page_lists": [
                n for n in ("alice", "bob") if f"<td>{n}</td>" in reviewers_page
            ],
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def report(s: dict) -> None:
    n, c, ag = s["answers"], s["claims"], s["agreement"]
    print(f"answers: {n['loaded']} loaded and judged in process ({n['judge_seconds']} s); "
          f"routed {n['routed']}")
    print(f"reviewed by both A and B: {n['reviewed_by_both']}; "
          f"{n['adjudicating_after_reviewers']} went to a lead; "
          f"final {n['final_status']}")
    print(f"flagged claims each reviewer decided: {c['flagged_decided_by_each']}; "
          f"B differs on {len(c['b_differs'])} "
          f"(seed {s['seed']}, every third):")
    for answer, cid, a_label, b_label in c["b_differs"]:
        print(f"  answer {answer} {cid}: A {a_label}, B {b_label}")
    print(f"final labels of the reviewed answers' claims: {c['consensus_method']} "
          f"({c['in_reviewed_answers']} claims)")
    print("request server time, ms (median / p95, n):")
    for kind, t in s["timings_ms"].items():
        print(f"  {kind:<18} {t['median']:7.1f} / {t['p95']:7.1f}  ({t['n']})")
    for name, t in s["seconds_per_answer"].items():
        acts = s["actions_per_answer"][name]
        print(
            f"  {name:<6} {t['answers']} answers: {t['median']} s median, {t['p95']} s p95 per"
            f" answer; actions per answer median {acts['median']} (total {acts['total']}, note"
            f" chars {acts['note_chars']})"
        )
    o = ag["overall"]
    print(
        f"reviewer agreement (explicit decisions, {o['claims']} claims, {ag['bulk_left_out']} bulk"
        f" left out, {ag['resamples']} resamples): percent {shown(o['percent'])}, Fleiss κ"
        f" {shown(o['kappa'])}, α {shown(o['alpha'])}"
    )
    w = ag["overall_with_bulk"]
    print(f"  with bulk decisions ({w['claims']} claims): percent {shown(w['percent'])}, "
          f"κ {shown(w['kappa'])}, "
          f"α {shown(w['alpha'])}")
    for p in ag["pairs"]:
        print(f"  pair {p['pair']}: {p['claims']} claims (of {p['shared']} shared), "
              f"percent {shown(p['percent'])}, "
              f"Cohen κ {shown(p['kappa'])}, α {shown(p['alpha'])}")
    for label, x in ag["by_label"].items():
        print(
            f"  {label:<20} percent {shown(x['percent'])}, κ {shown(x['kappa'])}, α"
            f" {shown(x['alpha'])}"
        )
    for category, x in ag["by_category"].items():
        print(f"  category {category:<11} {x['claims']} claims, percent {shown(x['percent'])}, "
              f"κ {shown(x['kappa'])}")
    for name, r in ag["vs_final"].items():
        print(f"  {name} vs final: {r['agreed']}/{r['claims']}, percent {shown(r['percent'])}, "
              f"κ {shown(r['kappa'])}")
    for j in s["judge_vs_human"]:
        print(f"judge {j['judge']}: {j['claims']} explicit claims, agreement {j['agreement']}, "
              f"κ {j['kappa']}")
        for group, m in j["by_method"].items():
            print(f"  vs {group:<9} {m['claims']} claims, percent {shown(m['percent'])}, "
                  f"κ {shown(m['kappa'])}")
    seen = s["lead_saw"]
    print(
        f"what the lead sees: /adjudication/ lists {seen['answers_listed']} answers (every one"
        f" whose reviewers disagree, none other; {seen['listed_with_reason_and_two_reviewers']}"
        " rows with the routing reason and 2 reviewers); on their review pages"
        f" {seen['disagreeing_claims_shown']} claims carry a 'Reviewers disagree' table,"
        f" {seen['shown_with_both_labels_and_notes']} of them with both reviewers' labels and notes"
        f" as decided, {seen['agreeing_claims_shown_settled']} agreed claims a 'Reviewers'"
        f" decisions' table; B's pages showing anything of A's: {seen['b_pages_showing_a']};"
        f" /calibration/ (the lead gets HTTP {seen['lead_calibration_status']}) has the reviewer"
        f" agreement section: {seen['calibration_has_reviewer_agreement']}; /reviewers/ lists"
        f" {seen['reviewers_page_lists']}"
    )
    print(f"total {s['seconds']} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=12,
                        help="demo answers to load (12 in the demo; more: copies)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--resamples", type=int, default=1000,
                        help="bootstrap resamples behind each interval")
    parser.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="PATH",
        help="the summary as JSON: on stdout instead of the text, or written to PATH",
    )
    args = parser.parse_args()
    database_url = bench_database_url("_double_review")
    name = urlsplit(database_url).path[1:]
    if "bench" not in name:
        sys.exit(f"refusing database {name!r}: a benchmark database has 'bench' in its name")
    os.environ.update({"DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
                       "JUDGE_BACKEND": "offline", "DEBUG": "false", "SECURE_SSL_REDIRECT": "false",
                       "SECURE_COOKIES": "false", "SECURE_HSTS_SECONDS": "0",
                       "CALIBRATION_CACHE_SECONDS": "0",
                       "LOG_LEVEL": "ERROR", "AGREEMENT_RESAMPLES": str(args.resamples),
                       "CELERY_QUEUE": f"bench-double-{os.getpid()}"})
    os.environ.pop("CACHE_URL", None)
    admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin_sql(database_url, f'CREATE DATABASE "{name}"')
    # whitenoise: no collectstatic here
    warnings.filterwarnings("ignore", message="No directory at")
    try:
        import django

        django.setup()
        summary = run(args)
        from django.db import connections

        connections.close_all()
    finally:
        admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    from bench.results import record

    for kind, t in summary["timings_ms"].items():
        record(
            f"double review p95 {kind}",
            t["p95"],
            "ms",
            None,
            higher_is_better=False,
            command=COMMAND,
            median_ms=t["median"],
            requests=t["n"],
        )
    record(
        "double review lead share of claims",
        summary["claims"]["consensus_method"].get("lead", 0)
        / max(1, summary["claims"]["in_reviewed_answers"]),
        "share",
        None,
        command=COMMAND,
        answers=summary["answers"]["reviewed_by_both"],
    )
    if args.json == "-":
        print(json.dumps(summary, indent=2))
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
