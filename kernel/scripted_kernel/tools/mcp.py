"""Model Context Protocol, both ways: `mcp_server` serves a ScriptedTool (stdio here,
streamable HTTP through `mcp_service`), `mcp_client` imports the tools of MCP servers. This
module is their public face: `scripted_kernel.tools.mcp:create_app` is the ASGI factory."""
from __future__ import annotations

from .mcp_client import McpConnection, McpError, tools_from_mcp
from .mcp_server import SessionLimits, SessionPool, SessionRefused, build_server, kept_bytes, serve
from .mcp_service import ServiceConfig, create_app

__all__ = ["McpConnection", "McpError", "ServiceConfig", "SessionLimits", "SessionPool", "SessionRefused",
           "build_server", "create_app", "kept_bytes", "serve", "tools_from_mcp"]
