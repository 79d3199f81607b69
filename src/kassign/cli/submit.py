"""Entry script for spark-submit: ``spark-submit .../kassign/cli/submit.py pipeline --out DIR [...]``.

spark-submit runs a file, not a console script; this file hands its arguments to the
``kassign`` CLI, whose session then joins the one spark-submit configured.
"""

from kassign.cli.main import main

if __name__ == "__main__":
    main()
