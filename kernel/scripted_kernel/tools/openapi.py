"""OpenAPI 3 operations as script commands, called through httpx.

Each operation becomes a tool named by its operationId (or method_path); its path, query and
header parameters and its JSON request body's properties become flags with their schemas.
A non-2xx answer fails the command (status 1) with the HTTP status and the body's start.
"""
from __future__ import annotations

import json
import re
from typing import Optional

from .definitions import ToolArgs, ToolDef

METHODS = ("get", "post", "put", "patch", "delete")


def _load(spec):
    if isinstance(spec, dict):
        return spec
    text = spec.strip()
    if text.startswith("{"):
        return json.loads(text)
    import yaml
    return yaml.safe_load(text)


def _resolve(schema, spec: dict):
    """Local $refs (#/components/...) inlined."""
    if isinstance(schema, dict):
        if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith("#/"):
            target = spec
            for key in schema["$ref"][2:].split("/"):
                target = target[key]
            return _resolve(target, spec)
        return {k: _resolve(v, spec) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_resolve(v, spec) for v in schema]
    return schema


def _name(method: str, path: str, operation: dict) -> str:
    name = operation.get("operationId") or f"{method}_{path}"
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")


def tools_from_openapi(spec, base_url: str, headers: Optional[dict] = None, client=None,
                       timeout: float = 30.0) -> list:
    """(ToolDef, callback) for each operation of an OpenAPI 3 document (dict, JSON or YAML)."""
    import httpx
    doc = _load(spec)
    http = client or httpx.Client(base_url=base_url.rstrip("/"), headers=headers or {}, timeout=timeout)
    found = []
    for path, item in (doc.get("paths") or {}).items():
        shared = item.get("parameters", [])
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            params = [_resolve(p, doc) for p in shared + operation.get("parameters", [])]
            properties, required, where = {}, [], {}
            for p in params:
                properties[p["name"]] = dict(p.get("schema", {"type": "string"}),
                                             **({"description": p["description"]} if p.get("description") else {}))
                where[p["name"]] = p.get("in", "query")
                if p.get("required") or p.get("in") == "path":
                    required.append(p["name"])
            body = (((operation.get("requestBody") or {}).get("content") or {}).get("application/json") or {})
            body_schema = _resolve(body.get("schema"), doc) if body else None
            if isinstance(body_schema, dict) and body_schema.get("type", "object") == "object" \
                    and "properties" in body_schema:
                for key, sub in body_schema["properties"].items():
                    properties.setdefault(key, sub)
                    where.setdefault(key, "body")
                required += [k for k in body_schema.get("required", []) if k not in required]
            elif body_schema is not None:
                properties["body"] = body_schema
                where["body"] = "raw-body"
                if (operation.get("requestBody") or {}).get("required"):
                    required.append("body")
            schema = {"type": "object", "properties": properties}
            if required:
                schema["required"] = required
            description = operation.get("summary") or operation.get("description") or f"{method.upper()} {path}"
            tool_def = ToolDef(_name(method, path, operation), description, schema,
                               list(operation.get("tags", [])), (operation.get("tags") or [None])[0])
            found.append((tool_def, _caller(http, method, path, where)))
    return found


def _caller(http, method: str, path: str, where: dict):
    def call(args: ToolArgs):
        url = path
        query, head, body = {}, {}, {}
        raw = None
        for key, value in args.params.items():
            place = where.get(key, "query")
            if place == "path":
                url = url.replace("{" + key + "}", str(value))
            elif place == "header":
                head[key] = str(value)
            elif place == "body":
                body[key] = value
            elif place == "raw-body":
                raw = value
            else:
                query[key] = value if not isinstance(value, (dict, list)) else json.dumps(value)
        payload = raw if raw is not None else (body or None)
        response = http.request(method.upper(), url, params=query or None, headers=head or None,
                                json=payload)
        if response.status_code >= 400:
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200].strip()}")
        text = response.text
        return text if text.endswith("\n") or not text else text + "\n"
    return call
