"""``kassign replicas``: Kafka's replica placement over a broker list."""

from __future__ import annotations

import click

from kassign.cli.common import emit_json, json_option, print_table
from kassign.errors import KassignError, ReplicaPlacementError
from kassign.plots import replica_chart
from kassign.replicas import assign_replicas, parse_broker_list, reassignment_json


@click.command("replicas")
@click.option("--brokers", "-b", required=True, metavar="ID[:RACK],...", help="Brokers, e.g. 0:rack1,1:rack3,2.")
@click.option("--partitions", "-p", type=int, required=True, help="Number of partitions to place.")
@click.option("--replication-factor", "-r", type=int, required=True, help="Replicas per partition.")
@click.option("--start-index", type=int, default=-1, show_default=True, help="First broker position; -1 = random, as Kafka.")
@click.option("--start-partition", type=int, default=-1, show_default=True, help="First partition id (adding partitions).")
@click.option("--seed", type=int, default=None, help="Seed for the random start, for reproducible output.")
@click.option("--topic", default=None, help="Topic name, for --reassignment-json.")
@click.option("--reassignment-json", "as_reassignment", is_flag=True, help="Write the JSON kafka-reassign-partitions.sh --execute reads.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png", help="Also draw leaders/followers per broker to a PNG.")
@json_option
def command(brokers: str, partitions: int, replication_factor: int, start_index: int, start_partition: int,
            seed: int | None, topic: str | None, as_reassignment: bool, plot_path: str | None, as_json: bool) -> None:
    """Place PARTITIONS x REPLICATION-FACTOR replicas on BROKERS, rack-aware when brokers have racks."""
    if as_reassignment and not topic:
        raise KassignError("--reassignment-json needs --topic NAME")
    broker_list = parse_broker_list(brokers)
    try:
        placement = assign_replicas(broker_list, partitions, replication_factor, start_index, start_partition, seed=seed)
    except ReplicaPlacementError as err:
        raise KassignError(f"{err.kafka_exception}: {err}") from None
    if plot_path:
        replica_chart(placement, dict(broker_list), plot_path)
    if as_reassignment:
        emit_json(reassignment_json(topic or "", placement))
    elif as_json:
        emit_json({"assignment": {str(p): replicas for p, replicas in placement.items()}})
    else:
        racks = dict(broker_list)
        rows = [[p, ", ".join(map(str, r)), ", ".join(str(racks[b] or "-") for b in r)] for p, r in placement.items()]
        print_table("replica placement (first replica = preferred leader)", ["partition", "replicas", "racks"], rows)
