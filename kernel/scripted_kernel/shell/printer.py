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


def body_text(text: str, start: int) -> str:
    """The text of a function body starting at `start`: up to its matching closer."""
    depth = 0
    if text[start:start + 1] in "{(":
        opener = text[start]
        closer = "}" if opener == "{" else ")"
        # the body ends at the matching closer; quotes and nesting are rare in this text
        for k in range(start, len(text)):
            if text[k] == opener:
                depth += 1
            elif text[k] == closer:
                depth -= 1
                if depth == 0:
                    return text[start:k + 1]
    return text[start:text.find("\n", start) if "\n" in text[start:] else len(text)]
