"""sqlite3: SQLite's command-line shell over databases in the script's filesystem.

command.py registers it; the rest is imported when a script first runs it: cli.py (the command
line) <- dot.py (dot-commands), importer.py (.import) <- shell.py (SQL and input) <-
database.py (the guarded connection), output.py (the output modes), native.py (where an error
is in its statement).
"""
from . import command  # noqa: F401  (registers the command)
