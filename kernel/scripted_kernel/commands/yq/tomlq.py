"""tomlq: yq's command line over TOML files (read with the standard library's tomllib, Python
3.11 and later; TOML output, -t, is refused as by yq)."""
from __future__ import annotations

from ..registry import Usage, command
from .command import main, toml_documents

try:
    import tomllib  # noqa: F401
except ImportError:
    tomllib = None

if tomllib is not None:
    @command("tomlq", needs_files=True, usage=Usage(
        "[options] <jq filter> [input file...]",
        "Command-line TOML processor - jq wrapper for TOML documents",
        ("other options are jq's: -r -c -e -n -s -S --arg NAME VALUE ...",)))
    def run(ctx, argv):
        return main(ctx, argv, "tomlq", toml_documents)
