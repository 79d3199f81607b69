"""kassign's assignors inside real Kafka consumers.

- :mod:`kassign.groups.classic.clients.kafka_python`: assignors for kafka-python 3.x
  (range, roundrobin, sticky, cooperative-sticky, load-aware, your own);
- :mod:`kassign.groups.classic.clients.aiokafka`: the same for aiokafka, eager strategies only
  (aiokafka has no cooperative rebalancing).

confluent-kafka (librdkafka) cannot run a Python assignor; its members share a group
with these through its built-in ``range``, ``roundrobin`` and ``cooperative-sticky``.

Each submodule imports its client only when imported, and says which extra to install
when the client is missing::

    from kassign.groups.classic.clients.kafka_python import StickyAssignor
    KafkaConsumer("orders", group_id="g", partition_assignment_strategy=[StickyAssignor()])
"""
