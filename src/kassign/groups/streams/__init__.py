"""Streams groups (KIP-1071): the broker assigns a Kafka Streams application's tasks to its members.
:mod:`.tasks` reads SPEC section 7's scenario into integers; :mod:`.sticky` is Kafka's assignor ``sticky``
and the entry point :func:`kassign.groups.streams.sticky.assign_streams`."""
