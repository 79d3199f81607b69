"""``kassign partition``: the partition Kafka's default partitioner picks for each key."""

from __future__ import annotations

import base64
import binascii

import click

from kassign.cli.common import emit_json, json_option, print_table
from kassign.errors import KassignError
from kassign.partitioner import murmur2, to_positive


def _decode(key: str, encoding: str) -> bytes:
    try:
        if encoding == "hex":
            return bytes.fromhex(key)
        if encoding == "base64":
            return base64.b64decode(key, validate=True)
    except (ValueError, binascii.Error):
        raise KassignError(f"key {key!r} is not valid {encoding}") from None
    return key.encode("utf-8")


@click.command("partition")
@click.option("--partitions", "-n", "num_partitions", type=int, required=True, help="Partition count of the topic.")
@click.option("--hex", "encoding", flag_value="hex", help="Keys are hex-encoded bytes.")
@click.option("--base64", "encoding", flag_value="base64", help="Keys are base64-encoded bytes.")
@json_option
@click.argument("keys", nargs=-1, required=True)
def command(num_partitions: int, encoding: str | None, as_json: bool, keys: tuple[str, ...]) -> None:
    """Partition for each KEY (UTF-8 text unless --hex/--base64), as Kafka's default partitioner picks it."""
    if num_partitions < 1:
        raise KassignError(f"--partitions must be at least 1, got {num_partitions}")
    rows = []
    for key in keys:
        hashed = murmur2(_decode(key, encoding or "utf-8"))
        rows.append({"key": key, "murmur2": hashed, "partition": to_positive(hashed) % num_partitions})
    if as_json:
        emit_json({"partitions": num_partitions, "keys": rows})
    else:
        print_table(
            f"key -> partition ({num_partitions} partitions)",
            ["key", "murmur2", "partition"],
            [[r["key"], r["murmur2"], r["partition"]] for r in rows],
        )
