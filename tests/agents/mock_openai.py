# SPDX-License-Identifier: Apache-2.0
"""The OpenAI APIs: Responses (POST .../responses, as Codex speaks it) and
Chat Completions (POST .../chat/completions, as Qwen Code, opencode and
others speak it), streamed as server-sent events or answered whole.

A scripted call whose arguments are a string is a freeform (custom) tool
call in the Responses API, such as Codex's apply_patch."""

import itertools
import json
import time

_ids = itertools.count(1)


def _text(content):
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content.get("text") or _text(content.get("content"))
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            out.append(part.get("text") or part.get("output") or "")
    return "\n".join(out)


# --- Responses -------------------------------------------------------------

CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _responses(mock, h, body):
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    items = items or []
    users, turns = [], 0
    for it in items:
        t = it.get("type", "message")
        if t == "message" and it.get("role") == "user":
            users.append(_text(it.get("content")))
        elif t in CALL_ITEMS:
            turns += 1
        elif t in OUTPUT_ITEMS:
            out = it.get("output")
            if isinstance(out, dict):
                out = out.get("content") or out.get("output") or json.dumps(out)
            mock.record(it.get("call_id"), _text(out))
    call, _ = mock.next_call("\n".join(users), turns)
    rid = "resp_mock%06d" % next(_ids)
    if call is None:
        item = {"type": "message", "id": "msg_mock%06d" % next(_ids), "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "done", "annotations": []}]}
    elif isinstance(call.args, str):
        item = {"type": "custom_tool_call", "id": "ctc_" + call.id, "call_id": call.id,
                "name": call.name, "input": call.args, "status": "completed"}
    else:
        item = {"type": "function_call", "id": "fc_" + call.id, "call_id": call.id,
                "name": call.name, "arguments": json.dumps(call.args), "status": "completed"}
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 110}
    resp = {"id": rid, "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": body.get("model", "gpt-mock"),
            "output": [item], "usage": usage}
    if not body.get("stream"):
        h.send_json(200, resp)
        return
    created = dict(resp, status="in_progress", output=[])
    h.send_sse([
        ("response.created", {"type": "response.created", "response": created}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": resp}),
    ])


# --- Chat Completions ------------------------------------------------------

def _chat(mock, h, body):
    messages = body.get("messages") or []
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    for m in messages:
        if m.get("role") == "tool":
            mock.record(m.get("tool_call_id"), _text(m.get("content")))
    call, _ = mock.next_call("\n".join(users), turns)
    cid = "chatcmpl-mock%06d" % next(_ids)
    model = body.get("model", "gpt-mock")
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    if call is None:
        message = {"role": "assistant", "content": "done"}
        finish = "stop"
    else:
        args = call.args if isinstance(call.args, str) else json.dumps(call.args)
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": args}}]}
        finish = "tool_calls"
    if not body.get("stream"):
        h.send_json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                          "model": model, "usage": usage,
                          "choices": [{"index": 0, "message": message,
                                       "finish_reason": finish}]})
        return

    def chunk(delta, finish_reason=None, with_usage=False):
        c = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
             "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        if with_usage:
            c["usage"] = usage
        return (None, c)

    if call is None:
        delta = {"role": "assistant", "content": "done"}
    else:
        tc = dict(message["tool_calls"][0], index=0)
        delta = {"role": "assistant", "content": None, "tool_calls": [tc]}
    h.send_sse([chunk(delta), chunk({}, finish, True), (None, "[DONE]")])


def handle(mock, h, method, path, body):
    path = path.split("?")[0].rstrip("/")
    if method == "GET" and path.endswith("/models"):
        h.send_json(200, {"object": "list", "data": [
            {"id": "gpt-mock", "object": "model", "created": 0, "owned_by": "mock"}]})
        return True
    if method != "POST":
        return False
    if path.endswith("/responses"):
        _responses(mock, h, body)
        return True
    if path.endswith("/chat/completions"):
        _chat(mock, h, body)
        return True
    return False
