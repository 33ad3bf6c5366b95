# SPDX-License-Identifier: Apache-2.0
"""The Anthropic Messages API (POST /v1/messages, streamed as server-sent
events or as one JSON answer), as Claude Code speaks it."""

import itertools
import json

_ids = itertools.count(1)


def _text(content):
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.append(_text(block.get("content")))
    return "\n".join(out)


def _conversation(mock, body):
    messages = body.get("messages") or []
    first = next((m for m in messages if m.get("role") == "user"), {})
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    for m in messages:
        if m.get("role") != "user" or isinstance(m.get("content"), str):
            continue
        for block in m.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                mock.record(block.get("tool_use_id"), _text(block.get("content")))
    return _text(first.get("content")), turns


def handle(mock, h, method, path, body):
    path = path.split("?")[0]
    if method == "POST" and path.endswith("/v1/messages/count_tokens"):
        h.send_json(200, {"input_tokens": 100})
        return True
    if method != "POST" or not path.endswith("/v1/messages"):
        return False
    first, turns = _conversation(mock, body)
    call, _ = mock.next_call(first, turns)
    model = body.get("model", "claude-mock")
    msg_id = "msg_mock%06d" % next(_ids)
    if call is not None:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": "done"}
        stop = "end_turn"
    usage = {"input_tokens": 100, "output_tokens": 10,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if not body.get("stream"):
        h.send_json(200, {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                          "content": [block], "stop_reason": stop, "stop_sequence": None,
                          "usage": usage})
        return True
    start = dict(block)
    events = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    if call is not None:
        start["input"] = {}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.args)}
    else:
        start["text"] = ""
        delta = {"type": "text_delta", "text": block["text"]}
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 10}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    h.send_sse(events)
    return True
