"""The agent-loop example: one tool call carrying a script, its result, a final answer."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import agent_loop  # noqa: E402


def test_agent_loop_round_trip():
    messages = agent_loop.run("Which customer comes first by tier?")
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    call = messages[1]["content"][1]
    assert call["type"] == "tool_use" and call["name"] == "ecommerce" and "get_user" in call["input"]["commands"]
    result = messages[2]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "call_1", "content": "Carol bronze\n", "is_error": False}
    assert messages[3]["content"][0]["text"] == "The first customer by tier is Carol."
