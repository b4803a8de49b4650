"""jq, in four one-way layers: values.py (jq's number and document text) <- fast.py (the
direct evaluator of common programs) <- program.py (one command line: guards, prelude, fast
path or libjq.py) <- worker.py (a process pool for programs that may run long) <- command.py
(the `jq` command: options, files, where to run)."""
from . import command  # noqa: F401  (registers jq)
