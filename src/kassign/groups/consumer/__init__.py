"""The KIP-848 consumer group (``group.protocol=consumer``): the group coordinator's own assignors
(``uniform``, ``range``), the group as it hands it to them, and the coordinator's side of the protocol."""
