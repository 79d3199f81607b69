"""Kafka 4's newer group types, assigned by the broker: one package per group type."""
