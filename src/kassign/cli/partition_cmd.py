"""``kassign partition``: the partition a producer client's partitioner picks for each key.

One partitioner (``--partitioner``, default Kafka's Java producer) shows each key's hash and
partition; ``--compare A,B,...`` puts one column per client beside each key and marks the keys
the clients send to different partitions. Keys come from the arguments, from stdin (``-``) or
from ``--keys-file`` (one per line), serialised as ``--key-type`` says.

Keyless records (``--keyless``, or any of ``--client-rack``, ``--partitioner-rack-aware``,
``--leader-racks``): where Kafka's Java producer of ``--kafka-version`` can put a record without a key,
partition by partition with its leader's rack (``--leader-racks``, or the cluster's metadata with
``--bootstrap-server``), and which release's rule says so (``kassign.producer.keyless``): every partition
with a leader, or with ``--partitioner-rack-aware`` (4.4, KIP-1123) those led in ``--client-rack`` where
there are any. For example, leaders in ``a,b,c,a,b,c`` and a producer in ``b``: partitions 1 and 4. With
``--queue-sizes`` (batches waiting per partition in the producer; 3.3 and later) the draw is KIP-794's adaptive
one, and each partition's share of the draws is shown; ``--unavailable`` names partitions whose leader is past
``partitioner.availability.timeout.ms``. For example, ``--queue-sizes 5,0,3,0,1``: shares 1, 6, 3, 6 and 5 in 21.
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
@click.option("--keyless", is_flag=True, help="Also say where a record without a key can land (Kafka's Java producer).")
@click.option("--kafka-version", default=None, metavar="MAJOR.MINOR[.PATCH]",
              help="The release whose producer places keyless records (3.0-3.2: KIP-480; 3.3+: KIP-794; default 4.4).")
@click.option("--client-rack", default=None, metavar="RACK", help="Keyless records: the producer's client.rack.")
@click.option("--partitioner-rack-aware", is_flag=True,
              help="Keyless records: partitioner.rack.aware=true (Kafka 4.4, KIP-1123).")
@click.option("--leader-racks", default=None, metavar="RACK,...",
              help="Keyless records: each partition's leader's rack, in partition order ('' for a leader without a "
                   "rack, '-' for no leader); with --bootstrap-server, read from the cluster instead.")
@click.option("--queue-sizes", default=None, metavar="N,...",
              help="Keyless records: batches waiting in the producer per partition, in partition order (Kafka 3.3+, "
                   "KIP-794's adaptive draw favours short queues).")
@click.option("--unavailable", default=None, metavar="P,...",
              help="Keyless records, with --queue-sizes: partitions whose leader has not been ready for "
                   "partitioner.availability.timeout.ms (left out of the adaptive draw).")
@json_option
@click.argument("keys", nargs=-1)
def command(num_partitions: int | None, topic: str | None, bootstrap_server: str | None, command_config: str | None,
            timeout: float, partitioner: str | None, compare: str | None, key_type: str | None,
            hex_keys: bool, base64_keys: bool, keys_file: str | None, as_json: bool, keys: tuple[str, ...],
            keyless: bool = False, kafka_version: str | None = None, client_rack: str | None = None,
            partitioner_rack_aware: bool = False, leader_racks: str | None = None, queue_sizes: str | None = None,
            unavailable: str | None = None) -> None:
    """Partition for each KEY ('-' reads keys from stdin, one a line), as a producer's partitioner picks it.

    Put negative integer keys after '--', e.g. kassign partition -n 12 --key-type long -- -1 42.
    With --keyless (or --client-rack/--partitioner-rack-aware/--leader-racks), also where a keyless record can
    land, as --kafka-version's producer decides; keys are then optional.
    """
    keyless = keyless or partitioner_rack_aware or client_rack is not None or leader_racks is not None \
        or queue_sizes is not None or unavailable is not None
    queues = _parse_ints(queue_sizes, "--queue-sizes") if queue_sizes is not None else None
    slow = _parse_ints(unavailable, "--unavailable") if unavailable is not None else None
    if slow is not None and queues is None:
        raise KassignError("--unavailable needs --queue-sizes: Kafka leaves slow leaders' partitions out of the "
                           "adaptive draw only")
    if keyless:
        from kassign.producer.keyless import check_rack_awareness, keyless_rule
        from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for

        release = release_for(kafka_version or DEFAULT_KAFKA_VERSION, "classic")
        check_rack_awareness(release, partitioner_rack_aware, client_rack)
        keyless_rule(release, partitioner_rack_aware)
    elif kafka_version is not None:
        from kassign.core.releases import release_for

        release_for(kafka_version, "classic")  # keyed records hash alike in every release: only checked
    if leader_racks is not None and bootstrap_server is not None:
        raise KassignError("give --leader-racks or --bootstrap-server (whose metadata names the leaders), not both")
    layout = None
    if bootstrap_server is not None and keyless:
        num_partitions, layout = _cluster_leaders(num_partitions, topic, bootstrap_server, command_config, timeout)
    elif num_partitions is None and leader_racks is not None and bootstrap_server is None:
        num_partitions = len(_parse_leaders(leader_racks))
    elif num_partitions is None and queues is not None and bootstrap_server is None:
        num_partitions = len(queues)
    num_partitions = _partition_count(num_partitions, topic, bootstrap_server, command_config, timeout) \
        if layout is None else num_partitions
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
    answer = None
    if keyless:
        leaders, brokers_racks = layout if layout is not None else (
            _parse_leaders(leader_racks) if leader_racks is not None else None, None)
        answer = keyless_answer(num_partitions, kafka_version, client_rack, partitioner_rack_aware, leaders,
                                brokers_racks, queues, slow)
        if not keys and keys_file is None:
            _print_keyless(answer, as_json)
            return
    texts = _key_texts(keys, keys_file)
    raw = [_decode(text, key_type, encoding) for text in texts]
    if compare is not None:
        _compare(texts, raw, num_partitions, resolve_list(compare), as_json, answer)
    else:
        _single(texts, raw, num_partitions, resolve(partitioner), partitioner is not None, as_json, answer)


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


def _parse_leaders(text: str) -> list:
    """``--leader-racks a,b,,-``: a rack per partition; '' a leader without a rack; '-' no leader."""
    from kassign.producer.keyless import NO_LEADER

    entries = [part.strip() for part in text.split(",")]
    return [NO_LEADER if e == "-" else (e or None) for e in entries]


def _parse_ints(text: str, option: str) -> list[int]:
    """``--queue-sizes 5,0,3``: whole numbers separated by commas."""
    try:
        return [int(part) for part in text.split(",")] if text.strip() else []
    except ValueError:
        raise KassignError(f"{option} takes whole numbers separated by commas, got {text!r}") from None


def _cluster_leaders(given: int | None, topic: str | None, bootstrap: str, command_config: str | None,
                     timeout: float) -> tuple[int, tuple[list, list[str]]]:
    """The topic's partition count, each partition's leader's rack and every broker's rack, from Metadata."""
    from kassign.producer.keyless import NO_LEADER

    if given is not None:
        raise KassignError("give --partitions or --bootstrap-server with --topic, not both")
    if not topic:
        raise KassignError("--bootstrap-server needs --topic NAME")
    if timeout <= 0:
        raise KassignError(f"--timeout must be positive, got {timeout:g}")
    from kassign.kafka import metadata as live

    config = live.read_command_config(command_config) if command_config else None
    layout = live.read_layout(bootstrap, [topic], config=config, timeout=timeout)
    partitions = layout.topics[topic]
    leaders = [NO_LEADER if p.leader is None else layout.brokers.get(p.leader) for p in partitions]
    return len(partitions), (leaders, sorted({r for r in layout.brokers.values() if r}))


def keyless_answer(n: int, kafka_version: str | None, client_rack: str | None, rack_aware: bool,
                   leaders: list | None, broker_racks: list[str] | None, queue_sizes: list[int] | None = None,
                   unavailable: list[int] | None = None) -> dict:
    """Where a keyless record can land, as ``kafka_version``'s producer decides, and why (for the table or JSON);
    with queue sizes, each partition's weight in the adaptive draw."""
    from kassign.core.releases import DEFAULT_KAFKA_VERSION, KIP_480, KIP_1123
    from kassign.producer.keyless import NO_LEADER, keyless_rule, keyless_weights

    version = kafka_version or DEFAULT_KAFKA_VERSION
    rule = keyless_rule(version, rack_aware)
    if leaders is None:
        if rack_aware:
            raise KassignError("--partitioner-rack-aware needs the leaders' racks: --leader-racks RACK,... (one per "
                               "partition) or --bootstrap-server with --topic")
        leaders = [None] * n
    if len(leaders) != n:
        raise KassignError(f"--leader-racks names {len(leaders)} partitions; the topic has {n}")
    known = set(broker_racks or ()) | {r for r in leaders if isinstance(r, str)}
    if rack_aware and client_rack not in known:
        raise KassignError(f"--client-rack {client_rack!r} is no broker's rack (racks: {', '.join(sorted(known)) or 'none'}); "
                           "a producer in a rack without brokers draws among every partition, as without "
                           "--partitioner-rack-aware")
    if queue_sizes is not None and len(queue_sizes) != n:
        raise KassignError(f"--queue-sizes names {len(queue_sizes)} partitions; the topic has {n}")
    weights = keyless_weights(leaders, queue_sizes, unavailable, client_rack, rack_aware, version).tolist()
    targets = [p for p, w in enumerate(weights) if w]
    in_rack = [p for p, r in enumerate(leaders) if rack_aware and r == client_rack]
    led = [p for p, r in enumerate(leaders) if r is not NO_LEADER]
    rules = {KIP_480: "KIP-480's sticky partitioner: a new partition when a record does not fit the batch, never the "
                      "one it leaves",
             KIP_1123: "KIP-1123: the sticky partition is drawn among the partitions led in the producer's rack",
             }
    how = rules.get(rule, "KIP-794's built-in partitioner: a new partition after batch.size bytes")
    if rule == KIP_1123 and not in_rack:
        why = f"no partition is led in {client_rack}: every partition with a leader, as without rack awareness"
    elif rule == KIP_1123:
        why = f"the partitions led in {client_rack}"
    elif len(led) < n:
        why = "every partition with a leader" if led else "no partition has a leader: every partition"
    else:
        why = "every partition"
    answer = {"kafka_version": version, "rule": rule, "client_rack": client_rack,
              "partitioner_rack_aware": rack_aware, "leader_racks": [None if r is NO_LEADER else r for r in leaders],
              "leaderless": [p for p, r in enumerate(leaders) if r is NO_LEADER],
              "partitions": targets, "why": f"Kafka {version}, {how}: {why}"}
    if queue_sizes is not None:
        answer.update(_adaptive(leaders, queue_sizes, unavailable or [], client_rack, rack_aware, version, weights,
                                answer["why"]))
    return answer


def _adaptive(leaders: list, queue_sizes: list[int], unavailable: list[int], client_rack: str | None,
              rack_aware: bool, version: str, weights: list[int], why: str) -> dict:
    """The adaptive draw's part of the answer: weights, shares, and what Kafka's pass did with the sizes given."""
    from kassign.producer.keyless import NO_LEADER, counted_queue_sizes

    counted = counted_queue_sizes(leaders, queue_sizes, unavailable, version).tolist()
    drawn = [p for p, w in enumerate(weights) if w]
    notes = []
    if len({weights[p] for p in drawn}) == 1:
        notes.append("adaptive (KIP-794), every partition it draws from weighted alike")
    else:
        rack = client_rack if rack_aware and any(leaders[p] == client_rack for p in drawn) else None
        longest = max(counted[p] for p in drawn)
        notes.append(f"adaptive (KIP-794), weight = {longest + 1} - queue ({longest}: the longest queue"
                     + (f" led in {rack})" if rack else ")"))
    slow = sorted(set(unavailable))
    waiting = [p for p in slow if leaders[p] is not NO_LEADER and queue_sizes[p] > 0]
    left_out = [p for p in waiting if p not in drawn]
    kept = [p for p in slow if leaders[p] is not NO_LEADER and queue_sizes[p] == 0]
    if left_out:
        notes.append(f"left out, past partitioner.availability.timeout.ms: {', '.join(map(str, left_out))}")
    elif waiting:
        notes.append("every partition with a leader is past partitioner.availability.timeout.ms: none left out, "
                     "a uniform draw")
    if kept:
        notes.append(f"not left out, nothing queued: {', '.join(map(str, kept))}")
    inherited = [p for p, (c, q) in enumerate(zip(counted, queue_sizes)) if c >= 0 and c != q]
    if inherited:
        notes.append("counted with the queue of the partition left out before it (Kafka's pass): "
                     + ", ".join(f"{p} as {counted[p]}" for p in inherited))
    total = sum(weights)
    return {"queue_sizes": list(queue_sizes), "unavailable": slow, "counted_queue_sizes": counted,
            "weights": weights, "shares": [round(w / total, 6) for w in weights], "why": "; ".join([why, *notes])}


def _keyless_rows(answer: dict) -> list[list]:
    leaderless = set(answer["leaderless"])
    targets = set(answer["partitions"])
    rows = [[p, "(no leader)" if p in leaderless else (r or "-"), "yes" if p in targets else "no"]
            for p, r in enumerate(answer["leader_racks"])]
    if "weights" in answer:
        total = sum(answer["weights"])
        slow = set(answer["unavailable"])
        for row, queued, weight in zip(rows, answer["queue_sizes"], answer["weights"]):
            row[1:1] = [f"{queued} (slow)" if row[0] in slow else queued]
            row.append(f"{weight}/{total} = {weight / total:.1%}" if weight else "-")
    return rows


def _print_keyless(answer: dict, as_json: bool) -> None:
    if as_json:
        emit_json({"partitions": len(answer["leader_racks"]), "keyless": answer})
        return
    title = f"keyless records ({len(answer['leader_racks'])} partitions)"
    columns = ["partition", "leader's rack", "keyless records land here"]
    if "weights" in answer:
        columns = ["partition", "queued batches", "leader's rack", "keyless records land here", "share of draws"]
    print_table(title, columns, _keyless_rows(answer), caption=answer["why"])


def _single(texts: list[str], raw: list[bytes], n: int, client: ClientPartitioner, named: bool, as_json: bool,
            keyless: dict | None = None) -> None:
    column = _hash_column(client)
    partitions = _partitions(raw, n, client)
    rows = [{"key": t, column: h, "partition": p} for t, h, p in zip(texts, _hashes(raw, client), partitions)]
    notes = [f"partitioner {client.name}: {client.rule}"] if named else []
    notes += [NOT_HASHED_NOTE] if NOT_HASHED in partitions else []
    if as_json:
        document = {"partitions": n, "keys": rows}
        if named:
            document = {"partitions": n, "partitioner": client.name, "keys": rows}
        if keyless is not None:
            document["keyless"] = keyless
        emit_json(document)
        return
    print_table(f"key -> partition ({n} partitions)", ["key", column, "partition"],
                [[r["key"], r[column], r["partition"]] for r in rows], notes=notes)
    if keyless is not None:
        _print_keyless(keyless, False)


def _compare(texts: list[str], raw: list[bytes], n: int, clients: list[ClientPartitioner], as_json: bool,
             keyless: dict | None = None) -> None:
    columns = {client.name: _partitions(raw, n, client) for client in clients}
    rows = []
    for i, text in enumerate(texts):
        placed = {name: values[i] for name, values in columns.items()}
        # A client that does not hash the key may put it anywhere: that never counts as agreeing.
        agree = len(set(placed.values())) == 1 and NOT_HASHED not in placed.values()
        rows.append({"key": text, "partitions": placed, "agree": agree})
    differing = sum(not r["agree"] for r in rows)
    if as_json:
        document = {"partitions": n, "partitioners": list(columns), "keys": rows, "differing_keys": differing}
        if keyless is not None:
            document["keyless"] = keyless
        emit_json(document)
        return
    notes = [NOT_HASHED_NOTE] if any(NOT_HASHED in v for v in columns.values()) else []
    print_table(f"key -> partition by client ({n} partitions)", ["key", *columns, "differs"],
                [[r["key"], *r["partitions"].values(), "" if r["agree"] else "*"] for r in rows],
                caption=f"{differing} of {len(rows)} keys land on different partitions (*)", notes=notes)
    if keyless is not None:
        _print_keyless(keyless, False)
