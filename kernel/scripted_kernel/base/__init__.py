"""The libraries every layer may use, below the filesystem: the execution's budget and its
errors (limits.py, errors.py), regular expressions (regexes.py) and shell patterns
(patterns.py, extglob.py). They import nothing of the project but each other."""
