"""A small MCP server for the tests (stdio, `mcp` 2.x): two tools and one that fails."""
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("test-inventory")


@server.tool()
def stock(sku: str) -> dict:
    """Units in stock for a product."""
    return {"sku": sku, "units": {"widget": 4, "gizmo": 9}.get(sku, 0)}


@server.tool()
def price(sku: str, quantity: int = 1) -> dict:
    """Price of a quantity of a product."""
    return {"sku": sku, "total": {"widget": 2.5, "gizmo": 10.0}.get(sku, 0) * quantity}


@server.tool()
def broken(reason: str) -> str:
    """Always fails (a ToolError: its message reaches the client)."""
    raise ToolError(f"cannot do it: {reason}")


if __name__ == "__main__":
    server.run("stdio")
