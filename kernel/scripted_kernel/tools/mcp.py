"""Model Context Protocol, both ways: `mcp_server` serves a ScriptedTool (stdio here,
streamable HTTP through `mcp_service`), `mcp_client` imports the tools of MCP servers. This
module is their public face: `scripted_kernel.tools.mcp:create_app` is the ASGI factory."""
from __future__ import annotations

from .mcp_client import McpConnection, McpError, tasks_extension, tools_from_mcp
from .mcp_server import ServerOptions, build_server, serve
from .mcp_service import ServiceConfig, create_app
from .mcp_sessions import SessionLimits, SessionPool, SessionRefused, StoredSessions, kept_bytes

__all__ = ["McpConnection", "McpError", "ServerOptions", "ServiceConfig", "SessionLimits", "SessionPool",
           "SessionRefused", "StoredSessions", "build_server", "create_app", "kept_bytes", "serve",
           "tasks_extension", "tools_from_mcp"]
