"""The pipeline's options and every check that can be made before Spark starts.

Kept apart from ``kassign.spark.pipeline`` with nothing heavy imported at the top (no PySpark, Arrow or
assignor code): ``kassign pipeline`` judges its options with this module alone, then starts Spark's JVM, and
loads the rest of the pipeline while the JVM starts. A bad option is therefore one line before any JVM
exists, and a good run does not wait for its imports before the JVM's start.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kassign.core.errors import KassignError
from kassign.producer.keys import check_key_type

if TYPE_CHECKING:
    from kassign.producer.clients import ClientPartitioner

# The consumer-group strategies the pipeline compares by default (``kassign.spark.loads`` runs them).
STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky", "load-aware", "consumer:uniform",
              "consumer:range", "share:simple")
# The Java producer's models for keyless records (``kassign.spark.nullkeys``), and its batch.size default.
MODELS = ("round-robin", "sticky")
DEFAULT_BATCH_SIZE = 16384

DEFAULT_BROKERS = ((0, "rack-a"), (1, "rack-b"), (2, "rack-c"), (3, "rack-a"), (4, "rack-b"), (5, "rack-c"))
FORMATS = ("parquet", "csv", "json")
_EXTENSIONS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}


@dataclass
class PipelineOptions:
    out: str
    input: str | None = None
    input_format: str | None = None
    key_column: str = "key"
    value_column: str | None = None
    size_column: str | None = None
    topic_column: str | None = None
    rows: int = 3_000_000
    keys: int = 200_000
    skew: float = 0.9
    null_share: float = 0.05
    partitions: int = 12
    null_key_model: str = "sticky"
    batch_size: int = DEFAULT_BATCH_SIZE
    members: int = 4
    scenario: dict | None = None
    strategies: Sequence[str] = STRATEGIES
    brokers: Sequence[tuple[int, str | None]] = DEFAULT_BROKERS
    replication_factor: int = 3
    max_partitions: int = 64
    target_share: float = 0.1
    seed: int = 42
    placer: str = "striped"
    engine: str = "auto"
    producers: Sequence[str] = ()
    key_type: str | None = None
    null_value: str | None = None
    # Tables of one row per record are written only when asked (the CLI asks with --write-partitioned,
    # --write-sample); otherwise the stages read them from Spark's cache.
    write_partitioned: bool = True
    write_sample: bool = True
    extra: dict = field(default_factory=dict)
    # Live topics (docs/live-topics.md): read these topics from this cluster instead of a file or the sample.
    bootstrap: str | None = None
    topics: Sequence[str] = ()
    client_config: Mapping[str, str] | None = None  # client properties (--command-config)
    group: str | None = None  # consumer group whose committed offsets give the lag
    since: Any = None
    last: int | None = None
    forensics: bool = True  # live topics: which producer put each record there (--no-forensics skips it)
    members_from_group: bool = True  # with group and no scenario: the group's live members (CLI: unless --members)
    # The Kafka release the server-side strategies answer as; None: the broker's (live), else the default.
    # It is also the release whose Java producer places keyless records (files and the sample).
    kafka_version: str | None = None
    # The modelled producers' racks (client.rack; producer i, the one of input split i, in client_racks[i % len])
    # and partitioner.rack.aware (Kafka 4.4, KIP-1123). leader_racks: per topic, its leaders' racks in partition
    # order; without it, rack-aware runs take the scenario's partition_racks (first rack of each partition) or
    # the leaders of the pipeline's own replica placement on --brokers.
    client_racks: Sequence[str] = ()
    partitioner_rack_aware: bool = False
    leader_racks: Mapping[str, Sequence[str | None]] | None = None

    @property
    def live(self) -> bool:
        return self.bootstrap is not None


def _detect_format(path: str, explicit: str | None) -> str:
    if explicit:
        if explicit not in FORMATS:
            raise KassignError(f"--format must be one of {', '.join(FORMATS)}, got {explicit!r}")
        return explicit
    suffix = Path(path.rstrip("/")).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    local = Path(path)
    if local.is_dir():
        for child in sorted(local.rglob("*")):
            if child.suffix.lower() in _EXTENSIONS:
                return _EXTENSIONS[child.suffix.lower()]
    return "parquet"


def _is_local_path(path: str) -> bool:
    return "://" not in path and not path.startswith("file:") and not any(c in path for c in "*?[{")


def _local_columns(path: str, fmt: str) -> list[str] | None:
    """Column names of a local Parquet or CSV input, read by pyarrow; None when only Spark can tell.

    JSON lines are left to Spark: its schema is the union over all lines, which a sample cannot promise.
    A local file that pyarrow cannot open as Parquet is an error here, before Spark starts.
    """
    if fmt not in ("parquet", "csv"):
        return None
    try:
        if fmt == "parquet":
            return _parquet_columns(Path(path))
        import pyarrow.dataset as ds

        return list(ds.dataset(path, format=fmt).schema.names)
    except Exception as err:
        if fmt == "parquet":
            detail = " ".join(str(err).split())[:200]
            raise KassignError(f"input {path!r} is not a Parquet file or directory ({detail}); "
                               "give --format csv or --format json for text input") from None
        return None  # unreadable for pyarrow's CSV reader: Spark gets the final word


def _parquet_columns(path: Path) -> list[str]:
    """The columns Spark reads from a Parquet file or directory: the first data file's schema (Spark's part
    files share one), then the ``name=value`` directories it sits in (Spark discovers those as columns).
    Read with ``pyarrow.parquet``, not ``pyarrow.dataset``: the command is still waiting to start Spark's JVM,
    and the dataset module alone takes a quarter of a second to load."""
    import pyarrow.parquet as pq

    first = path if path.is_file() else _first_data_file(path)
    if first is None:
        return []
    columns = list(pq.read_schema(first).names)
    directories = first.relative_to(path).parts[:-1] if first != path else ()
    found = [part.split("=", 1)[0] for part in directories if "=" in part]
    return columns + [name for name in found if name not in columns]


def _first_data_file(directory: Path) -> Path | None:
    """The first file in name order under ``directory``, skipping names starting with '.' or '_' (Spark's
    and Arrow's hidden files: _SUCCESS, checksums, staging directories)."""
    for folder, subfolders, files in os.walk(directory):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith((".", "_")))
        for name in sorted(files):
            if not name.startswith((".", "_")):
                return Path(folder) / name
    return None


def _check_local_input(opts: PipelineOptions) -> None:
    if opts.input is None or not _is_local_path(opts.input):
        return
    path = Path(opts.input)
    if not path.exists():
        raise KassignError(f"cannot read input {opts.input!r}: no such file or directory")
    unreadable = [p for p in ([path] if path.is_file() else [path, *path.rglob("*")])
                  if not os.access(p, os.R_OK | (os.X_OK if p.is_dir() else 0))]
    if unreadable:
        raise KassignError(f"cannot read input {opts.input!r}: permission denied ({unreadable[0]})")
    if path.is_file() and path.stat().st_size == 0:
        raise KassignError(f"input {opts.input!r} is empty")
    columns = _local_columns(opts.input, _detect_format(opts.input, opts.input_format))
    if columns is None:
        return
    for option, name in (("--key-column", opts.key_column), ("--value-column", opts.value_column),
                         ("--size-column", opts.size_column), ("--topic-column", opts.topic_column)):
        if name is not None and name not in columns:
            raise KassignError(f"{option} {name!r} is not a column of the input; columns are: {', '.join(columns)}")


def _check_out(out: str) -> None:
    """--out must be a directory kassign may create or replace: not a file, not someone else's directory."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise KassignError(f"--out {out!r} is a file, not a directory")
    if path.is_dir() and any(path.iterdir()) and not (path / "summary.json").exists():
        raise KassignError(f"--out {out!r} is a directory with other files in it (not an earlier kassign pipeline "
                           "output); give a new or empty directory")
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise KassignError(f"cannot write --out {out!r}: {parent} is not writable")


_JAVA_INT_MAX = 2**31 - 1
MAX_PARTITIONS_PER_TOPIC = 100_000  # the driver keeps a row per partition


def _finite(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise KassignError(f"{name} must be a finite number, got {value}")


def check_options(opts: PipelineOptions) -> None:
    """Everything that can be judged before Spark starts (a cluster session is costly to open for nothing)."""
    _check_out(opts.out)
    if opts.kafka_version is not None:
        from kassign.core.releases import parse_release

        parse_release(opts.kafka_version)  # a release kassign models for some group type; each stage checks its own
    if opts.input is not None and opts.input_format is not None:
        _detect_format(opts.input, opts.input_format)
    if opts.null_value is not None and (opts.input is None or _detect_format(opts.input, opts.input_format) != "csv"):
        raise KassignError("--null-value applies to CSV input only (JSON and Parquet say null themselves)")
    if opts.value_column and opts.size_column:
        raise KassignError("give --value-column or --size-column, not both")
    for name, value in (("--skew", opts.skew), ("--null-share", opts.null_share), ("--target-share", opts.target_share)):
        _finite(name, value)
    if opts.input is None:
        if not 1 <= opts.rows <= 2**62:
            raise KassignError(f"--rows must be >= 1, got {opts.rows}")
        if not 1 <= opts.keys <= _JAVA_INT_MAX:
            raise KassignError(f"--keys must be between 1 and {_JAVA_INT_MAX}, got {opts.keys}")
        if opts.skew < 0:
            raise KassignError(f"--skew must be >= 0 (0 = uniform keys), got {opts.skew}")
        if not 0 <= opts.null_share <= 1:
            raise KassignError(f"--null-share must be between 0 and 1, got {opts.null_share}")
    if not 1 <= opts.partitions <= MAX_PARTITIONS_PER_TOPIC:
        raise KassignError(f"--partitions must be >= 1 and at most {MAX_PARTITIONS_PER_TOPIC:,}, got {opts.partitions}")
    if opts.scenario is None and not 1 <= opts.members <= 100_000:
        raise KassignError(f"--members must be between 1 and 100000, got {opts.members}")
    if opts.max_partitions < 1 or opts.max_partitions > 4096:
        raise KassignError(f"--max-partitions must be between 1 and 4096, got {opts.max_partitions}")
    if not 1 <= opts.batch_size <= _JAVA_INT_MAX:
        raise KassignError(f"--batch-size must be between 1 and {_JAVA_INT_MAX} (batch.size is a Java int), "
                           f"got {opts.batch_size}")
    if not 0 <= opts.seed < 2**63:
        raise KassignError(f"--seed must be between 0 and 2^63-1, got {opts.seed}")
    check_key_type(opts.key_type)
    producer_clients(opts)
    _check_producer_racks(opts)
    if not 0 < opts.target_share <= 1:
        raise KassignError(f"--target-share must be in (0, 1], got {opts.target_share}")
    if not 1 <= opts.replication_factor <= len(opts.brokers):
        raise KassignError(f"--replication-factor must be between 1 and the number of brokers ({len(opts.brokers)}), "
                           f"got {opts.replication_factor}")
    if opts.scenario is not None:
        from kassign.groups.scenario import parse_scenario

        parse_scenario(opts.scenario)  # one-line error for a malformed scenario, before Spark starts
        too_big = {t: n for t, n in opts.scenario["topics"].items() if n > MAX_PARTITIONS_PER_TOPIC}
        if too_big:
            topic, n = next(iter(too_big.items()))
            raise KassignError(f"scenario topic {topic!r} has {n:,} partitions; the pipeline takes at most "
                               f"{MAX_PARTITIONS_PER_TOPIC:,} per topic")
    _check_local_input(opts)
    _check_live(opts)


def producer_release(opts: PipelineOptions) -> str:
    """The release whose Java producer the pipeline models for keyless records (--kafka-version, else 4.4)."""
    from kassign.core.releases import DEFAULT_KAFKA_VERSION

    return opts.kafka_version or DEFAULT_KAFKA_VERSION


def _check_producer_racks(opts: PipelineOptions) -> None:
    """--client-rack, --partitioner-rack-aware and --leader-racks: one line each for what cannot be."""
    from kassign.core.errors import shown
    from kassign.core.releases import release_for
    from kassign.producer.keyless import check_rack_awareness

    if isinstance(opts.client_racks, str):
        opts.client_racks = [r.strip() for r in opts.client_racks.split(",")]
    racks = list(opts.client_racks)
    if not all(isinstance(r, str) and r.strip() for r in racks):
        raise KassignError(f"--client-rack takes rack names (RACK[,RACK...]), got {shown(racks)}")
    if opts.partitioner_rack_aware and opts.null_key_model != "sticky":
        raise KassignError("--partitioner-rack-aware is a setting of the Java producer's sticky partitioner: "
                           f"it does not go with --null-keys {opts.null_key_model}")
    release = release_for(producer_release(opts), "classic")
    check_rack_awareness(release, opts.partitioner_rack_aware, racks[0] if racks else None)
    if opts.live:
        given = [name for name, value in (("--client-rack", racks), ("--partitioner-rack-aware",
                                                                       opts.partitioner_rack_aware),
                                          ("--leader-racks", opts.leader_racks)) if value]
        if given:
            raise KassignError(f"{'/'.join(given)} model{'s' if len(given) == 1 else ''} the producers of a file "
                               "or the sample; a live topic's records are where their producers put them (forensics "
                               "tell rack-aware producers from the leaders' racks in the cluster's metadata)")
        return
    if opts.leader_racks is not None:
        if not isinstance(opts.leader_racks, Mapping):
            raise KassignError(f"leader_racks must map each topic to its leaders' racks, got {shown(opts.leader_racks)}")
        for topic, leaders in opts.leader_racks.items():
            if isinstance(leaders, str) or not isinstance(leaders, Sequence) or not leaders:
                raise KassignError(f"--leader-racks for {topic!r} must list one rack per partition, got {shown(leaders)}")
            if not all(r is None or (isinstance(r, str) and r) for r in leaders):
                raise KassignError(f"--leader-racks for {topic!r}: a rack is a name, or empty for a leader "
                                   f"without one; got {shown(list(leaders))}")
    if racks and opts.partitioner_rack_aware:
        known = {r for _, r in opts.brokers if r}
        for leaders in (opts.leader_racks or {}).values():
            known |= {r for r in leaders if r}
        for (topic, spec) in ((opts.scenario or {}).get("partition_racks") or {}).items():
            known |= {r for replicas in spec for r in replicas if r}
        unknown = [r for r in racks if r not in known]
        if unknown:
            raise KassignError(f"--client-rack {unknown[0]!r} is no broker's rack (racks: {', '.join(sorted(known)) or 'none'}); "
                               "a producer in a rack without brokers draws among every partition, as a rack-unaware "
                               "one: leave it out of --client-rack or drop --partitioner-rack-aware")


def _check_live(opts: PipelineOptions) -> None:
    """Live-topic options, judged before Spark starts."""
    if not opts.live:
        given = [name for name, value in (("--topic", opts.topics), ("--group", opts.group),
                                          ("--since", opts.since), ("--last", opts.last),
                                          ("--command-config", opts.client_config),
                                          ("--no-forensics", not opts.forensics)) if value]
        if given:
            raise KassignError(f"{'/'.join(given)} need{'s' if len(given) == 1 else ''} --bootstrap-server "
                               "(reading live topics)")
        return
    from kassign.kafka.client import parse_bootstrap, parse_since
    from kassign.kafka.config import ClientSettings

    if opts.input is not None:
        raise KassignError("give an INPUT file or --bootstrap-server with --topic, not both")
    if isinstance(opts.topics, str):
        opts.topics = [opts.topics]
    if not opts.topics or not all(isinstance(t, str) and t.strip() for t in opts.topics):
        raise KassignError("--bootstrap-server needs at least one --topic NAME")
    parse_bootstrap(opts.bootstrap)
    if opts.since is not None and opts.last is not None:
        raise KassignError("give --since or --last, not both")
    if opts.since is not None:
        parse_since(opts.since)
    if opts.last is not None and (isinstance(opts.last, bool) or not isinstance(opts.last, int) or opts.last < 1):
        raise KassignError(f"--last must be a whole number >= 1, got {opts.last!r}")
    if opts.group is not None and (not isinstance(opts.group, str) or not opts.group):
        raise KassignError("--group needs a consumer group id")
    ClientSettings.from_properties(opts.client_config)
    if opts.producers:
        raise KassignError("--producers compares clients on a file's records; a live topic gets forensics instead "
                           "(which client put each record where it is)")


def preflight_live(opts: PipelineOptions) -> None:
    """For live topics, plan the read once before Spark starts: an unreachable cluster, refused credentials,
    an unknown topic or nothing to read is one line at once instead of after the JVM's start. (The run
    plans again when it reads, so it reads up to the end offsets of that moment.)"""
    if not opts.live:
        return
    from kassign.kafka.client import Cluster, plan_read
    from kassign.kafka.config import ClientSettings

    with Cluster(opts.bootstrap, ClientSettings.from_properties(opts.client_config)) as cluster:
        plan = plan_read(cluster, opts.topics, since=opts.since, last=opts.last)
    spans = {name: sum(p.end - p.start for p in topic.partitions) for name, topic in plan.topics.items()}
    if not any(spans.values()):
        raise KassignError("nothing to read: " + "; ".join(f"{name} has no records" for name in spans)
                           + (" in the range asked for" if opts.since is not None or opts.last is not None else ""))


def producer_clients(opts: PipelineOptions) -> list[ClientPartitioner]:
    """The partitioners of ``opts.producers`` (a list or one comma-separated string), checked."""
    from kassign.producer.clients import resolve_list

    if not opts.producers:
        return []
    text = opts.producers if isinstance(opts.producers, str) else ",".join(opts.producers)
    return resolve_list(text)
