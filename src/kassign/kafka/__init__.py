"""kassign's own Kafka client: what reading live topics needs, and nothing more.

Why not librdkafka (confluent-kafka)? Exact accounting needs what a consumer library hides: batch
boundaries, transaction markers, the aborted-transaction lists of Fetch answers, the high watermark
and last stable offset of every answer. Deadlines must bound every call, and reading must never create
a topic. And decoding record batches in numba straight into Arrow columns is an order of magnitude
faster than building a Python object per record (``bench/bench_kafka_read.py``).

Layers, lowest first: ``wire`` (the protocol's primitive types), ``config`` (client properties as the
Kafka tools take them), ``connection`` (one broker: TCP or TLS, SASL, versions, deadlines), ``protocol``
(the requests sent and their answers), ``records`` and ``legacy`` (record batches into columns), ``client``
(planning a read, reading a range with its accounting, a group's committed offsets).

Groups of every type (the manual's "Every group type, live"): ``flexible`` (the compact types and
tagged fields of flexible versions), ``groups_protocol`` (ApiVersions with features, ListGroups,
DescribeGroups, OffsetFetch, ConsumerGroupDescribe, ShareGroupDescribe, DescribeShareGroupOffsets,
StreamsGroupDescribe), ``topics_protocol`` (Metadata and Fetch up to their newest versions) and
``groups`` (``describe_group``, ``share_start_offsets``, ``release_hints``).

Balancing a live cluster: ``cluster_protocol`` (DescribeLogDirs, DescribeCluster, DescribeConfigs, every version)
and ``cluster_inputs`` (``read_cluster``: placement, racks, in-sync replicas, replica sizes, disks, sampled write
rates and the capacity document, each with where it came from).
"""
