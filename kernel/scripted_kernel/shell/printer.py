"""Source text of shell functions, for `type f` and `declare -f f`."""
from __future__ import annotations


def function_source(func) -> str:
    """bash prints a function as `name () ` and its body on the following lines."""
    text = getattr(func, "source", None) or "{ :; }"
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        inner = body[1:-1].strip().rstrip(";").strip()
        lines = [line.strip() for line in inner.splitlines() if line.strip()]
        return f"{func.name} () \n{{ \n" + "".join(f"    {line}\n" for line in lines) + "}"
    return f"{func.name} () \n{body}"
