"""yq's and tomlq's registration: their command line (cli.py) and PyYAML are imported when a
script first runs one of them, not when the commands are loaded."""
from __future__ import annotations

from ..registry import Usage, command

USAGE = Usage("[options] <jq filter> [input file...]",
              "Command-line YAML processor - jq wrapper for YAML documents", (
                  "-y, --yaml-output        transcode jq JSON output back into YAML",
                  "-Y, --yaml-roundtrip     the same, keeping YAML tags and styles",
                  "--yaml-output-grammar-version {1.1,1.2}, --yml-out-ver {1.1,1.2}",
                  "-w, --width WIDTH        string wrap width of the YAML output",
                  "--indentless-lists       block lists indented with 0 spaces",
                  "-i, --in-place           edit files in place (with -y or -Y)",
                  "other options are jq's: -r -c -e -n -s -S --arg NAME VALUE ..."))

TOML_USAGE = Usage("[options] <jq filter> [input file...]",
                   "Command-line TOML processor - jq wrapper for TOML documents",
                   ("other options are jq's: -r -c -e -n -s -S --arg NAME VALUE ...",))


@command("yq", usage=USAGE, needs_files=True)
def run(ctx, argv):
    from . import cli
    return cli.main(ctx, argv, "yq", None)


@command("tomlq", usage=TOML_USAGE, needs_files=True, python=(3, 11))      # tomllib is new in 3.11
def run_tomlq(ctx, argv):
    from . import cli
    return cli.main(ctx, argv, "tomlq", cli.toml_documents)
