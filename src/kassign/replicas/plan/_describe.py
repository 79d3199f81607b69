"""Read ``kafka-topics.sh --describe`` text into a current-assignment document.

Partition lines look like (tab-separated; older versions write ``Topic:t`` without a space;
newer ones add ``Elr:``/``LastKnownElr:``; during a reassignment ``Adding Replicas:`` and
``Removing Replicas:`` appear)::

    Topic: orders	Partition: 0	Leader: 1	Replicas: 1,2,3	Isr: 1,2,3

``Replicas`` is the assignment order (its first broker is the preferred leader), which is what
a reassignment file lists; ``Leader`` (the broker leading right now) is not used.
"""

from __future__ import annotations

import re

from kassign.replicas.plan._model import PlanError

_TOPIC = re.compile(r"(?<![A-Za-z])Topic:[ ]*([A-Za-z0-9._-]+)")
_PARTITION = re.compile(r"(?<![A-Za-z])Partition:[ ]*(-?\d+)")
_REPLICAS = re.compile(r"(?<!Adding )(?<!Removing )(?<![A-Za-z])Replicas:[ ]*([\d, ]*)")


def parse_describe(text: str) -> dict:
    """``{"version": 1, "partitions": [...]}`` from ``kafka-topics.sh --describe`` output."""
    partitions = []
    for number, line in enumerate(text.splitlines(), 1):
        partition = _PARTITION.search(line)
        if not partition:
            continue  # topic summary lines, warnings, blank lines
        topic = _TOPIC.search(line)
        replicas = _REPLICAS.search(line)
        if not topic or not replicas:
            raise PlanError(f"describe output line {number}: a partition line needs Topic: and Replicas: "
                            f"fields: {line.strip()!r}")
        ids = [item.strip() for item in replicas.group(1).split(",") if item.strip()]
        if not ids:
            raise PlanError(f"describe output line {number}: partition {partition.group(1)} lists no replicas")
        partitions.append({"topic": topic.group(1), "partition": int(partition.group(1)),
                           "replicas": [int(i) for i in ids]})
    if not partitions:
        raise PlanError("no partition lines (Topic: ... Partition: ... Replicas: ...) found in the describe output; "
                        "pass the text kafka-topics.sh --describe prints")
    return {"version": 1, "partitions": partitions}
