"""yq and tomlq: jq's language over YAML and TOML documents (command.py says how).

They need PyYAML (a dependency of the package); without it neither is registered. tomlq
needs tomllib (Python 3.11 and later).
"""
try:
    import yaml  # noqa: F401
except ImportError:         # no yq without a YAML library
    yaml = None

if yaml is not None:
    from . import command  # noqa: F401  (registers yq)
    from . import tomlq  # noqa: F401  (registers tomlq where tomllib exists)
