#!/usr/bin/env python3
"""A v1 agent that is hard to stop, for the process-hygiene tests: it ignores SIGTERM, SIGHUP and
SIGINT, keeps running after its stdin closes, and starts a grandchild (in its process group) that
ignores them too. It writes "PID PGID GRANDCHILD_PID" to the file named by STUBBORN_PIDS once
both run. It answers initialize and session/new; a prompt saying "fast" ends at once, any other
prompt is never answered."""
import json
import os
import signal
import subprocess
import sys
import time

for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)

ignore_all = (
    "import signal, time\n"
    "for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n"
    "    signal.signal(s, signal.SIG_IGN)\n"
    "time.sleep(600)\n"
)
grandchild = subprocess.Popen([sys.executable, "-c", ignore_all])
with open(os.environ["STUBBORN_PIDS"], "w") as pids:
    pids.write(f"{os.getpid()} {os.getpgid(0)} {grandchild.pid}\n")


def answer(message_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    if method == "initialize":
        answer(message["id"], {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
    elif method == "session/new":
        answer(message["id"], {"sessionId": "stubborn"})
    elif method == "session/prompt":
        text = "".join(b.get("text", "") for b in message["params"].get("prompt", []))
        if "fast" in text:
            answer(message["id"], {"stopReason": "end_turn"})

# Its stdin closed: it does not care.
while True:
    time.sleep(60)
