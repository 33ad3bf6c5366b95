# SPDX-License-Identifier: Apache-2.0
"""The Gemini API's generateContent and streamGenerateContent
(POST .../models/MODEL:streamGenerateContent?alt=sse), as Gemini CLI
speaks it, with countTokens and embedContent answered trivially.

A function response is matched to the scripted call of the model turn
before it (by its id when the agent kept the one the mock gave)."""

import json


def _parts_text(parts):
    return "\n".join(p.get("text", "") for p in parts or [] if isinstance(p, dict))


def _response_text(resp):
    if isinstance(resp, dict):
        for k in ("output", "error", "content", "llmContent"):
            if k in resp:
                v = resp[k]
                return v if isinstance(v, str) else json.dumps(v)
    return json.dumps(resp)


def _generate(mock, h, body, stream):
    contents = body.get("contents") or []
    users = [_parts_text(c.get("parts")) for c in contents if c.get("role", "user") == "user"]
    first = "\n".join(users)
    turns = 0
    for c in contents:
        parts = c.get("parts") or []
        if c.get("role") == "model":
            if any("functionCall" in p for p in parts if isinstance(p, dict)):
                turns += 1
            continue
        for p in parts:
            fr = p.get("functionResponse") if isinstance(p, dict) else None
            if fr is None:
                continue
            call, _ = mock.next_call(first, turns - 1) if turns else (None, False)
            cid = fr.get("id") if fr.get("id") else (call.id if call else None)
            if call is not None and cid != call.id and not cid.startswith("call_"):
                cid = call.id
            mock.record(cid, _response_text(fr.get("response")))
    call, _ = mock.next_call(first, turns)
    if call is None:
        part = {"text": "done"}
    else:
        part = {"functionCall": {"id": call.id, "name": call.name, "args": call.args}}
    answer = {"candidates": [{"content": {"role": "model", "parts": [part]},
                              "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                                "totalTokenCount": 110},
              "modelVersion": "gemini-mock"}
    if stream:
        h.send_sse([(None, answer)])
    else:
        h.send_json(200, answer)


def handle(mock, h, method, path, body):
    path = path.split("?")[0]
    if method != "POST":
        return False
    if path.endswith(":streamGenerateContent"):
        _generate(mock, h, body, True)
        return True
    if path.endswith(":generateContent"):
        _generate(mock, h, body, False)
        return True
    if path.endswith(":countTokens"):
        h.send_json(200, {"totalTokens": 100})
        return True
    if path.endswith(":embedContent") or path.endswith(":batchEmbedContents"):
        h.send_json(200, {"embedding": {"values": [0.0] * 8},
                          "embeddings": [{"values": [0.0] * 8}]})
        return True
    return False
