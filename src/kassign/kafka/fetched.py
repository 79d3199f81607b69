"""One partition's records in a Fetch answer, whatever their message format.

The rule: the answer is indexed once; if every batch is message format v2 (Kafka 0.11 and later)
the v2 decoder (``kassign.kafka.records``) reads it alone, else the answer mixes in v0/v1 message
sets (old segments still on disk) and ``kassign.kafka.legacy`` walks it, handing v2 batches back to
the v2 decoder. Both formats' decoders sit below this module, so neither imports the other's caller.

Example: an answer holding a v1 message set at offsets 0-2 and a v2 batch at 3-5, read for [1, 5),
gives offsets 1, 2 (legacy) and 3, 4 (v2), in one set of columns.
"""

from __future__ import annotations

import numpy as np

from kassign.kafka import legacy
from kassign.kafka import records as R


def decode(records: memoryview | bytes | None, lo: int, hi: int, read_committed: bool = False,
           aborted: list[tuple[int, int]] | None = None, where: str = "") -> R.Decoded:
    """The records of one partition's Fetch answer with offsets in ``[lo, hi)`` (the rule: ``kassign.kafka.records``)."""
    if not records:
        return R.empty()
    buf = np.frombuffer(records, np.uint8)
    count, whole_end = R._index(buf, 0, len(buf))
    if count == 0:
        return R.empty()
    headers = np.zeros((count, R.H_FIELDS), np.int64)
    R._headers(buf, 0, count, headers)
    magics = headers[:, R.H_MAGIC]
    if (magics != 2).any():
        return legacy.decode_mixed(buf, headers, lo, hi, read_committed, aborted or [], where)
    return R.decode_v2(buf, headers, lo, hi, read_committed, aborted or [], where)
