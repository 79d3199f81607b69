"""Kafka Streams timelines: what they say, read back, and every mistake refused with its path."""

from __future__ import annotations


import pytest

from kassign.core.errors import ScenarioError
from kassign.core.units import human_seconds
from kassign.groups.simulate.streams_scenario import (
    derived_process_id,
    is_streams_timeline,
    load_streams_timeline,
    parse_streams_strategy,
    parse_streams_timeline,
    seconds,
    size_in_bytes,
)
from tests.conftest import REPO
from tests.groups.simulate.timelines import changed

EXAMPLES = REPO / "examples"

BASE = {
    "application": {
        "subtopologies": {"0": {"partitions": 2, "stateful": True}, "1": {"partitions": 3}},
        "state_bytes": "1 MiB", "record_bytes": 1024, "restore_records_per_second": 100,
    },
    "instances": {"a": {}, "b": {"threads": 2}},
    "events": [{"at": 60, "type": "restart", "instance": "a", "down": 30}],
}


def doc(**changes):
    return changed(BASE, **changes)


def refused(document) -> str:
    with pytest.raises(ScenarioError) as err:
        parse_streams_timeline(document)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_the_example_reads_and_says_what_it_holds():
    timeline = load_streams_timeline(EXAMPLES / "streams-restart.yaml")
    app = timeline.application
    assert len(app.tasks) == 16 and int(app.stateful.sum()) == 8
    assert app.state_bytes[0] == 2 * 2**30 and app.growth_bytes[0] == 50 * 1024 and app.restore_bytes[0] == 25 * 2**20
    assert app.state_bytes[8] == 0  # a stateless task has no changelog
    assert [e.type for e in timeline.events] == ["restart", "crash", "start"]
    assert [e.at for e in timeline.events] == [600, 3600, 3900]
    # the restart is a stop and, 5 minutes later, a start, both charged to its event
    assert [(a.kind, a.instance, a.at, a.record) for a in timeline.actions] == [
        ("stop", "app-2", 600, 1), ("start", "app-2", 900, 1), ("crash", "app-3", 3600, 2),
        ("start", "app-3", 3900, 3)]
    assert is_streams_timeline({"application": {}}) and not is_streams_timeline({"topics": {}})


def test_sizes_rates_and_times_in_words():
    assert size_in_bytes("1.5 GiB", "x") == 1.5 * 2**30
    assert size_in_bytes("20 MB", "x") == 20_000_000
    assert size_in_bytes("20 MiB/s", "x", rate=True) == 20 * 2**20
    assert size_in_bytes(512, "x") == 512
    assert seconds("1h30m", "x") == 5400 and seconds("500ms", "x") == 0.5 and seconds("2d", "x") == 172800
    assert seconds("15 min", "x") == 900 and seconds(42, "x") == 42
    with pytest.raises(ScenarioError, match="x: expected bytes"):
        size_in_bytes("20 MiB/s", "x")  # a rate is not a size
    with pytest.raises(ScenarioError, match="x: expected a time"):
        seconds("soon", "x")
    assert human_seconds(250) == "4 min 10 s" and human_seconds(0) == "0 s" and human_seconds(0.01) == "< 0.1 s"
    assert human_seconds(3661) == "1 h 1 min" and human_seconds(12.5) == "12.5 s"


def test_overrides_are_most_specific_first():
    document = doc(application__tasks={"0_1": {"state_bytes": "4 MiB", "restore_bytes_per_second": 1000}})
    document["application"]["subtopologies"]["0"]["growth_bytes_per_second"] = 10
    app = parse_streams_timeline(document).application
    assert list(app.state_bytes[:2]) == [2**20, 4 * 2**20]
    assert list(app.restore_bytes[:2]) == [100 * 1024, 1000]  # records per second times the record size
    assert list(app.growth_bytes[:2]) == [10, 10]


def test_scale_events_name_their_instances_and_the_restarts_come_back():
    document = doc(instances={"app-1": {}, "app-2": {}},
                   events=[{"at": 10, "type": "scale_out", "add": 2, "threads": 3},
                           {"at": 20, "type": "scale_in", "remove": 1},
                           {"at": 30, "type": "scale_in", "instances": ["app-1"]},
                           {"at": 40, "type": "start", "instance": "app-1", "state_lost": True}])
    timeline = parse_streams_timeline(document)
    assert [e.instances for e in timeline.events[:3]] == [("app-3", "app-4"), ("app-4",), ("app-1",)]
    assert timeline.plans["app-3"].threads == 3
    assert timeline.names == ["app-1", "app-2", "app-3", "app-4"]
    assert timeline.events[3].describe() == "start app-1 (state lost)"


def test_strategies_and_their_standby_variants():
    assert parse_streams_strategy("high-availability") == ("high-availability", None)
    assert parse_streams_strategy("sticky:standbys=2") == ("sticky", 2)
    with pytest.raises(ScenarioError, match="unknown Kafka Streams task assignor"):
        parse_streams_strategy("range")
    with pytest.raises(ScenarioError, match="standbys=N"):
        parse_streams_strategy("sticky:standby=2")


def test_process_ids_are_stable_per_name_and_new_when_state_is_lost():
    assert derived_process_id("a") == derived_process_id("a") != derived_process_id("b")
    assert derived_process_id("a", 1) != derived_process_id("a")


@pytest.mark.parametrize("changes, path_and_problem", [
    ({"application__state_bytes": None}, "application.subtopologies.0: a stateful task needs state_bytes"),
    ({"application__restore_records_per_second": None}, "needs a restoration speed"),
    ({"application__state_bytes": "lots"}, "application.state_bytes: expected bytes"),
    ({"application__record_bytes": 0}, "application.record_bytes: expected bytes more than 0"),
    ({"application__restore_bytes_per_second": 5}, "give restore_bytes_per_second or restore_records_per_second"),
    ({"application__subtopologies": {"x": {"partitions": 1}}}, "application.subtopologies.x: a subtopology id"),
    ({"application__subtopologies": {"0": {"stateful": True}}}, "missing partitions"),
    ({"application__tasks": {"0_7": {"state_bytes": 1}}}, "application.tasks.0_7: no task 0_7"),
    ({"application__tasks": {"1_0": {"state_bytes": 1}}}, "task 1_0 is stateless"),
    ({"application__colour": "red"}, "application: unknown field(s) ['colour']"),
    ({"instances__b": {"threads": 0}}, "instances.b.threads: expected a whole number from 1"),
    ({"instances__b": {"process_id": "nope"}}, "instances.b.process_id: a process id is a UUID"),
    ({"settings": {"max_warmup_replicas": 0}}, "settings.max_warmup_replicas"),
    ({"settings": {"probing_rebalance_interval_ms": 1000}}, "at least 60000"),
    ({"settings": {"initial_state": "warm"}}, "settings.initial_state"),
    ({"settings": {"session_timeout": "forever"}}, "settings.session_timeout: expected a time"),
    ({"settings": {"rack_aware_assignment_tags": ["zone"]}}, "instances.a.tags: settings.rack_aware_assignment_tags"),
    ({"events": [{"at": 1, "type": "explode", "instance": "a"}]}, "events[0].type: expected one of start"),
    ({"events": [{"at": 1, "type": "stop"}]}, "events[0]: a stop event needs instance"),
    ({"events": [{"at": 1, "type": "stop", "instance": "z"}]}, "no instance 'z'"),
    ({"events": [{"at": 1, "type": "start", "instance": "a"}]}, "instance 'a' is already running"),
    ({"events": [{"at": 1, "type": "crash", "instance": "a"}, {"at": 2, "type": "stop", "instance": "a"}]},
     "events[1] (stop at 2 s): instance 'a' is not running"),
    ({"events": [{"at": 1, "type": "restart", "instance": "a", "down": 60},
                 {"at": 30, "type": "crash", "instance": "a"}]}, "is down then (restarted by events[0]"),
    ({"events": [{"at": 1, "type": "restart", "instance": "a", "down": 60},
                 {"at": 30, "type": "start", "instance": "a"}]}, "comes back by itself at 61 s"),
    ({"events": [{"at": 1, "type": "scale_in", "remove": 3}]}, "remove 3 instance(s), but 2 run then"),
    ({"events": [{"at": 1, "type": "scale_in"}]}, "needs remove (how many) or instances"),
    ({"events": [{"at": 1, "type": "restart", "instance": "a", "down": 5, "colour": 1}]}, "unknown field(s)"),
    ({"events": [{"at": -1, "type": "stop", "instance": "a"}]}, "events[0].at: expected a time at least 0"),
    ({"strategies": ["round-robin"]}, "strategies[0]: unknown Kafka Streams task assignor"),
    ({"until": 10}, "until: 10 s is before the last event"),
    ({"topics": {"t": 1}}, "unknown field(s) ['topics']"),
])
def test_mistakes_are_one_line_with_their_path(changes, path_and_problem):
    document = doc(**changes)
    assert path_and_problem in refused(document)


def test_two_instances_with_one_process_id_are_refused():
    pid = "2d0e7635-ca09-42bd-84b3-fee645b255e7"
    message = refused(doc(instances={"a": {"process_id": pid}, "b": {"process_id": pid}}))
    assert "instances.b: process id" in message


def test_a_returning_instance_keeps_its_process_id_unless_its_state_is_lost():
    pid = "2d0e7635-ca09-42bd-84b3-fee645b255e7"
    events = [{"at": 1, "type": "stop", "instance": "a"},
              {"at": 2, "type": "start", "instance": "a", "process_id": "3d0e7635-ca09-42bd-84b3-fee645b255e7"}]
    message = refused(doc(instances={"a": {"process_id": pid}, "b": {}}, events=events))
    assert "comes back with another process_id" in message
