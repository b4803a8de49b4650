"""yq and tomlq: jq's language over YAML and TOML documents (cli.py says how; command.py
registers them, documents.py reads and writes YAML).

They need PyYAML (a dependency of the package); without it neither is registered. tomlq
needs tomllib (Python 3.11 and later).
"""
import importlib.util

if importlib.util.find_spec("yaml") is not None:
    from . import command  # noqa: F401  (registers yq and tomlq)
