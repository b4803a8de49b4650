"""sqlite3's registration: the shell itself (cli.py and the modules it uses, with Python's
sqlite3 module) is imported when a script first runs it, not when the commands are loaded."""
from __future__ import annotations

from ..registry import Usage, command

USAGE = Usage("[OPTIONS] FILENAME [SQL]", "SQLite's command-line shell over a database file "
              "(a new database is created if the file does not exist).", (
                  "-bail                stop after hitting an error",
                  "-cmd COMMAND         run \"COMMAND\" before reading stdin",
                  "-csv -json -line -list -column -table -box -markdown -quote -tabs -html",
                  "                     set the output mode",
                  "-[no]header          turn headers on or off",
                  "-separator SEP       set output column separator. Default: '|'",
                  "-newline SEP         set output row separator. Default: '\\n'",
                  "-nullvalue TEXT      set text string for NULL values. Default ''",
                  "-readonly            open the database read-only",
                  "-echo                print inputs before execution",
                  "-version             show SQLite version"))


# The database is loaded and saved with Connection.deserialize and serialize, and bounded with
# setlimit, all new in Python 3.11: before it there is no sqlite3 command (as there is no tomlq).
@command("sqlite3", usage=USAGE, needs_files=True, python=(3, 11))
def run(ctx, argv):
    from . import cli
    return cli.run(ctx, argv)
