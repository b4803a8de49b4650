"""yq's and tomlq's registration: their command line (cli.py) and PyYAML are imported when a
script first runs one of them, not when the commands are loaded."""
from __future__ import annotations

from ..registry import Usage, command

USAGE = Usage("[options] <jq filter> [file...]  |  yq [e|eval|ea|eval-all] [flags] <expression> [file...]",
              "Command-line YAML processor, in two dialects: Debian's python-yq (a jq wrapper, JSON out) "
              "and mikefarah's yq v4 (YAML out). v4's is chosen by its commands e/eval/ea/eval-all, by "
              "an option only v4 has (-o, -p, -I, -P, -N, --output-format, --input-format, --inplace, "
              "--unwrapScalar, --expression), or by -i without -y/-Y on an expression that edits (=, |=, "
              "+=, del); every other command line is python-yq's", (
                  "python-yq:",
                  "  -y, --yaml-output        transcode jq JSON output back into YAML",
                  "  -Y, --yaml-roundtrip     the same, keeping YAML tags and styles",
                  "  --yaml-output-grammar-version {1.1,1.2}, --yml-out-ver {1.1,1.2}",
                  "  -w, --width WIDTH        string wrap width of the YAML output",
                  "  --indentless-lists       block lists indented with 0 spaces",
                  "  -i, --in-place           edit files in place (with -y or -Y)",
                  "  other options are jq's: -r -c -e -n -s -S --arg NAME VALUE ...",
                  "mikefarah v4 (its expression language translated onto jq):",
                  "  -o, --output-format F    yaml, json, props, csv, tsv (-oj, -o=json)",
                  "  -p, --input-format F     yaml, json, props, csv, tsv, toml (default: by extension)",
                  "  -i, --inplace            write the result back into the first file (comments,",
                  "                           anchors and flow styles of the file are not kept)",
                  "  -n, --null-input  -r, --unwrapScalar  -I, --indent N (0-9)  -P, --prettyPrint",
                  "  -N, --no-doc  -e, --exit-status  --expression EXPR  --from-file FILE"))

TOML_USAGE = Usage("[options] <jq filter> [input file...]",
                   "Command-line TOML processor - jq wrapper for TOML documents",
                   ("other options are jq's: -r -c -e -n -s -S --arg NAME VALUE ...",))


@command("yq", usage=USAGE, needs_files=True)
def run(ctx, argv):
    from . import v4
    if v4.selects_v4(argv[1:]):
        return v4.main(ctx, argv)
    from . import cli
    return cli.main(ctx, argv, "yq", None)


@command("tomlq", usage=TOML_USAGE, needs_files=True, python=(3, 11))      # tomllib is new in 3.11
def run_tomlq(ctx, argv):
    from . import cli
    return cli.main(ctx, argv, "tomlq", cli.toml_documents)
