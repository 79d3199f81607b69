"""key -> partition: Kafka's producer partitioner (murmur2), every other client's partitioner, the hash
kernels behind them, record keys as the bytes a producer hashes, and the model of where keyless records go."""
