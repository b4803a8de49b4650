"""The tool the adapters' agent runs call: a small user API, sync and async."""
import asyncio

from scripted_kernel import ScriptedTool, tool


@tool(register=False)
def get_user(id: int) -> dict:
    """Fetch a user by id."""
    return {"id": id, "name": ["Ada", "Bob"][id % 2]}


@tool(register=False)
async def get_user_async(id: int) -> dict:
    """Fetch a user by id, asynchronously."""
    await asyncio.sleep(0)
    return {"id": id, "name": ["Ada", "Bob"][id % 2]}


API = ScriptedTool.builder("api").short_description("User API").function(get_user).function(get_user_async).build()
