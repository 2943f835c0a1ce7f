#!/usr/bin/env python3
"""A deliberately broken v1 agent for `acp check`: it answers every method it does not know with
an empty result (JSON-RPC says -32601), and ignores `session/cancel`, ending a cancelled prompt
`end_turn` (v1 says it MUST be `cancelled`). Everything else is plain v1."""

import json
import sys
import threading
import time

lock = threading.Lock()


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def prompt(request):
    session = request["params"]["sessionId"]
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": session,
                     "update": {"sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": "working"}}}})
    time.sleep(0.3)
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}})


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message:
        continue  # notifications, `session/cancel` among them: ignored
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {},
                  "agentInfo": {"name": "broken-v1", "version": "0.0.1"}}
    elif method == "session/new":
        result = {"sessionId": "s1"}
    elif method == "session/prompt":
        threading.Thread(target=prompt, args=(message,), daemon=True).start()
        continue
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
