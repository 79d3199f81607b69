"""The stages of ``kassign pipeline``, one module each, in the order the driver (``kassign.spark.pipeline``)
runs them: see ``kassign.spark.stages.base`` for the shape they share, and docs/pipeline.md for the list."""
