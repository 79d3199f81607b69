"""Streams groups: Kafka Streams applications. :mod:`.tasks` and :mod:`.sticky` are the broker's own task assignor
of KIP-1071 streams groups (``sticky``, entry :func:`kassign.groups.streams.sticky.assign_streams`); ``classic`` is
the group leader's task assignment under the classic protocol (high-availability, sticky)."""
