"""An agent loop around a ScriptedTool, with a scripted stand-in for the model (no network).

    python examples/agent_loop.py

It shows the shapes a real loop exchanges with an LLM API: the tool definition it sends
(`to_anthropic_tool()`; `to_openai_tool()` for OpenAI's format), the model's tool call (one
script doing several tool calls), the tool result, and the model's final answer. Replace
`StandInModel` by a client of your API to run it against a real model.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ecommerce import api  # noqa: E402


class StandInModel:
    """Answers like a model would: first a tool call, then a final text."""

    def __init__(self):
        self.turn = 0

    def create(self, messages: list, tools: list) -> dict:
        self.turn += 1
        if self.turn == 1:
            script = ("for id in 1 2 3; do\n"
                      "  get_user --id $id | jq -r '\"\\(.name) \\(.tier)\"'\n"
                      "done | sort -k2 | head -1")
            return {"role": "assistant", "stop_reason": "tool_use", "content": [
                {"type": "text", "text": "I'll look up all customers in one script."},
                {"type": "tool_use", "id": "call_1", "name": tools[0]["name"], "input": {"commands": script}}]}
        result = messages[-1]["content"][0]["content"]
        return {"role": "assistant", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": f"The first customer by tier is {result.split()[0]}."}]}


def run(question: str, model=None) -> list:
    """The loop: send the question and the tool, run each tool call, stop at a final answer."""
    model = model or StandInModel()
    tools = [api.to_anthropic_tool()]
    messages = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = model.create(messages, tools)
        messages.append({"role": "assistant", "content": reply["content"]})
        calls = [c for c in reply["content"] if c["type"] == "tool_use"]
        if not calls:
            break
        results = []
        for call in calls:
            response = api.execute(call["input"])
            results.append({"type": "tool_result", "tool_use_id": call["id"],
                            "content": response.stdout + (f"\n[stderr]\n{response.stderr}" if response.stderr else ""),
                            "is_error": response.exit_code != 0})
        messages.append({"role": "user", "content": results})
    return messages


if __name__ == "__main__":
    transcript = run("Which customer comes first by tier?")
    for message in transcript:
        print(json.dumps(message, indent=2)[:600])
