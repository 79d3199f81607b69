"""``kassign replicas``: Kafka's replica placement over a broker list."""

from __future__ import annotations

import click

from kassign.cli.common import emit_json, json_option, print_table
from kassign.core.errors import KassignError, ReplicaPlacementError
from kassign.core.javarandom import random_seed
from kassign.core.charts import check_plot_path, replica_chart
from kassign.replicas.brokers import parse_broker_list, parse_striped_broker_list
from kassign.replicas.placement import assign_replicas, check_topic_name, placement_rule, reassignment_json

HELP = """Place PARTITIONS x REPLICATION-FACTOR replicas on BROKERS, as a Kafka release does.

\b
--kafka-version picks the release (3.0 to 4.4) and, without --placer, its placer:
  3.x AdminUtils, 4.x the striped placer. With neither option: AdminUtils, as Kafka 3.9.
--placer legacy: AdminUtils' placement, as ZooKeeper-mode topic creation (3.x) and
  kafka-reassign-partitions.sh --generate (3.0 to 4.0) use it; rack-aware when every
  broker has a rack. Brokers: ID or ID:RACK. Kafka 4.1 and later have no AdminUtils.
--placer striped: the KRaft controller's StripedReplicaPlacer, as topic creation and
  partition addition on KRaft use it (and --generate from 4.1). Brokers: ID, ID:RACK,
  ID:RACK:fenced or ID:fenced, in the order the controller lists them; a fenced broker
  may hold a follower, never the leader. --seed seeds its java.util.Random (without it a
  random seed is drawn and reported, so the run can be repeated); --start-index does not
  apply. Default release 4.4.

The output names the release and the placer that answered.

With --bootstrap-server HOST:PORT --topic T, read topic T's current replica lists,
leaders and broker racks from a live cluster instead, and report
partitions whose replicas could spread over more racks.
"""


@click.command("replicas", help=HELP)
@click.option("--brokers", "-b", default=None, metavar="ID[:RACK][:fenced],...",
              help="Brokers, e.g. 0:rack1,1:rack3,2 (striped also 3:rack1:fenced, 4:fenced).")
@click.option("--partitions", "-p", type=int, default=None, help="Number of partitions to place (striped: 0 allowed).")
@click.option("--replication-factor", "-r", type=int, default=None, help="Replicas per partition.")
@click.option("--placer", type=click.Choice(["legacy", "striped"]), default=None,
              help="legacy: AdminUtils (ZooKeeper mode; --generate up to 4.0); striped: the KRaft controller. "
                   "Default: the release's (3.x legacy, 4.x striped), legacy without --kafka-version.")
@click.option("--kafka-version", default=None, metavar="MAJOR.MINOR[.PATCH]",
              help="The Kafka release to place as (3.0 to 4.4). Default: 3.9 for legacy, 4.4 for striped.")
@click.option("--start-index", type=int, default=None,
              help="legacy only: first broker position; -1 (the default) = random, as Kafka.")
@click.option("--start-partition", type=int, default=-1, show_default=True, help="First partition id (adding partitions); striped: only numbers them.")
@click.option("--seed", type=int, default=None,
              help="legacy: seed for the random start; striped: the java.util.Random seed (a Java long).")
@click.option("--topic", default=None, help="Topic name, for --reassignment-json.")
@click.option("--reassignment-json", "as_reassignment", is_flag=True, help="Write the JSON kafka-reassign-partitions.sh --execute reads.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              help="Also draw leaders/followers per broker (PNG, SVG or PDF by the extension).")
@click.option("--bootstrap-server", default=None, metavar="HOST:PORT",
              help="Read --topic's current replicas, leaders and racks from this cluster instead.")
@click.option("--command-config", default=None, metavar="FILE", help="Client properties (security settings) for --bootstrap-server.")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="Seconds to wait for the cluster.")
@json_option
def command(brokers: str | None, partitions: int | None, replication_factor: int | None, placer: str | None,
            kafka_version: str | None, start_index: int | None, start_partition: int, seed: int | None,
            topic: str | None, as_reassignment: bool, plot_path: str | None, bootstrap_server: str | None,
            command_config: str | None, timeout: float, as_json: bool) -> None:
    if bootstrap_server is not None:
        show_live(bootstrap_server, topic, command_config, timeout, as_json)
        return
    missing = [name for name, value in (("--brokers", brokers), ("--partitions", partitions),
                                        ("--replication-factor", replication_factor)) if value is None]
    if missing:
        raise KassignError(f"missing {', '.join(missing)} (or read a live cluster with --bootstrap-server and --topic)")
    if as_reassignment and not topic:
        raise KassignError("--reassignment-json needs --topic NAME")
    if topic is not None:
        check_topic_name(topic)
    if plot_path:
        check_plot_path(plot_path)
    chosen = placement_rule(kafka_version, placer)
    placer, release = chosen.placer, chosen.kafka_version
    fenced: set[int] = set()
    note = None
    if placer == "striped":
        if start_index is not None:
            raise KassignError("--start-index applies only to --placer legacy; the striped placer's start comes from --seed")
        striped = parse_striped_broker_list(brokers)
        racks = {b: rack for b, rack, _ in striped}
        fenced = {b for b, _, is_fenced in striped if is_fenced}
        if seed is None:
            seed = random_seed()
            note = f"random seed {seed}; pass --seed {seed} to repeat this placement"
        try:
            placement = assign_replicas(striped, partitions, replication_factor, -1, start_partition,
                                        placer="striped", seed=seed, kafka_version=release)
        except ReplicaPlacementError as err:
            raise KassignError(f"{err.kafka_exception} (Kafka {release}): {err}") from None
    else:
        if any(item.strip().endswith(":fenced") for item in brokers.split(",")):
            raise KassignError("':fenced' brokers only mean something to --placer striped")
        broker_list = parse_broker_list(brokers)
        racks = dict(broker_list)
        try:
            placement = assign_replicas(broker_list, partitions, replication_factor,
                                        -1 if start_index is None else start_index, start_partition, seed=seed,
                                        placer="legacy", kafka_version=release)
        except ReplicaPlacementError as err:
            raise KassignError(f"{err.kafka_exception} (Kafka {release}): {err}") from None
    if plot_path:
        written = replica_chart(placement, racks, plot_path, fenced=fenced)
        click.echo(f"kassign: plot written to {written}", err=True)
    if as_reassignment:
        emit_json(reassignment_json(topic or "", placement))
        click.echo(f"kassign: {chosen.what}", err=True)
        if note:
            click.echo(f"kassign: {note}", err=True)
    elif as_json:
        document: dict = {"assignment": {str(p): replicas for p, replicas in placement.items()},
                          "placer": placer, "kafka_version": release}
        if placer == "striped":
            document["seed"] = seed
        emit_json(document)
    else:
        rows = [[p, ", ".join(map(str, r)),
                 ", ".join((racks[b] or "-") + (" (fenced)" if b in fenced else "") for b in r)]
                for p, r in placement.items()]
        title = "replica placement (first replica = preferred leader)"
        if placer == "striped":
            title = "KRaft striped placement (leader first)"
            caption = note or f"seed {seed}"
        else:
            caption = None
        print_table(title, ["partition", "replicas", "racks"], rows, caption=caption, notes=[chosen.what])


def show_live(bootstrap: str, topic: str | None, command_config: str | None, timeout: float, as_json: bool) -> None:
    """``kassign replicas --bootstrap-server``: the topic's current replicas, leaders and racks."""
    from kassign.kafka import metadata as live

    if not topic:
        raise KassignError("--bootstrap-server needs --topic NAME")
    if timeout <= 0:
        raise KassignError(f"--timeout must be positive, got {timeout:g}")
    config = live.read_command_config(command_config) if command_config else None
    layout = live.read_layout(bootstrap, [topic], config=config, timeout=timeout)
    problems = live.rack_problems(layout)
    partitions = layout.topics[topic]
    if as_json:
        emit_json({
            "topic": topic,
            "brokers": {str(b): rack for b, rack in layout.brokers.items()},
            "partitions": [{"partition": p.partition, "leader": p.leader, "replicas": list(p.replicas),
                            "isr": list(p.isr)} for p in partitions],
            "rack_problems": problems,
        })
        return
    racks = layout.brokers
    rows = [[p.partition, "-" if p.leader is None else p.leader, ", ".join(map(str, p.replicas)),
             ", ".join(racks.get(b) or "-" for b in p.replicas), ", ".join(map(str, p.isr))] for p in partitions]
    print_table(f"{topic}: current replicas on {bootstrap}", ["partition", "leader", "replicas", "racks", "isr"], rows)
    per_broker = [[b, rack or "-", sum(p.leader == b for p in partitions), sum(b in p.replicas for p in partitions)]
                  for b, rack in racks.items()]
    notes = problems or (["racks: not every broker has one, so rack spread is not checked"]
                         if any(r is None for r in racks.values()) else ["rack spread: every partition as spread as it can be"])
    print_table("per broker", ["broker", "rack", "leaders", "replicas"], per_broker, notes=notes)
