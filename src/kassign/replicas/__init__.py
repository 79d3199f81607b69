"""replica -> broker: Kafka's replica placement (ZooKeeper-era AdminUtils and the KRaft controller's striped
placer), broker lists as users write them, and reassignment plans with provably the fewest moves."""
