"""kassign's assignors inside real consumers, at a short path that stays put: :mod:`kassign.clients.kafka_python`
(kafka-python) and :mod:`kassign.clients.aiokafka` (aiokafka). Each imports its client library when imported;
``import kassign`` never does."""
