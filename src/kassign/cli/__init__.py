"""kassign's command line: one module per command, registered in ``main``."""
