"""Kafka 4's other group types, beside the consumer groups of :mod:`kassign.assignors`."""
