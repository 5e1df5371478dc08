"""The scripted server's answers, built from a `Reply`: a chat completion, its stream chunks, a Responses API
object. Shapes as OpenAI's API sends them, so real clients parse them with their real code."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repoanchor.scaffolds.models.scripted_server import Reply


def completion(reply: Reply, serial: int, model: str) -> dict:
    message: dict = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    finish = "tool_calls" if reply.tool_calls else "stop"
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": reply.usage,
    }


def response(reply: Reply, serial: int, model: str) -> dict:
    """The answer as an OpenAI Responses API object: an output_text message, then one function_call per call."""
    output: list[dict] = []
    if reply.content:
        text = {"type": "output_text", "text": reply.content, "annotations": []}
        output.append(
            {
                "type": "message",
                "id": f"msg-{serial}",
                "status": "completed",
                "role": "assistant",
                "content": [text],
            }
        )
    for call in reply.tool_calls:
        function = call.get("function") or {}
        output.append(
            {
                "type": "function_call",
                "id": f"fc-{serial}-{len(output)}",
                "call_id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
                "status": "completed",
            }
        )
    usage = {
        "input_tokens": reply.usage.get("prompt_tokens", 0),
        "output_tokens": reply.usage.get("completion_tokens", 0),
        "total_tokens": reply.usage.get("total_tokens", 0),
    }
    return {
        "id": f"resp-{serial}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": output,
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def chunks(reply: Reply, serial: int, model: str) -> list[dict]:
    """The same answer as stream chunks: role, content, each tool call, finish, usage."""
    base = {"id": f"chatcmpl-{serial}", "object": "chat.completion.chunk", "created": 0, "model": model}
    deltas: list[dict] = [{"role": "assistant", "content": ""}]
    if reply.content:
        deltas.append({"content": reply.content})
    deltas += [{"tool_calls": [{"index": i, **call}]} for i, call in enumerate(reply.tool_calls)]
    out = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    finish = "tool_calls" if reply.tool_calls else "stop"
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    out.append({**base, "choices": [], "usage": reply.usage})
    return out
