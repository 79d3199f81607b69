"""``kassign partition``: the partition a producer client's partitioner picks for each key.

One partitioner (``--partitioner``, default Kafka's Java producer) shows each key's hash and
partition; ``--compare A,B,...`` puts one column per client beside each key and marks the keys
the clients send to different partitions. Keys come from the arguments, from stdin (``-``) or
from ``--keys-file`` (one per line), serialised as ``--key-type`` says.
"""

from __future__ import annotations

import base64
import binascii
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from kassign.producer import hashing
from kassign.cli.common import emit_json, json_option, print_table
from kassign.producer.clients import NAMES, NOT_HASHED, ClientPartitioner, resolve, resolve_list
from kassign.core.errors import KassignError, shown
from kassign.producer.keys import INT_WIDTHS, KEY_TYPES, serialize_key
from kassign.core.limits import JAVA_INT_MAX

BATCH_FROM = 1000  # from this many keys on, the numba batch path beats per-key Python (after its start-up)
NOT_HASHED_NOTE = "-1: this client does not hash the key; it picks the partition itself (random, sticky or in turn)"


def _decode(key: str, key_type: str, encoding: str | None) -> bytes:
    """One command-line key as the bytes the producer's serialiser writes."""
    try:
        if encoding == "hex":
            return bytes.fromhex(key)
        if encoding == "base64":
            return base64.b64decode(key, validate=True)
    except (ValueError, binascii.Error):
        raise KassignError(f"key {key!r} is not valid {encoding}") from None
    if key_type in INT_WIDTHS:
        try:
            number = int(key.strip())
        except ValueError:
            raise KassignError(f"key {key!r} is not a whole number (--key-type {key_type})") from None
        return serialize_key(number, key_type)
    # what the user typed, byte for byte: the shell's bytes that are not UTF-8 come back as they were
    return key.encode("utf-8", "surrogateescape")


def _key_encoding(key_type: str | None, encoding: str | None) -> tuple[str, str | None]:
    """(key type, how bytes keys are written): --hex/--base64 mean bytes; bytes default to hex."""
    if encoding and key_type not in (None, "bytes"):
        raise KassignError(f"--{encoding} gives raw bytes; it does not go with --key-type {key_type}")
    if encoding:
        return "bytes", encoding
    if key_type == "bytes":
        return "bytes", "hex"
    return key_type or "string", None


def _read_lines(text: str) -> list[str]:
    """One key a line; an empty line is the empty key, and a final newline ends the last key."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _key_texts(keys: Sequence[str], keys_file: str | None) -> list[str]:
    if keys_file is not None and keys:
        raise KassignError("give keys as arguments or with --keys-file, not both")
    if keys_file is not None:
        try:
            return _read_lines(Path(keys_file).read_text(encoding="utf-8"))
        except OSError as err:
            raise KassignError(f"cannot read --keys-file {keys_file!r}: {err.strerror or err}") from None
        except UnicodeDecodeError:
            raise KassignError(f"--keys-file {keys_file!r} is not UTF-8 text; "
                               "write raw keys as hex with --hex") from None
    if list(keys) == ["-"]:
        lines = _read_lines(sys.stdin.read())
        if not lines:
            raise KassignError("no keys on stdin (one key a line)")
        return lines
    if not keys:
        raise KassignError("Missing argument KEY...: give keys as arguments, '-' to read stdin, "
                           "or --keys-file PATH (one a line)")
    return list(keys)


def _partitions(raw: list[bytes], n: int, client: ClientPartitioner) -> list[int]:
    if len(raw) >= BATCH_FROM:
        from kassign.producer.partitioner import partitions_for_keys

        return partitions_for_keys(raw, n, client).tolist()
    return [client.partition(key, n) for key in raw]


def _hashes(raw: list[bytes], client: ClientPartitioner) -> list[int]:
    """The client's hash per key: murmur2 signed as Kafka prints it, the others unsigned."""
    if len(raw) >= BATCH_FROM:
        from kassign.producer.partitioner import hashes_for_keys

        signed = hashes_for_keys(raw, client.hash_kind).tolist()
        return signed if client.hash_kind == hashing.MURMUR2 else [h & hashing.MASK32 for h in signed]
    values = [client.hash32(key) for key in raw]
    if client.hash_kind == hashing.MURMUR2:
        return [h - (1 << 32) if h & hashing.SIGN32 else h for h in values]
    return values


def _hash_column(client: ClientPartitioner) -> str:
    return {hashing.KAFKAJS_LEGACY: "kafkajs-legacy"}.get(client.hash_kind, hashing.HASH_NAMES[client.hash_kind])


@click.command("partition")
@click.option("--partitions", "-n", "-p", "num_partitions", type=int, default=None,
              help="Partition count of the topic (or read it from a cluster with --bootstrap-server and --topic).")
@click.option("--topic", default=None, help="With --bootstrap-server: the topic whose partition count to use.")
@click.option("--bootstrap-server", default=None, metavar="HOST:PORT", help="Read the partition count from this cluster.")
@click.option("--command-config", default=None, metavar="FILE", help="Client properties (security settings) for --bootstrap-server.")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="Seconds to wait for the cluster.")
@click.option("--partitioner", "-P", default=None, metavar="CLIENT:NAME",
              help=f"Producer partitioner (default java). One of: {', '.join(NAMES)}.")
@click.option("--compare", default=None, metavar="A,B,...",
              help="Compare partitioners: a column each and a column marking keys they place differently.")
@click.option("--key-type", type=click.Choice(KEY_TYPES), default=None,
              help="Key serialiser: string (UTF-8, default), bytes (hex, or --base64), int (4 bytes), long (8 bytes).")
@click.option("--hex", "hex_keys", is_flag=True, help="Keys are hex-encoded bytes.")
@click.option("--base64", "base64_keys", is_flag=True, help="Keys are base64-encoded bytes.")
@click.option("--keys-file", type=click.Path(dir_okay=False), default=None, help="Read keys from a file, one a line.")
@json_option
@click.argument("keys", nargs=-1)
def command(num_partitions: int | None, topic: str | None, bootstrap_server: str | None, command_config: str | None,
            timeout: float, partitioner: str | None, compare: str | None, key_type: str | None,
            hex_keys: bool, base64_keys: bool, keys_file: str | None, as_json: bool, keys: tuple[str, ...]) -> None:
    """Partition for each KEY ('-' reads keys from stdin, one a line), as a producer's partitioner picks it.

    Put negative integer keys after '--', e.g. kassign partition -n 12 --key-type long -- -1 42.
    """
    num_partitions = _partition_count(num_partitions, topic, bootstrap_server, command_config, timeout)
    if num_partitions < 1:
        raise KassignError(f"--partitions must be at least 1, got {num_partitions}")
    if num_partitions > JAVA_INT_MAX:
        raise KassignError(f"--partitions must be from 1 to {JAVA_INT_MAX} (Kafka keeps a topic's partition count "
                           f"in a Java int), got {shown(num_partitions)}")
    if partitioner is not None and compare is not None:
        raise KassignError("give --partitioner or --compare, not both")
    if hex_keys and base64_keys:
        raise KassignError("give --hex or --base64, not both")
    key_type, encoding = _key_encoding(key_type, "hex" if hex_keys else "base64" if base64_keys else None)
    texts = _key_texts(keys, keys_file)
    raw = [_decode(text, key_type, encoding) for text in texts]
    if compare is not None:
        _compare(texts, raw, num_partitions, resolve_list(compare), as_json)
    else:
        _single(texts, raw, num_partitions, resolve(partitioner), partitioner is not None, as_json)


def _partition_count(given: int | None, topic: str | None, bootstrap: str | None, command_config: str | None,
                     timeout: float) -> int:
    """``--partitions``, or the topic's partition count as the cluster's metadata has it."""
    if bootstrap is None:
        if given is None:
            raise KassignError("missing --partitions N (or read it from a cluster with --bootstrap-server and --topic)")
        if topic is not None:
            raise KassignError("--topic reads the partition count from a cluster: it needs --bootstrap-server")
        return given
    if given is not None:
        raise KassignError("give --partitions or --bootstrap-server with --topic, not both")
    if not topic:
        raise KassignError("--bootstrap-server needs --topic NAME")
    if timeout <= 0:
        raise KassignError(f"--timeout must be positive, got {timeout:g}")
    from kassign.kafka import metadata as live

    config = live.read_command_config(command_config) if command_config else None
    return live.partition_counts(bootstrap, [topic], config=config, timeout=timeout)[topic]


def _single(texts: list[str], raw: list[bytes], n: int, client: ClientPartitioner, named: bool, as_json: bool) -> None:
    column = _hash_column(client)
    partitions = _partitions(raw, n, client)
    rows = [{"key": t, column: h, "partition": p} for t, h, p in zip(texts, _hashes(raw, client), partitions)]
    notes = [f"partitioner {client.name}: {client.rule}"] if named else []
    notes += [NOT_HASHED_NOTE] if NOT_HASHED in partitions else []
    if as_json:
        document = {"partitions": n, "keys": rows}
        if named:
            document = {"partitions": n, "partitioner": client.name, "keys": rows}
        emit_json(document)
        return
    print_table(f"key -> partition ({n} partitions)", ["key", column, "partition"],
                [[r["key"], r[column], r["partition"]] for r in rows], notes=notes)


def _compare(texts: list[str], raw: list[bytes], n: int, clients: list[ClientPartitioner], as_json: bool) -> None:
    columns = {client.name: _partitions(raw, n, client) for client in clients}
    rows = []
    for i, text in enumerate(texts):
        placed = {name: values[i] for name, values in columns.items()}
        # A client that does not hash the key may put it anywhere: that never counts as agreeing.
        agree = len(set(placed.values())) == 1 and NOT_HASHED not in placed.values()
        rows.append({"key": text, "partitions": placed, "agree": agree})
    differing = sum(not r["agree"] for r in rows)
    if as_json:
        emit_json({"partitions": n, "partitioners": list(columns), "keys": rows, "differing_keys": differing})
        return
    notes = [NOT_HASHED_NOTE] if any(NOT_HASHED in v for v in columns.values()) else []
    print_table(f"key -> partition by client ({n} partitions)", ["key", *columns, "differs"],
                [[r["key"], *r["partitions"].values(), "" if r["agree"] else "*"] for r in rows],
                caption=f"{differing} of {len(rows)} keys land on different partitions (*)", notes=notes)
