"""The assignment report: counts, spread, and moves measured against the rightful previous owners."""

from __future__ import annotations

import kassign
from kassign.groups.report import assignment_report, previous_owners
from kassign.groups.scenario import parse_scenario


def _scenario(members: dict) -> dict:
    return {"topics": {"t": 4}, "members": members}


def test_higher_generation_wins_and_same_generation_tie_goes_to_nobody() -> None:
    scenario = parse_scenario(_scenario({
        "a": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 3},
        "b": {"topics": ["t"], "owned": [["t", 1], ["t", 2]], "generation": 5},
        "c": {"topics": ["t"], "owned": [["t", 2], ["t", 3]], "generation": 5},
    }))
    # t1: b (generation 5) beats a (3); t2: b and c tie in generation 5, so nobody; t3: only c claims it.
    assert previous_owners(scenario.topics, scenario.members) == {("t", 0): "a", ("t", 1): "b", ("t", 3): "c"}


def test_stale_claims_are_dropped_with_a_warning(caplog) -> None:
    scenario = parse_scenario({"topics": {"t": 2, "u": 1}, "members": {
        "a": {"topics": ["t"], "owned": [["t", 0], ["t", 9], ["gone", 0], ["u", 0]], "generation": 1},
    }})
    assert previous_owners(scenario.topics, scenario.members) == {("t", 0): "a"}
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 3


def test_report_counts_kept_and_moved() -> None:
    doc = _scenario({
        "a": {"topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]], "generation": 1},
        "b": {"topics": ["t"], "owned": [["t", 3]], "generation": 1},
    })
    scenario = parse_scenario(doc)
    result = kassign.assign("roundrobin", doc)  # a: t0,t2  b: t1,t3
    report = assignment_report(result, scenario.members, scenario.topics)
    assert report.counts == {"a": 2, "b": 2} and report.spread == 0
    assert (report.kept, report.moved, report.previously_owned) == (3, 1, 4)
