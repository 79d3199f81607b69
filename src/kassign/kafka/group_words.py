"""How every output names a group's type and what kassign's check of it compares: one wording for
``kassign describe-group``, the pipeline's terminal summary and its report (a light module: the check
itself, :mod:`kassign.kafka.group_check`, loads the live client; these words need nothing).

Example: ``group_type_words("share")`` is ``"a share group (KIP-932)"``; a consumer group's check compares
its ``checked_assignment("consumer")``, ``"target assignment"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GROUP_TYPE_WORDS = {"classic": "a classic consumer group", "consumer": "a consumer group (KIP-848 protocol)",
                    "share": "a share group (KIP-932)", "streams": "a streams group (KIP-1071)"}


def group_type_words(group_type: str | None) -> str:
    """``a share group (KIP-932)``: what a group of this type is, in the words every output uses."""
    return GROUP_TYPE_WORDS.get(group_type or "", "a group")


def checked_assignment(group_type: str | None) -> str:
    """What the check compares: the coordinator's *target* for the groups whose coordinator assigns and
    reconciles towards it (consumer, streams), the handed-out assignment otherwise."""
    return "target assignment" if group_type in ("consumer", "streams") else "assignment"


def check_assignor(check: Mapping[str, Any]) -> str:
    """The assignor the check ran (a streams group names none: its coordinator's is ``sticky``)."""
    return check.get("assignor") or "sticky"
