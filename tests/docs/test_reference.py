"""The manual is the contract: its reference pages state every document kassign reads and writes, and nothing
in the manual, the README or the package sends a reader to a file they do not have.

- No page, README line, docstring, comment, message or CLI help names the developers' own contract ("SPEC") or the
  folder of test references next to the checkout by a relative path (``../shared``): users have neither.
- Every field of every JSON document kassign writes is named by the reference (``docs/outputs.md``): real
  outputs of the CLI are walked field by field (``tests/docs/reference.py``): a sample pipeline's summary.json and
  ``--json``, ``describe-group`` on a replayed broker of each group type, ``plan``, ``assign`` of each group type,
  ``partition``, ``replicas`` and ``simulate``. A field the reference does not name fails, with its path.
- Every field the scenario readers accept is named by ``docs/formats.md``, and every field of the reference vector
  lines by ``docs/vectors.md`` (where the vectors are beside the checkout).

The reference pages' own examples run as the manual's other console examples do (``tests/docs``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.reference import fields, undocumented

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DOC_EXAMPLES = ROOT / "docs" / "examples"

# -- nobody is sent to a file they do not have ---------------------------------------------------------------------

BANNED = re.compile(r"\bSPEC\b|SPEC\.md|\.\./shared\b|/work/shared\b")
TEXT_SUFFIXES = {".py", ".pyi", ".c", ".h", ".java", ".properties", ".md", ".json", ".yaml", ".yml", ".csv", ".txt",
                 ".toml", ".cfg", ".html", ".js", ".css"}


def _shipped_text_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "mkdocs.yml", ROOT / "pyproject.toml", ROOT / "setup.py"]
    for folder in (ROOT / "docs", ROOT / "src" / "kassign", ROOT / "examples"):
        files += [p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in TEXT_SUFFIXES
                  and "__pycache__" not in p.parts]
    return files


def test_no_page_readme_or_module_names_the_developers_contract():
    """README.md, docs/**, src/kassign/** (docstrings, comments, messages, CLI help), examples/** and the packaging
    files: no ``SPEC`` and no ``../shared``. The tests may name them: they read the reference files, users do not."""
    found = []
    for path in _shipped_text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), 1):
            if BANNED.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "these send a reader to a file users do not have:\n" + "\n".join(found)


def test_the_ban_catches_what_it_is_for():
    assert BANNED.search("the contract is SPEC section 1") and BANNED.search("see ../shared/vectors/")
    assert BANNED.search("full contract: ../shared/SPEC.md")
    assert not BANNED.search("spec: dict = {}") and not BANNED.search("MemberSpec") and not BANNED.search(
        "a shared partition")


def test_the_reference_pages_are_in_the_manual():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in ("formats.md", "outputs.md", "vectors.md"):
        assert page in nav, f"{page} is not in mkdocs.yml's nav"


def test_the_field_walk_names_what_the_reference_does_not():
    lag = [("lag", "TOPIC", "committed")]
    assert undocumented({"lag": {"orders": {"committed": [1, None]}}}, lag) == []
    assert undocumented({"lag": {"orders": {"position": "x"}}}, lag) == ["lag.orders.position"]
    # lists of objects step in with [], lists of plain values and of pairs are one field
    assert undocumented({"a": [{"b": 1}], "m": {"C0": [["t0", 0]]}}, [("a", "[]", "b"), ("m", "MEMBER")]) == []
    assert undocumented({"a": [{"b": 1, "c": 2}]}, [("a", "[]", "b")]) == ["a[].c"]
    # a placeholder matches any key, never a list's items; a missing object is named once, not field by field
    assert undocumented({"x": [{"y": 1}]}, [("x", "KEY", "y")]) == ["x[]"]
    assert undocumented({"new": {"deep": {"er": 1}}}, []) == ["new"]


# -- what kassign reads -------------------------------------------------------------------------------------------

def _keys_named(page: str, heading: str, under: tuple[str, ...]) -> set[str]:
    """The field names the reference gives directly under ``under`` (a path of placeholders and names)."""
    out = set()
    for path in fields(page, heading):
        if len(path) > len(under) and all(a == b for a, b in zip(path, under)):
            out.add(path[len(under)])
    return out


def test_the_classic_scenario_fields_are_the_readers():
    from kassign.groups import scenario

    heading = "A classic consumer group"
    assert _keys_named("formats.md", heading, ()) == set(scenario._SCENARIO_KEYS)
    assert _keys_named("formats.md", heading, ("members", "MEMBER")) == set(scenario._MEMBER_KEYS)


def test_the_consumer_and_share_scenario_fields_are_the_readers():
    from kassign.groups import scenario

    consumer = "A consumer-protocol group (KIP-848)"
    assert _keys_named("formats.md", consumer, ()) <= set(scenario._SCENARIO_KEYS)
    assert _keys_named("formats.md", consumer, ("members", "MEMBER")) == set(scenario._MEMBER_KEYS) - {"generation"}
    share = "A share group (KIP-932)"
    assert _keys_named("formats.md", share, ()) == (set(scenario._SCENARIO_KEYS) - {"partition_racks"}) | {
        "initialized"}
    assert _keys_named("formats.md", share, ("members", "MEMBER")) == set(scenario._MEMBER_KEYS) - {"generation"}


def test_the_streams_group_scenario_fields_are_the_readers():
    from kassign.groups.streams import tasks

    heading = "A streams group (KIP-1071)"
    assert _keys_named("formats.md", heading, ()) == set(tasks._SCENARIO_KEYS)
    assert _keys_named("formats.md", heading, ("subtopologies", "SUBTOPOLOGY")) == set(tasks._SUBTOPOLOGY_KEYS)
    assert _keys_named("formats.md", heading, ("members", "MEMBER")) == set(tasks._MEMBER_KEYS)


def test_the_kafka_streams_scenario_fields_are_the_readers():
    from kassign.groups.streams.classic import scenario

    heading = "A Kafka Streams application"
    assert _keys_named("formats.md", heading, ()) == set(scenario._SCENARIO_KEYS)
    assert _keys_named("formats.md", heading, ("subtopologies", "SUBTOPOLOGY")) == {
        "partitions", "stateful", "source_topics", "changelog_topics"}
    assert _keys_named("formats.md", heading, ("clients", "PROCESS")) == set(scenario._CLIENT_KEYS)
    assert _keys_named("formats.md", heading, ("clients", "PROCESS", "consumers", "MEMBER")) == set(
        scenario._CONSUMER_KEYS)


def test_the_reassignment_document_fields_are_the_readers():
    named = _keys_named("formats.md", "Reassignment documents", ("partitions", "[]"))
    assert named == {"topic", "partition", "replicas", "log_dirs"}
    assert _keys_named("formats.md", "Reassignment documents", ()) == {"version", "partitions"}


# -- what kassign writes ------------------------------------------------------------------------------------------

def kassign(*args: str, cwd: Path = ROOT) -> dict:
    """``kassign ARGS --json``'s document (the command run as users run it, from this checkout's source)."""
    env = {**os.environ, "KASSIGN_PLAN_DETERMINISTIC": "1", "COLUMNS": "110"}
    done = subprocess.run([sys.executable, "-m", "kassign.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def assert_named(document: dict, *headings: str, page: str = "outputs.md") -> None:
    missing = undocumented(document, fields(page, *headings))
    assert not missing, (f"docs/{page} ({', '.join(headings)}) names no field for: {', '.join(missing)}; "
                         "state each in the reference")


PARTITION_RUNS = {
    "java": ["-n", "12", "user-1", "--json"],
    "named partitioner": ["-n", "12", "-P", "sarama:hash", "user-1", "--json"],
    "kafkajs legacy": ["-n", "12", "-P", "kafkajs:legacy", "user-1", "--json"],
    "librdkafka": ["-n", "12", "-P", "librdkafka:consistent", "user-1", "--json"],
    "compare": ["-n", "12", "--compare", "java,librdkafka:consistent_random,sarama:hash", "user-1", "user-8", "--json"],
    "keyless": ["--keyless", "--partitioner-rack-aware", "--client-rack", "rack-a", "--leader-racks",
                "rack-a,rack-b,,-", "--json"],
    "keys and keyless": ["-n", "4", "--keyless", "--kafka-version", "3.2", "user-1", "--json"],
}


@pytest.mark.parametrize("args", PARTITION_RUNS.values(), ids=PARTITION_RUNS)
def test_partition_json_fields_are_in_the_reference(args):
    assert_named(kassign("partition", *args), "kassign partition")


ASSIGN_RUNS = {
    "classic": ["-s", "sticky", str(DOC_EXAMPLES / "classic-group.json")],
    "classic report": ["-s", "cooperative-sticky", str(DOC_EXAMPLES / "classic-group.json"), "--report"],
    "classic, a user's release-free assignor": ["-s", "load-aware", str(EXAMPLES / "seeds-range.json")],
    "consumer report": ["--protocol", "consumer", "-s", "uniform", str(EXAMPLES / "kafka4-uniform-heterogeneous.json"),
                        "--report"],
    "share": ["--protocol", "share", "-s", "simple", str(DOC_EXAMPLES / "share-group.json")],
    "streams group": ["--protocol", "streams", "-s", "sticky", str(DOC_EXAMPLES / "streams-group.json")],
    "kafka streams": ["--protocol", "classic-streams", "-s", "high-availability",
                      str(DOC_EXAMPLES / "kafka-streams-app.json")],
}


@pytest.mark.parametrize("args", ASSIGN_RUNS.values(), ids=ASSIGN_RUNS)
def test_assign_json_fields_are_in_the_reference(args):
    assert_named(kassign("assign", *args, "--json"), "kassign assign")


REPLICAS_RUNS = {
    "legacy": ["--brokers", "0:a,1:b,2:c", "--partitions", "3", "--replication-factor", "2", "--start-index", "0"],
    "striped": ["--placer", "striped", "--brokers", "0:a,1:b,2:c:fenced", "--partitions", "3",
                "--replication-factor", "2", "--seed", "7"],
}


@pytest.mark.parametrize("args", REPLICAS_RUNS.values(), ids=REPLICAS_RUNS)
def test_replicas_json_fields_are_in_the_reference(args):
    assert_named(kassign("replicas", *args, "--json"), "kassign replicas")


def test_replicas_reassignment_json_is_the_reassignment_document():
    document = kassign("replicas", "--brokers", "0,1,2", "--partitions", "3", "--replication-factor", "2",
                       "--start-index", "0", "--topic", "orders", "--reassignment-json")
    assert_named(document, "Reassignment documents", page="formats.md")


def test_plan_json_fields_are_in_the_reference(tmp_path):
    sizes = tmp_path / "sizes.json"
    sizes.write_text(json.dumps({"events": [900, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]}))
    brokers = "0:rack-a,1:rack-b,2:rack-c,3:rack-a,4:rack-b,5:rack-c,6:rack-a,7:rack-b"
    by_bytes = kassign("plan", "--current", str(DOC_EXAMPLES / "events.json"), "--brokers", brokers,
                       "--sizes", str(sizes), "--batches", "2", "--json")
    assert "bytes_least_max" in by_bytes["summary"] and "steps" in by_bytes
    assert_named(by_bytes, "kassign plan")
    for document in [by_bytes["proposed"], *by_bytes["steps"]]:
        assert_named(document, "Reassignment documents", page="formats.md")
    counts = kassign("plan", "--current", str(DOC_EXAMPLES / "current.json"), "--brokers", brokers + ",8:rack-c",
                     "--max-moves", "6", "--exclude", "8", "--out", str(tmp_path / "plan.json"), "--plot",
                     str(tmp_path / "plan.png"), "--json")
    assert set(counts["files"]) == {"plan", "rollback", "plot"}
    assert_named(counts, "kassign plan")
    for name in ("plan.json", "plan-rollback.json"):
        assert_named(json.loads((tmp_path / name).read_text()), "Reassignment documents", page="formats.md")
    capacity = tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"default": {"max_replicas": 6, "network_out_bytes_per_s": 9},
                                    "brokers": {"1": {"disk_bytes": 10_000}}}))
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"events": {str(p): 10 + p for p in range(12)}}))
    goals = kassign("plan", "--current", str(DOC_EXAMPLES / "events.json"), "--brokers", "0,1,2,3,4,5", "--sizes",
                    str(sizes), "--rates", str(rates), "--capacity", str(capacity), "--report",
                    str(tmp_path / "plan.html"), "--json")
    assert goals["summary"]["goals_solver"] == "milp" and goals["summary"]["inputs"]["rates"]
    assert goals["moves"] and goals["files"]["report"] and (tmp_path / "plan.html").exists()
    assert_named(goals, "kassign plan")
    # too large for the goal programs (2 x 1,200 partitions x 30 brokers variables): the scale path's summary
    big = {"version": 1, "partitions": [{"topic": f"t{p % 3}", "partition": p // 3, "replicas": [p % 20, (p + 7) % 20]}
                                        for p in range(1200)]}
    (tmp_path / "big.json").write_text(json.dumps(big))
    (tmp_path / "big-rates.json").write_text(json.dumps({f"t{t}": {str(p): 1 + (p * 37 + t) % 97 for p in range(400)}
                                                        for t in range(3)}))
    scale = kassign("plan", "--current", str(tmp_path / "big.json"), "--brokers", ",".join(map(str, range(30))),
                    "--rates", str(tmp_path / "big-rates.json"), "--json")
    assert scale["summary"]["goals_solver"] == "scale" and "moves_bound" in scale["summary"]
    assert_named(scale, "kassign plan")


SIMULATIONS = {
    "classic": ("seeds-sticky-vs-roundrobin.yaml", "Classic and consumer-protocol groups"),
    "static members": ("static-membership.yaml", "Classic and consumer-protocol groups"),
    "consumer protocol": ("consumer-protocol.yaml", "Classic and consumer-protocol groups"),
    "share group": ("share-group-timeline.yaml", "Share groups"),
    "streams group": ("streams-group-timeline.yaml", "Streams groups"),
    "kafka streams": ("streams-restart.yaml", "Kafka Streams applications"),
    "kafka streams, racks": ("streams-rack-aware.yaml", "Kafka Streams applications"),
}


@pytest.mark.parametrize("timeline, heading", SIMULATIONS.values(), ids=SIMULATIONS)
def test_simulate_json_fields_are_in_the_reference(timeline, heading, tmp_path):
    document = kassign("simulate", str(EXAMPLES / timeline), "--json", "--out", str(tmp_path / "report"))
    assert document.get("plots"), "the run wrote no report: --out's files are part of the JSON"
    assert_named(document, "Every timeline", heading)


@pytest.mark.parametrize("kind", ["classic", "consumer", "share", "streams"])
def test_describe_group_json_fields_are_in_the_reference(kind):
    """A group of each type as a broker describes it, with lag: Kafka 4.3.1's own answers where they are at hand
    (the captures beside the checkout; the classic group's answer is built and always runs)."""
    from tests.kafka.replay_cluster import replay_group

    broker = replay_group(kind)
    if broker is None:
        pytest.skip(f"the Kafka 4.3.1 captures are not beside the checkout: the {kind} group's answer is a capture")
    try:
        document = kassign("describe-group", "--bootstrap-server", broker.bootstrap, "--group", broker.group,
                           "--json", "--timeout", "10")
    finally:
        broker.stop()
    assert document["group"]["type"] == kind and document["lag"]
    assert_named(document, "kassign describe-group")


def test_json_of_commands_reading_a_cluster_is_in_the_reference():
    """``replicas``, ``partition --keyless`` and ``plan`` read a live topic's layout (a replayed broker here)."""
    from tests.kafka.replay_cluster import replay_group

    broker = replay_group("classic")
    try:
        live = ["--bootstrap-server", broker.bootstrap, "--topic", "orders", "--timeout", "10", "--json"]
        assert_named(kassign("replicas", *live), "kassign replicas")
        assert_named(kassign("partition", *live, "--keyless", "user-1"), "kassign partition")
        assert_named(kassign("plan", *live, "--brokers", "1,2"), "kassign plan")
    finally:
        broker.stop()


# -- summary.json: one sample pipeline, every stage with something to say --------------------------------------------

@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """``kassign pipeline`` on a small CSV of two topics: null and empty keys, rows to set aside, two producer
    clients compared, rack-aware keyless producers (Kafka 4.4), brokers in three racks (about 20 s)."""
    pytest.importorskip("pyspark", reason="the pipeline runs on Spark")
    folder = tmp_path_factory.mktemp("reference-pipeline")
    rows = ["user,bytes,topic"]
    for i in range(3000):
        key = "" if i % 20 == 0 else f"user-{(i * 7919) % 300 if i % 3 else i % 7}"
        rows.append(f"{key},{50 + i % 200},{'orders' if i % 3 else 'payments'}")
    rows += ["bob,-5,orders", '"eve,40,orders', "frank,12,9,orders"]
    (folder / "in.csv").write_text("\n".join(rows) + "\n")
    document = kassign("pipeline", "in.csv", "--key-column", "user", "--size-column", "bytes", "--topic-column",
                       "topic", "--null-value", "", "-p", "6", "--members", "3", "--producers",
                       "java,librdkafka:consistent_random", "--partitioner-rack-aware", "--client-rack",
                       "rack-a,rack-c", "--brokers", "0:rack-a,1:rack-b,2:rack-c", "--replication-factor", "2",
                       "--max-partitions", "12", "--out", "out", "--json", cwd=folder)
    return document, json.loads((folder / "out" / "summary.json").read_text())


def test_pipeline_json_is_summary_json(pipeline):
    printed, written = pipeline
    assert printed == written


def test_summary_json_fields_are_in_the_reference(pipeline):
    _, summary = pipeline
    for part in ("set_aside", "producers", "keyless_racks"):
        assert summary[part], f"the run was meant to fill {part}"
    assert_named(summary, "summary.json", "A live group: group, group_check, lag")


# -- the reference vectors -----------------------------------------------------------------------------------------

SCENARIO_OF = {"assign-range": "A classic consumer group", "assign-roundrobin": "A classic consumer group",
               "assign-sticky": "A classic consumer group", "assign-cooperative-sticky": "A classic consumer group",
               "assign-uniform": "A consumer-protocol group (KIP-848)",
               "assign-range-server": "A consumer-protocol group (KIP-848)", "assign-share": "A share group (KIP-932)",
               "assign-streams": "A streams group (KIP-1071)", "assign-streams-client": "A Kafka Streams application"}


def test_reference_vector_lines_are_in_the_reference():
    """Every field of every line of every vector file, and of the scenario documents they carry (where the vectors
    are beside the checkout)."""
    from tests.conftest import VECTORS

    if not VECTORS.is_dir():
        pytest.skip(f"the reference vectors are not beside the checkout ({VECTORS})")
    named = fields("vectors.md", "Line formats")
    for path in sorted(VECTORS.rglob("*.jsonl")):
        kind = re.sub(r"-(rare|rack)$", "", path.stem)
        scenario_fields = fields("formats.md", SCENARIO_OF[kind]) if kind in SCENARIO_OF else None
        for number, line in enumerate(path.read_text().splitlines(), 1):
            document = json.loads(line)
            own = {k: (None if k in ("scenario", "expected", "kafka_result") else v) for k, v in document.items()}
            missing = undocumented(own, named)
            if scenario_fields is not None and "scenario" in document:
                missing += [f"scenario.{m}" for m in undocumented(document["scenario"], scenario_fields)]
            assert not missing, (f"{path.relative_to(VECTORS)} line {number}: the reference names no field for "
                                 f"{missing}")
