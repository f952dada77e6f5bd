"""A run with thousands of stored steps and events stays readable: its detail embeds a bounded
number of steps (with the total, a marker that more exist, and a summary by outcome), the steps
are paged at ``/api/runs/{id}/steps/``, and the stored events as JSON come a bounded page at a
time with a link to the next; walking the pages reads all of it, each page in a fixed number of
queries."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.largerun import call_id, large_run

pytestmark = [pytest.mark.django_db]

STEPS = 3000
EVENTS = 2 * STEPS + 3  # run.queued, run.started, two per step, run.finished


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


@pytest.fixture
def big(graph: Any, user: Any) -> Any:
    return large_run(graph, user, STEPS)


def test_the_detail_of_a_large_run_embeds_a_bounded_number_of_steps_and_a_summary(
    api: APIClient, big: Any, settings: Any
) -> None:
    settings.RUN_DETAIL_STEPS = 100
    response = api.get(f"/api/runs/{big.pk}/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "failed" and body["error"]
    assert [s["call_id"] for s in body["steps"]] == [call_id(i) for i in range(100)]
    assert body["steps_total"] == STEPS
    assert body["steps_truncated"] is True
    assert body["step_counts"] == {"ok": STEPS - 1, "http-error": 1}
    assert body["steps_url"] == f"/api/runs/{big.pk}/steps/"
    assert body["events_total"] == EVENTS
    # 100 of 3000 steps: far below what every step would take (each is a few hundred bytes)
    assert len(response.content) < 100_000


def test_the_detail_of_a_small_run_embeds_every_step(api: APIClient, graph: Any, user: Any) -> None:
    run = large_run(graph, user, 3, status="succeeded")
    body = api.get(f"/api/runs/{run.pk}/").json()
    assert [s["call_id"] for s in body["steps"]] == [call_id(i) for i in range(3)]
    assert body["steps_total"] == 3 and body["steps_truncated"] is False
    assert body["step_counts"] == {"ok": 3}


def test_reading_a_run_takes_as_many_queries_whatever_its_size(
    api: APIClient, graph: Any, user: Any, big: Any, settings: Any
) -> None:
    settings.RUN_DETAIL_STEPS = 100
    small = large_run(graph, user, 150)
    counts = []
    for run in (small, big):
        with CaptureQueriesContext(connection) as queries:
            assert api.get(f"/api/runs/{run.pk}/").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 6, counts


def test_the_steps_pages_walk_every_step_in_order(api: APIClient, big: Any) -> None:
    url: str | None = f"/api/runs/{big.pk}/steps/?page_size=500"
    seen: list[str] = []
    pages = 0
    while url:
        with CaptureQueriesContext(connection) as queries:
            response = api.get(url)
        assert response.status_code == 200, response.content[:300]
        body = response.json()
        assert set(body) == {"count", "next", "previous", "results"}
        assert body["count"] == STEPS and len(body["results"]) <= 500
        assert len(queries) <= 4  # the token, the run, the count, the page
        seen += [s["call_id"] for s in body["results"]]
        url, pages = body["next"], pages + 1
    assert seen == [call_id(i) for i in range(STEPS)]
    assert pages == STEPS // 500


def test_a_steps_page_is_bounded_whatever_it_asks(api: APIClient, big: Any) -> None:
    body = api.get(f"/api/runs/{big.pk}/steps/?page_size=1000000").json()
    assert len(body["results"]) == 500
    assert len(api.get(f"/api/runs/{big.pk}/steps/").json()["results"]) == 50


def test_the_steps_of_no_run_answer_404_and_anonymous_requests_are_refused(
    api: APIClient, anon: APIClient, big: Any
) -> None:
    assert api.get("/api/runs/00000000-0000-4000-8000-000000000000/steps/").status_code == 404
    assert anon.get(f"/api/runs/{big.pk}/steps/").status_code in (401, 403)


def test_the_stored_events_come_a_bounded_page_at_a_time_with_a_link_to_the_next(
    api: APIClient, big: Any, settings: Any
) -> None:
    settings.RUN_EVENTS_PAGE_SIZE = 1000
    response = api.get(f"/api/runs/{big.pk}/events/?format=json")
    assert response.status_code == 200
    first = response.json()
    assert [e["seq"] for e in first["events"]] == list(range(1, 1001))
    assert first["total"] == EVENTS and first["finished"] is True
    assert query_of(first["next"]) == {"format": ["json"], "after": ["1000"]}
    assert first["next"].startswith(f"http://testserver/api/runs/{big.pk}/events/?")
    # a thousand small events (a few hundred bytes each), not six thousand
    assert len(response.content) < 600_000


def test_walking_the_event_pages_reads_every_event_once_in_a_fixed_number_of_queries(
    api: APIClient, big: Any
) -> None:
    url: str | None = f"/api/runs/{big.pk}/events/?format=json&limit=2000"
    seqs: list[int] = []
    queries_per_page = set()
    while url:
        with CaptureQueriesContext(connection) as queries:
            response = api.get(url)
        assert response.status_code == 200
        body = response.json()
        assert len(body["events"]) <= 2000
        seqs += [e["seq"] for e in body["events"]]
        queries_per_page.add(len(queries))
        url = body["next"]
    assert seqs == list(range(1, EVENTS + 1))
    assert body["events"][-1]["type"] == "run.finished"
    # the token, the run, its event count, the page, whether its terminal event is stored
    assert len(queries_per_page) == 1 and max(queries_per_page) <= 5, queries_per_page


def test_an_event_page_larger_than_the_maximum_is_cut_to_it(api: APIClient, big: Any, settings: Any) -> None:
    settings.RUN_EVENTS_PAGE_MAX = 700
    body = api.get(f"/api/runs/{big.pk}/events/?format=json&limit=100000&after=10").json()
    assert [e["seq"] for e in body["events"]] == list(range(11, 711))
    assert query_of(body["next"]) == {"format": ["json"], "after": ["710"], "limit": ["100000"]}


def test_an_event_page_limit_that_is_not_a_positive_number_answers_400(api: APIClient, big: Any) -> None:
    for limit in ("0", "-1", "many"):
        response = api.get(f"/api/runs/{big.pk}/events/?format=json&limit={limit}")
        assert response.status_code == 400, (limit, response.content[:200])
        assert response.json()["issues"][0]["path"] == "limit"


def test_the_last_event_page_has_no_next_link(api: APIClient, graph: Any, user: Any) -> None:
    run = large_run(graph, user, 2, status="succeeded")
    body = api.get(f"/api/runs/{run.pk}/events/?format=json").json()
    assert [e["seq"] for e in body["events"]] == list(range(1, 8))
    assert body["next"] is None and body["finished"] is True and body["total"] == 7
    # the Last-Event-ID header still picks the start, as before
    resumed = api.get(f"/api/runs/{run.pk}/events/?format=json", HTTP_LAST_EVENT_ID="5").json()
    assert [e["seq"] for e in resumed["events"]] == [6, 7]


def test_a_suite_runs_stored_events_come_a_page_at_a_time_too(
    api: APIClient, graph: Any, user: Any, settings: Any
) -> None:
    from execution.eventschema import SUITE_EVENTS
    from execution.rawinsert import insert_rows
    from execution.suites.models import SuiteEvent, SuiteRun
    from tests.suitekit import judged

    settings.RUN_EVENTS_PAGE_SIZE = 400
    suite = judged(graph, 1, "passed", 1, user=user)
    count = 1001
    insert_rows(
        SuiteEvent,
        [
            SuiteEvent(
                suite=suite,
                seq=seq,
                type=SUITE_EVENTS.terminal if seq == count else "case.started",
                data={"case": seq, "name": f"case {seq}", "run": None},
            )
            for seq in range(1, count + 1)
        ],
    )
    SuiteRun.objects.filter(pk=suite.pk).update(event_seq=count)
    url: str | None = f"/api/suite-runs/{suite.pk}/events/?format=json"
    sizes: list[int] = []
    seqs: list[int] = []
    while url:
        body = api.get(url).json()
        assert body["total"] == count and body["finished"] is True
        sizes.append(len(body["events"]))
        seqs += [e["seq"] for e in body["events"]]
        url = body["next"]
    assert sizes == [400, 400, 201]
    assert seqs == list(range(1, count + 1))


def test_comparing_suite_runs_of_large_runs_holds_a_bounded_number_of_steps_per_case(
    api: APIClient, graph: Any, user: Any, settings: Any
) -> None:
    from execution.suites.models import SuiteCaseResult
    from tests.suitekit import judged

    settings.RUN_DETAIL_STEPS = 50
    suites = []
    for minutes in (2, 1):
        suite = judged(graph, 1, "passed", minutes, user=user)
        SuiteCaseResult.objects.create(
            suite=suite,
            position=0,
            case_ref=7,
            name="loops",
            document={},
            outcome="passed",
            run=large_run(graph, user, 400, status="succeeded"),
        )
        suites.append(suite)
    response = api.get(f"/api/suite-runs/compare/?a={suites[0].pk}&b={suites[1].pk}")
    assert response.status_code == 200, response.content[:300]
    comparison = response.json()["cases"][0]["comparison"]
    assert len(comparison["steps"]) == 50
    assert comparison["steps_total"] == 400 and comparison["steps_truncated"] is True


def test_a_bounded_comparison_keeps_the_steps_that_changed_first_in_trace_order(settings: Any) -> None:
    from execution.suites.selectors import _bounded_steps

    settings.RUN_DETAIL_STEPS = 3
    steps = [{"label": str(i), "changed": ["status"] if i in (4, 8) else []} for i in range(10)]
    kept = _bounded_steps({"same": False, "steps": steps})
    assert [s["label"] for s in kept["steps"]] == ["0", "4", "8"]
    assert kept["steps_total"] == 10 and kept["steps_truncated"] is True
    few = _bounded_steps({"same": True, "steps": steps[:2]})
    assert few["steps"] == steps[:2] and few["steps_truncated"] is False
