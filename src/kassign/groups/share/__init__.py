"""Share groups (KIP-932): the broker's ``simple`` assignor (:mod:`.simple`) on a scenario with ``initialized``
(:mod:`.scenario`); :func:`assign_share` and :func:`assign_share_table` are the entry points (:mod:`.api`)."""

from kassign.groups.share.api import assign_share, assign_share_table, share_release

__all__ = ["assign_share", "assign_share_table", "share_release"]
