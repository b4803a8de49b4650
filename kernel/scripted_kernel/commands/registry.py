"""The table of commands, filled by the `@command` decorator as each module is imported.

A command module defines `def name(ctx, argv) -> int` under `@command(...)`; the decorator
gives every command the same edges: `--help` prints its usage as GNU tools print theirs,
`--version` its version, and a `UsageError` raised anywhere inside becomes its message on
stderr and its status. Commands that need files (`needs_files=True`) are left out of logic mode.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Union

from ..shell.context import CommandContext
from ._options import UsageError

CommandFn = Callable[[CommandContext, list], int]

COMMANDS: dict[str, CommandFn] = {}
FILE_COMMANDS: set[str] = set()        # absent in logic mode (no filesystem)
USAGE: dict[str, "Usage"] = {}


@dataclass(frozen=True, slots=True)
class Usage:
    """What `NAME --help` prints: a synopsis, a summary line, and option lines."""
    synopsis: str
    summary: str
    options: tuple = ()

    def text(self, name: str) -> str:
        lines = [f"Usage: {name} {self.synopsis}".rstrip(), self.summary, ""]
        lines += [f"  {line}" for line in self.options]
        lines.append("  --help     display this help and exit")
        lines.append("  --version  output version information and exit")
        return "\n".join(lines) + "\n"


def command(*names: str, usage: Union[Usage, dict, None] = None, needs_files: bool = False,
            own_version: bool = False):
    """Register the decorated `fn(ctx, argv)` under `names`. `usage`: one Usage, or a dict of
    them by name. `own_version`: the command answers --version itself (jq, curl)."""
    answered = ("--help",) if own_version else ("--help", "--version")
    def register(fn: CommandFn) -> CommandFn:
        @functools.wraps(fn)
        def run(ctx: CommandContext, argv: list) -> int:
            if len(argv) == 2 and argv[1] in answered:
                return _help_or_version(ctx, argv)
            try:
                return fn(ctx, argv)
            except UsageError as e:
                if e.message:
                    ctx.err(e.message + "\n")
                return e.status
        for name in names:
            COMMANDS[name] = run
            if usage is not None:
                USAGE[name] = usage[name] if isinstance(usage, dict) else usage
            elif name in STANDARD_USAGE:
                USAGE[name] = STANDARD_USAGE[name]
            if needs_files:
                FILE_COMMANDS.add(name)
        return run
    return register


def _u(synopsis: str, summary: str, *options: str) -> Usage:
    return Usage(synopsis, summary, options)


_GREP = _u("[OPTION]... PATTERNS [FILE]...", "Search for PATTERNS in each FILE (standard input by default).",
           "-E, --extended-regexp     PATTERNS are extended regular expressions",
           "-F, --fixed-strings       PATTERNS are strings",
           "-G, --basic-regexp        PATTERNS are basic regular expressions",
           "-P, --perl-regexp         PATTERNS are Perl regular expressions",
           "-e, --regexp=PATTERNS     use PATTERNS for matching",
           "-f, --file=FILE           take PATTERNS from FILE",
           "-i, --ignore-case         ignore case distinctions in patterns and data",
           "    --no-ignore-case      do not ignore case distinctions (default)",
           "-w, --word-regexp         match only whole words",
           "-x, --line-regexp         match only whole lines",
           "-z, --null-data           a data line ends in 0 byte, not newline",
           "-s, --no-messages         suppress error messages",
           "-v, --invert-match        select non-matching lines",
           "-m, --max-count=NUM       stop after NUM selected lines",
           "-b, --byte-offset         print the byte offset with output lines",
           "-n, --line-number         print line number with output lines",
           "    --line-buffered       flush output on every line",
           "-H, --with-filename       print file name with output lines",
           "-h, --no-filename         suppress the file name prefix on output",
           "    --label=LABEL         use LABEL as the standard input file name prefix",
           "-o, --only-matching       show only nonempty parts of lines that match",
           "-q, --quiet, --silent     suppress all normal output",
           "    --binary-files=TYPE   assume that binary files are TYPE",
           "-a, --text                equivalent to --binary-files=text",
           "-d, --devices=ACTION      how to handle devices",
           "-r, --recursive           search directories recursively",
           "-L, --files-without-match  print only names of FILEs with no selected lines",
           "-l, --files-with-matches  print only names of FILEs with selected lines",
           "-c, --count               print only a count of selected lines per FILE",
           "-B, --before-context=NUM  print NUM lines of leading context",
           "-A, --after-context=NUM   print NUM lines of trailing context",
           "-C, --context=NUM         print NUM lines of output context",
           "    --color[=WHEN]        use markers to highlight the matching strings")
_AWK = _u("[-F fs] [-v var=value] [-f progfile | 'prog'] [file ...]",
          "Scan each line of the input for patterns and run their actions (POSIX awk).",
          "-F fs             the input field separator",
          "-v var=value      assign a variable before the program runs",
          "-f progfile       read the program from progfile")
_HEAD_TAIL = ("-c, --bytes=[-]NUM       the first (head) or last (tail) NUM bytes",
              "-n, --lines=[-]NUM       the first (head) or last (tail) NUM lines (default 10)",
              "-q, --quiet, --silent    never print headers giving file names",
              "-v, --verbose            always print headers giving file names",
              "-z, --zero-terminated    line delimiter is NUL, not newline")

STANDARD_USAGE: dict = {
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "awk": _AWK, "gawk": _AWK, "mawk": _AWK, "nawk": _AWK,
    "sed": _u("[OPTION]... {script-only-if-no-other-script} [input-file]...",
              "Stream editor: filter and transform text.",
              "-n, --quiet, --silent      suppress automatic printing of pattern space",
              "-e script, --expression=script  add the script to the commands to be executed",
              "-f script-file, --file=script-file  add the contents of script-file",
              "-i, --in-place             edit files in place",
              "-l N, --line-length=N      the line-wrap length for the `l' command",
              "    --posix                disable all GNU extensions",
              "-E, -r, --regexp-extended  use extended regular expressions",
              "-s, --separate             consider files as separate",
              "    --sandbox              disable e/r/w commands",
              "-u, --unbuffered           flush the output buffers more often",
              "-z, --null-data            separate lines by NUL characters"),
    "sort": _u("[OPTION]... [FILE]...", "Write the sorted concatenation of all FILE(s) to standard output.",
               "-b, --ignore-leading-blanks  ignore leading blanks",
               "-d, --dictionary-order      consider only blanks and alphanumeric characters",
               "-f, --ignore-case           fold lower case to upper case characters",
               "-g, --general-numeric-sort  compare according to general numerical value",
               "-i, --ignore-nonprinting    consider only printable characters",
               "-M, --month-sort            compare (unknown) < 'JAN' < ... < 'DEC'",
               "-h, --human-numeric-sort    compare human readable numbers (e.g., 2K 1G)",
               "-n, --numeric-sort          compare according to string numerical value",
               "-R, --random-sort           shuffle, but group identical keys",
               "-r, --reverse               reverse the result of comparisons",
               "-V, --version-sort          natural sort of (version) numbers within text",
               "-c, --check                 check for sorted input; do not sort",
               "-k, --key=KEYDEF            sort via a key; KEYDEF gives location and type",
               "-o, --output=FILE           write result to FILE instead of standard output",
               "-s, --stable                stabilize sort by disabling last-resort comparison",
               "-t, --field-separator=SEP   use SEP instead of non-blank to blank transition",
               "-u, --unique                output only the first of an equal run",
               "-z, --zero-terminated       line delimiter is NUL, not newline"),
    "uniq": _u("[OPTION]... [INPUT [OUTPUT]]", "Filter adjacent matching lines from INPUT (or standard input).",
               "-c, --count            prefix lines by the number of occurrences",
               "-d, --repeated         only print duplicate lines, one for each group",
               "-D, --all-repeated     print all duplicate lines",
               "-f, --skip-fields=N    avoid comparing the first N fields",
               "-i, --ignore-case      ignore differences in case when comparing",
               "-s, --skip-chars=N     avoid comparing the first N characters",
               "-u, --unique           only print unique lines",
               "-z, --zero-terminated  line delimiter is NUL, not newline",
               "-w, --check-chars=N    compare no more than N characters in lines"),
    "cut": _u("OPTION... [FILE]...", "Print selected parts of lines from each FILE to standard output.",
              "-b, --bytes=LIST        select only these bytes",
              "-c, --characters=LIST   select only these characters",
              "-d, --delimiter=DELIM   use DELIM instead of TAB for field delimiter",
              "-f, --fields=LIST       select only these fields",
              "-n                      (ignored)",
              "    --complement        complement the set of selected bytes, characters or fields",
              "-s, --only-delimited    do not print lines not containing delimiters",
              "    --output-delimiter=STRING  use STRING as the output delimiter",
              "-z, --zero-terminated   line delimiter is NUL, not newline"),
    "tr": _u("[OPTION]... STRING1 [STRING2]", "Translate, squeeze, and/or delete characters from standard input.",
             "-c, -C, --complement    use the complement of STRING1",
             "-d, --delete            delete characters in STRING1, do not translate",
             "-s, --squeeze-repeats   replace each sequence of a repeated character with one",
             "-t, --truncate-set1     first truncate STRING1 to length of STRING2"),
    "wc": _u("[OPTION]... [FILE]...", "Print newline, word, and byte counts for each FILE.",
             "-c, --bytes            print the byte counts",
             "-m, --chars            print the character counts",
             "-l, --lines            print the newline counts",
             "-L, --max-line-length  print the maximum display width",
             "-w, --words            print the word counts"),
    "head": _u("[OPTION]... [FILE]...", "Print the first 10 lines of each FILE to standard output.", *_HEAD_TAIL),
    "tail": _u("[OPTION]... [FILE]...", "Print the last 10 lines of each FILE to standard output.",
               *_HEAD_TAIL, "-f, --follow             (accepted; there is nothing to follow)"),
    "seq": _u("[OPTION]... [FIRST [INCREMENT]] LAST", "Print numbers from FIRST to LAST, in steps of INCREMENT.",
              "-f, --format=FORMAT      use printf style floating-point FORMAT",
              "-s, --separator=STRING   use STRING to separate numbers (default: \\n)",
              "-w, --equal-width        equalize width by padding with leading zeroes"),
    "cat": _u("[OPTION]... [FILE]...", "Concatenate FILE(s) to standard output.",
              "-A, --show-all           equivalent to -vET",
              "-b, --number-nonblank    number nonempty output lines",
              "-e                       equivalent to -vE",
              "-E, --show-ends          display $ at end of each line",
              "-n, --number             number all output lines",
              "-s, --squeeze-blank      suppress repeated empty output lines",
              "-t                       equivalent to -vT",
              "-T, --show-tabs          display TAB characters as ^I",
              "-u                       (ignored)",
              "-v, --show-nonprinting   use ^ and M- notation, except for LFD and TAB"),
    "tee": _u("[OPTION]... [FILE]...", "Copy standard input to each FILE, and also to standard output.",
              "-a, --append             append to the given FILEs, do not overwrite",
              "-i, --ignore-interrupts  ignore interrupt signals",
              "-p                       (accepted)"),
    "nl": _u("[OPTION]... [FILE]...", "Write each FILE to standard output, with line numbers added.",
             "-b, --body-numbering=STYLE      use STYLE for numbering body lines (a, t, n, pBRE)",
             "-i, --line-increment=NUMBER     line number increment at each line",
             "-n, --number-format=FORMAT      insert line numbers according to FORMAT (ln, rn, rz)",
             "-s, --number-separator=STRING   add STRING after (possible) line number",
             "-v, --starting-line-number=NUMBER  first line number for each section",
             "-w, --number-width=NUMBER       use NUMBER columns for line numbers"),
    "paste": _u("[OPTION]... [FILE]...",
                "Write lines consisting of the sequentially corresponding lines from each FILE.",
                "-d, --delimiters=LIST   reuse characters from LIST instead of TABs",
                "-s, --serial            paste one file at a time instead of in parallel",
                "-z, --zero-terminated   line delimiter is NUL, not newline"),
    "fold": _u("[OPTION]... [FILE]...", "Wrap input lines in each FILE, writing to standard output.",
               "-b, --bytes         count bytes rather than columns",
               "-s, --spaces        break at spaces",
               "-w, --width=WIDTH   use WIDTH columns instead of 80"),
    "column": _u("[options] [file ...]", "Columnate lists.",
                 "-t, --table                  create a table",
                 "-s, --separator <string>     possible table delimiters",
                 "-o, --output-separator <string>  columns separator for table output (default is two spaces)",
                 "-c, --output-width <width>   width of output in number of characters",
                 "-n, -x, -e                   (accepted)"),
    "base64": _u("[OPTION]... [FILE]", "Base64 encode or decode FILE, or standard input, to standard output.",
                 "-d, --decode          decode data",
                 "-i, --ignore-garbage  when decoding, ignore non-alphabet characters",
                 "-w, --wrap=COLS       wrap encoded lines after COLS character (default 76)"),
    "basename": _u("NAME [SUFFIX]  or:  basename OPTION... NAME...",
                   "Print NAME with any leading directory components removed.",
                   "-a, --multiple       support multiple arguments and treat each as a NAME",
                   "-s, --suffix=SUFFIX  remove a trailing SUFFIX; implies -a",
                   "-z, --zero           end each output line with NUL, not newline"),
    "dirname": _u("[OPTION] NAME...",
                  "Output each NAME with its last non-slash component and trailing slashes removed.",
                  "-z, --zero           end each output line with NUL, not newline"),
    "xargs": _u("[OPTION]... COMMAND [INITIAL-ARGS]...",
                "Run COMMAND with arguments INITIAL-ARGS and more arguments read from input.",
                "-0, --null                   items are separated by a null, not whitespace",
                "-a, --arg-file=FILE          read arguments from FILE, not standard input",
                "-d, --delimiter=CHARACTER    items in input stream are separated by CHARACTER",
                "-E END                       set logical EOF string",
                "-I R, --replace=R            replace R in INITIAL-ARGS with names read from input",
                "-L, --max-lines=MAX-LINES    use at most MAX-LINES non-blank input lines per command line",
                "-n, --max-args=MAX-ARGS      use at most MAX-ARGS arguments per command line",
                "-P, --max-procs=MAX-PROCS    (accepted; commands run one at a time)",
                "-r, --no-run-if-empty        if there are no arguments, then do not run COMMAND",
                "-s SIZE                      limit length of command line to SIZE",
                "-t, --verbose                print commands before executing them",
                "-x                           exit if the size (see -s) is exceeded"),
    "date": _u("[OPTION]... [+FORMAT]", "Display the current time in the given FORMAT.",
               "-d, --date=STRING         display time described by STRING, not 'now'",
               "-I, --iso-8601[=FMT]      output date/time in ISO 8601 format",
               "-r, --reference=FILE      display the last modification time of FILE",
               "-R, --rfc-email           output date and time in RFC 5322 format",
               "-u, --utc, --universal    print Coordinated Universal Time (UTC)"),
    "sleep": _u("NUMBER[SUFFIX]...", "Pause for NUMBER seconds (SUFFIX s, m, h or d); the sum of all arguments."),
    "expr": _u("EXPRESSION", "Print the value of EXPRESSION to standard output.",
               "ARG1 | ARG2, ARG1 & ARG2, comparisons < <= = != >= >, arithmetic + - * / %,",
               "STRING : REGEXP, match STRING REGEXP, substr STRING POS LENGTH, index, length"),
    "rev": _u("[file ...]", "Reverse lines characterwise."),
    "tac": _u("[OPTION]... [FILE]...", "Write each FILE to standard output, last line first.",
              "-s, --separator=STRING   use STRING as the separator instead of newline"),
    "ls": _u("[OPTION]... [FILE]...", "List information about the FILEs (the current directory by default).",
             "-a, --all               do not ignore entries starting with .",
             "-A, --almost-all        do not list implied . and ..",
             "-d, --directory         list directories themselves, not their contents",
             "-F, --classify          append indicator (one of */=>@|) to entries",
             "-h, --human-readable    with -l, print sizes like 1K 234M 2G",
             "-l                      use a long listing format",
             "-n, -g, -o              long listing with numeric ids, without owner, without group",
             "-p                      append / indicator to directories",
             "-r, --reverse           reverse order while sorting",
             "-R, --recursive         list subdirectories recursively",
             "-S                      sort by file size, largest first",
             "-t                      sort by time, newest first",
             "-U                      do not sort",
             "-1                      list one file per line"),
    "mkdir": _u("[OPTION]... DIRECTORY...", "Create the DIRECTORY(ies), if they do not already exist.",
                "-m, --mode=MODE   set file mode (as in chmod)",
                "-p, --parents     no error if existing, make parent directories as needed",
                "-v, --verbose     print a message for each created directory"),
    "rmdir": _u("[OPTION]... DIRECTORY...", "Remove the DIRECTORY(ies), if they are empty.",
                "    --ignore-fail-on-non-empty  ignore each failure to remove a non-empty directory",
                "-p, --parents   remove DIRECTORY and its ancestors",
                "-v, --verbose   output a diagnostic for every directory processed"),
    "rm": _u("[OPTION]... [FILE]...", "Remove (unlink) the FILE(s).",
             "-f, --force           ignore nonexistent files and arguments, never prompt",
             "-i                    (accepted; there is no prompt)",
             "-d, --dir             remove empty directories",
             "-r, -R, --recursive   remove directories and their contents recursively",
             "    --no-preserve-root  do not treat '/' specially",
             "-v, --verbose         explain what is being done"),
    "cp": _u("[OPTION]... SOURCE... DIRECTORY", "Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.",
             "-a, --archive                same as -dR --preserve=all",
             "-d                           same as --no-dereference --preserve=links",
             "-f, --force                  remove a destination that cannot be opened, and try again",
             "-L, -H, -P                   follow symbolic links (always, on the command line, never)",
             "-n, --no-clobber             do not overwrite an existing file",
             "-p, --preserve               preserve mode and timestamps",
             "-R, -r, --recursive          copy directories recursively",
             "-t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY",
             "-u                           copy only when the SOURCE file is newer",
             "-v, --verbose                explain what is being done"),
    "mv": _u("[OPTION]... SOURCE... DIRECTORY", "Rename SOURCE to DEST, or move SOURCE(s) to DIRECTORY.",
             "-f, --force                  do not prompt before overwriting",
             "-i                           (accepted; there is no prompt)",
             "-n, --no-clobber             do not overwrite an existing file",
             "-t, --target-directory=DIRECTORY  move all SOURCE arguments into DIRECTORY",
             "-u                           move only when the SOURCE file is newer",
             "-v, --verbose                explain what is being done"),
    "touch": _u("[OPTION]... FILE...", "Update the access and modification times of each FILE to the current time.",
                "-a, -m, -h            change only the access time / modification time / a link itself",
                "-c, --no-create       do not create any files",
                "-d, --date=STRING     parse STRING and use it instead of current time",
                "-r, --reference=FILE  use this file's times instead of current time",
                "-t STAMP              use [[CC]YY]MMDDhhmm[.ss] instead of current time"),
    "chmod": _u("[OPTION]... MODE[,MODE]... FILE...", "Change the mode of each FILE to MODE.",
                "-c, -f                like verbose but report only changes / suppress most errors",
                "-v, --verbose         output a diagnostic for every file processed",
                "-R, --recursive       change files and directories recursively"),
    "ln": _u("[OPTION]... TARGET LINK_NAME", "Create a link to TARGET with the name LINK_NAME.",
             "-f, --force                 remove existing destination files",
             "-n, --no-dereference        treat LINK_NAME as a normal file if it is a symbolic link to a directory",
             "-r, -F, -T                  (relative, directory, no-target-directory)",
             "-s, --symbolic              make symbolic links instead of hard links",
             "-t, --target-directory=DIRECTORY  the DIRECTORY in which to create the links",
             "-v, --verbose               print name of each linked file"),
    "find": _u("[-H] [-L] [-P] [starting-point...] [expression]", "Search for files in a directory hierarchy.",
               "tests: -name -iname -path -ipath -wholename -type -maxdepth -mindepth -size -mtime -mmin",
               "       -newer -perm -user -group -links -regex -empty -true -false",
               "actions: -print -print0 -printf -delete -exec -execdir -ok -prune",
               "operators: ! -not -a -and -o -or ( )"),
    "du": _u("[OPTION]... [FILE]...", "Summarize device usage of the set of FILEs, recursively for directories.",
             "-a, --all             write counts for all files, not just directories",
             "-b, --bytes           apparent sizes in bytes",
             "-c, --total           produce a grand total",
             "-d, --max-depth=N     print the total for a directory only if it is N or fewer levels deep",
             "-h, --human-readable  print sizes in human readable format",
             "-k, -m                block sizes of 1K / 1M",
             "-s, --summarize       display only a total for each argument"),
    "stat": _u("[OPTION]... FILE...", "Display file or file system status.",
               "-L, --dereference     follow links",
               "-c  --format=FORMAT   use the specified FORMAT instead of the default",
               "    --printf=FORMAT   like --format, but interpret backslash escapes",
               "-t, --terse           print the information in terse form"),
    "realpath": _u("[OPTION]... FILE...", "Print the resolved absolute file name.",
                   "-e, --canonicalize-existing  all components of the path must exist",
                   "-m, --canonicalize-missing   no path components need exist or be a directory",
                   "-L, -P                       resolve '..' before / after symlinks",
                   "-q, --quiet                  suppress most error messages",
                   "    --relative-to=DIR        print the resolved path relative to DIR",
                   "-s, --strip, --no-symlinks   don't expand symlinks",
                   "-z, --zero                   end each output line with NUL, not newline"),
    "readlink": _u("[OPTION]... FILE...", "Print value of a symbolic link or canonical file name.",
                   "-f, --canonicalize           follow every symlink; all but the last component must exist",
                   "-e, --canonicalize-existing  follow every symlink; all components must exist",
                   "-m, --canonicalize-missing   follow every symlink; no component need exist",
                   "-n, --no-newline             do not output the trailing delimiter",
                   "-q, -s, -v                   quiet / silent / verbose",
                   "-z, --zero                   end each output line with NUL, not newline"),
    "mktemp": _u("[OPTION]... [TEMPLATE]", "Create a temporary file or directory, safely, and print its name.",
                 "-d, --directory     create a directory, not a file",
                 "-u, --dry-run       do not create anything; merely print a name",
                 "-q, --quiet         suppress diagnostics about file/dir-creation failure",
                 "    --suffix=SUFF   append SUFF to TEMPLATE",
                 "-p DIR, --tmpdir[=DIR]  interpret TEMPLATE relative to DIR",
                 "-t                  interpret TEMPLATE as a single file name component"),
    "diff": _u("[OPTION]... FILES", "Compare FILES line by line.",
               "-q, --brief                  report only when files differ",
               "-s, --report-identical-files  report when two files are the same",
               "-u, -U NUM, --unified[=NUM]  output NUM (default 3) lines of unified context",
               "-i, --ignore-case            ignore case differences in file contents",
               "-b, --ignore-space-change    ignore changes in the amount of white space",
               "-w, --ignore-all-space       ignore all white space",
               "-B, --ignore-blank-lines     ignore changes where lines are all blank",
               "-a, --text                   treat all files as text",
               "    --label LABEL            use LABEL instead of file name and timestamp",
               "-N, -t                       (accepted)"),
    "cmp": _u("[OPTION]... FILE1 [FILE2]", "Compare two files byte by byte.",
              "-b                       print differing bytes",
              "-l                       output byte numbers and differing byte values",
              "-s, --quiet, --silent    suppress all normal output"),
    "env": _u("[NAME=VALUE]... [COMMAND [ARG]...]", "Print the environment, or run COMMAND in a modified one."),
    "printenv": _u("[VARIABLE]...", "Print the values of the specified environment VARIABLE(s), or all of them."),
    "whoami": _u("", "Print the user name associated with the current effective user ID."),
    "hostname": _u("", "Show the system's host name."),
}


def _help_or_version(ctx: CommandContext, argv: list) -> int:
    name = argv[0].rsplit("/", 1)[-1]
    if argv[1] == "--version":
        ctx.out(f"{name} (scripted_kernel)\n")
        return 0
    usage = USAGE.get(name)
    ctx.out(usage.text(name) if usage is not None else f"Usage: {name} [OPTION]... [FILE]...\n")
    return 0


__all__ = ["COMMANDS", "FILE_COMMANDS", "USAGE", "Usage", "UsageError", "command"]
