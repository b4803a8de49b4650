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


REFUND_SCRIPT = """t=$(get_order --id 7 | jq .total)
echo "order total $t"
refund --amount "$t"
notify --text "refunded $t"
echo end
"""


def refunds(hook):
    """A tool whose refund a before_tool `hook` may pause or deny, and the calls its
    callbacks got (a resumed run answers earlier calls from its continuation, not again)."""
    calls: list = []

    @tool(register=False)
    def get_order(id: int) -> dict:
        """An order."""
        calls.append(["get_order", id])
        return {"id": id, "total": 12.5}

    @tool(register=False)
    def refund(amount: float) -> dict:
        """Refund an amount."""
        calls.append(["refund", amount])
        return {"refunded": amount}

    @tool(register=False)
    def notify(text: str) -> str:
        """Notify someone."""
        calls.append(["notify", len(text)])
        return "sent\n"

    built = (ScriptedTool.builder("api").continuation_key(b"k" * 32).function(get_order).function(refund)
             .function(notify).before_tool(hook).build())
    return built, calls


def pause_refunds(call):
    from scripted_kernel import Pause
    return Pause("refunds need approval") if call.name == "refund" else None


def deny_refunds(call):
    from scripted_kernel import Deny
    return Deny("not today") if call.name == "refund" else None
