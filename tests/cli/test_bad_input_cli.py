"""Bad input as a user types it: one line on stderr, exit 2, no traceback, quickly, for every command that reads it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=60)


def assert_refused(result: subprocess.CompletedProcess, message: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("kassign: error: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


GROUP = '{"topics": {"t0": 3}, "members": {"a": {"topics": ["t0"]}, "b": {"topics": ["t0"]}}}'

BAD_SCENARIOS = [
    ('{"topics": {"t0": 3}, "members": {"a": {"topics": ["t0"]}, "a": {"topics": []}}}', 'key "a" appears twice'),
    ('{"topics": {"t0": 3, "t0": 4}, "members": {}}', 'key "t0" appears twice'),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"topics": {"t0": ' + "9" * 5000 + '}, "members": {}}', "not usable JSON"),
    ('{"topics": {"t0": 2147483648}, "members": {}}', "at most 2147483647"),
    ('{"topics": {"t0": 2147483647}, "members": {}}', "more than kassign materialises"),
    ('{"topics": {"t0": 1}, "members": {"a": {"topics": ["t0"], "owned": [["t0", 99999999999]]}}}', "members.a.owned[0]"),
    ('{"topics": {"t0": 1}, "members": {"a": {"topics": ["t0"], "instance_id": "h"}, '
     '"b": {"topics": ["t0"], "instance_id": "h"}}}', "'h' is also the instance_id of 'a'"),
]


@pytest.mark.parametrize(("text", "message"), BAD_SCENARIOS)
def test_assign_refuses_bad_scenarios_from_a_file_and_stdin(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(text)
    assert_refused(run("assign", "-s", "range", str(path)), message)
    assert_refused(run("assign", "-s", "range", "-", stdin=text), message)


@pytest.mark.parametrize(("option", "message"), [
    ("seed=-1", "random option seed takes a whole number"),
    ('seed="x"', "random option seed takes a whole number"),
])
def test_assign_options_are_checked(tmp_path, option: str, message: str) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(GROUP)
    assert_refused(run("assign", "-s", "random", "-o", option, str(path)), message)


@pytest.mark.parametrize(("args", "message"), [
    (["-p", "2147483648"], "partitions must be from"),
    (["-p", "2000000000"], "more than kassign materialises"),
    (["-p", "3", "--start-partition", "99999999999"], "start partition must be from"),
])
def test_replicas_bounds_are_checked_before_allocating(args: list[str], message: str) -> None:
    assert_refused(run("replicas", "--brokers", "0,1,2", "-r", "2", *args), message)


SIM = """
topics: {t0: 4}
members:
  C0: {topics: [t0], instance_id: h1}
  C1: {topics: [t0]}
events:
  - {at: 50, type: leave, member: C1}
  - {at: 5, type: leave, member: nobody}
"""


def test_simulate_names_the_event_as_written(tmp_path) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(SIM)
    # the second event in the file, though it sorts first
    assert_refused(run("simulate", str(path)), "events[1] (leave at 5s)")


@pytest.mark.parametrize(("text", "message"), [
    (SIM.replace("C1: {topics: [t0]}", "C1: {topics: [t0], instance_id: h1}"), "'h1' is also the instance_id"),
    (SIM.replace("C1: {topics: [t0]}\n", "C1: {topics: [t0]}\n  C1: {topics: []}\n"), "key 'C1' appears twice"),
    (SIM.replace("at: 50", "at: 1e300"), "expected a number of seconds from 0 to 10,000,000"),
    (SIM.replace("at: 50", "at: .nan"), "expected a number of seconds"),
])
def test_simulate_refuses_bad_timelines(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(text)
    assert_refused(run("simulate", str(path)), message)
    assert_refused(run("simulate", "-", stdin=text), message)


GOOD_SIM = SIM.replace("  - {at: 5, type: leave, member: nobody}\n", "")


@pytest.mark.parametrize(("text", "message"), [
    # one topic past a Java int: refused at the event, before anything is simulated (was a MemoryError)
    (GOOD_SIM + "  - {at: 60, type: add_partitions, topic: t0, add: 2147483647}\n",
     "events[1] (add_partitions at 60s): topic 't0' would have 2,147,483,651"),
    (GOOD_SIM.replace("topics: {t0: 4}", "topics: {t0: 2147483647}"), "more than kassign materialises"),
    # YAML's 1 and '1' are the same id once read as text: refused, naming it (it was one member, silently)
    (GOOD_SIM.replace("  C1: {topics: [t0]}\n", "  C1: {topics: [t0]}\n  1: {topics: [t0]}\n  '1': {topics: [t0]}\n"),
     "members 1 and '1' have the same id once read as text ('1')"),
    (GOOD_SIM.replace("topics: {t0: 4}", "topics: {t0: 4, 2: 1, '2': 1}"), "topics 2 and '2' have the same name"),
    (GOOD_SIM.replace("  C1: {topics: [t0]}\n", "  C1: {topics: [t0]}\n  on: {topics: [t0]}\n"), "YAML read it as a boolean (an unquoted yes, no, on"),
    (GOOD_SIM.replace("C1: {topics: [t0]}", 'C1: {topics: [t0], rack: "\\ud800"}'), "rack '\\ud800' has a lone surrogate"),
    (GOOD_SIM.replace("  C1: {topics: [t0]}\n", '  C1: {topics: [t0]}\n  "C\\udc80": {topics: [t0]}\n'),
     "member id 'C\\udc80' has a lone"),
])
def test_simulate_refuses_impossible_groups_in_one_line(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(text)
    assert_refused(run("simulate", "-s", "range,sticky", str(path)), message)


def test_simulate_refuses_an_empty_strategy_list(tmp_path) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(SIM.replace("  - {at: 5, type: leave, member: nobody}\n", ""))
    assert_refused(run("simulate", "-s", "", str(path)), "--strategies needs at least one name")


def test_a_good_scenario_on_stdin_still_works() -> None:
    result = run("assign", "-s", "range", "-", "--json", stdin=GROUP)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["assignment"] == {"a": [["t0", 0], ["t0", 1]], "b": [["t0", 2]]}


def test_names_are_printed_literally_never_interpreted(tmp_path) -> None:
    # (a lone surrogate is not a name Kafka can carry at all: refused, see the test below)
    names = {"[bold red]boss[/bold red]": "markup", "\u001b[2Jwipe": "escape", "evil\u202etxt": "bidi override"}
    doc = {"topics": {"t0": 4}, "members": {name: {"topics": ["t0"]} for name in names}}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc))
    result = run("assign", "-s", "range", str(path))
    assert result.returncode == 0, result.stderr
    assert "[bold red]boss[/bold red]" in result.stdout
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b[2Jwipe" in result.stdout and "evil\\u202etxt" in result.stdout


LONE_SURROGATE_SCENARIOS = [  # JSON text as a file carries it: the decoder turns "\\udc80" into a lone surrogate
    ('{"topics": {"t\\ud800": 2}, "members": {"a": {"topics": ["t\\ud800"]}}}', "scenario topics: topic name 't\\ud800'"),
    ('{"topics": {"t": 2}, "members": {"lone\\udc80": {"topics": ["t"]}}}', "scenario members: member id 'lone\\udc80'"),
    ('{"topics": {"t": 2}, "members": {"a": {"topics": ["t"], "rack": "\\udfff"}}}', "scenario members.a.rack: rack '\\udfff'"),
    ('{"topics": {"t": 2}, "members": {"a": {"topics": ["t"], "owned": [["\\ud800", 0]], "generation": 1}}}',
     "scenario members.a.owned: topic name '\\ud800'"),
]


@pytest.mark.parametrize(("text", "message"), LONE_SURROGATE_SCENARIOS)
@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform"])
def test_names_with_a_lone_surrogate_are_one_line_errors_for_every_strategy(tmp_path, text: str, message: str,
                                                                             strategy: str) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(text)
    protocol = ["--protocol", "consumer"] if strategy == "uniform" else []
    assert_refused(run("assign", "-s", strategy, *protocol, str(path)), message)


def test_warnings_are_prefixed_say_why_and_come_once(tmp_path) -> None:
    doc = {"topics": {"t0": 2}, "members": {
        "a": {"topics": ["t0"], "owned": [["t0", -1], ["t0", 7]], "generation": 1},
        "b": {"topics": ["t0"], "owned": [["t0", -1]], "generation": 1}}}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc))
    result = run("assign", "-s", "cooperative-sticky", str(path))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "kassign: warning: member a claims 1 negative partition number(s); ignored",
        "kassign: warning: member a claims 1 partition number(s) beyond its topic's partition count; ignored",
        "kassign: warning: member b claims 1 negative partition number(s); ignored",
    ]


@pytest.mark.parametrize(("topic", "message"), [
    ("my topic", "has characters Kafka refuses"),
    ("a/b", "has characters Kafka refuses"),
    ("..", "is not allowed by Kafka"),
    ("x" * 250, "longer than Kafka allows (249)"),
])
def test_reassignment_json_refuses_names_kafka_refuses(topic: str, message: str) -> None:
    assert_refused(run("replicas", "--brokers", "0,1", "-p", "2", "-r", "1", "--topic", topic, "--reassignment-json"),
                   message)


def test_replicas_plot_extension_checked_first_and_path_told(tmp_path) -> None:
    assert_refused(run("replicas", "--brokers", "0,1", "-p", "2000000000", "-r", "1", "--plot", str(tmp_path / "x.txt")),
                   "name a .png")
    good = run("replicas", "--brokers", "0:a,1:b", "-p", "4", "-r", "2", "--plot", str(tmp_path / "r.png"))
    assert good.returncode == 0 and f"plot written to {tmp_path / 'r.png'}" in good.stderr
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args", [
    ["replicas", "--brokers", "0:\udcff,1:b", "-p", "2", "-r", "2"],
    ["replicas", "--brokers", "0:\udcff,1:b", "-p", "2", "-r", "2", "--plot", "PLOT"],
    ["replicas", "--brokers", "0:\udcff,1:b", "-p", "2", "-r", "2", "--placer", "striped", "--seed", "1"],
])
def test_racks_that_are_not_utf8_on_the_command_line_are_one_line_errors(tmp_path, args: list[str]) -> None:
    # the shell hands over b"\xff", which Python reads as the lone surrogate "\udcff"
    args = [str(tmp_path / "r.png") if a == "PLOT" else a for a in args]
    assert_refused(run(*args), "rack '\\udcff' has a lone surrogate")
