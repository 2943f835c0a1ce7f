#!/usr/bin/env python3
"""Peak memory of one agent session fed large prompts (issue 23).

Sends PROMPTS prompts of MEGABYTES MB each (one text block) to one v2 session of the reference
agent on stdio, waits for each turn's idle, and prints the agent's peak resident memory
(VmHWM) and what each prompt was answered. The agent's own flags follow `--`.

  crates/acp-bench/scripts/history-memory.py AGENT [--prompts 16] [--megabytes 30] -- [FLAGS...]

e.g. with a history limit of 32 MiB (the default) and prompts up to 40 MB allowed:
  history-memory.py target/release/acp-reference-agent -- --max-prompt-bytes 40000000
"""
import argparse
import json
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("agent")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--megabytes", type=int, default=30)
    parser.add_argument("flags", nargs="*")
    args = parser.parse_args()
    agent = subprocess.Popen(
        [args.agent, "--step-delay-ms", "0", *args.flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    next_id = 0

    def send(method, params):
        nonlocal next_id
        next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
        agent.stdin.write(line.encode() + b"\n")
        agent.stdin.flush()
        return next_id

    def until(done):
        while True:
            line = agent.stdout.readline()
            if not line:
                sys.exit("the agent exited")
            message = json.loads(line)
            if done(message):
                return message

    def answer(request_id):
        return until(lambda m: m.get("id") == request_id and "method" not in m)

    answer(send("initialize", {"protocolVersion": 2, "info": {"name": "probe", "version": "0"}}))
    session = answer(send("session/new", {"cwd": "/tmp"}))["result"]["sessionId"]
    text = "x" * (args.megabytes * 1_000_000)
    outcomes = []
    for _ in range(args.prompts):
        reply = answer(send("session/prompt", {
            "sessionId": session, "prompt": [{"type": "text", "text": text}]}))
        if "error" in reply:
            outcomes.append(f"refused {reply['error']['code']} {reply['error'].get('data')}")
            continue
        until(lambda m: m.get("method") == "session/update"
              and m["params"]["update"].get("sessionUpdate") == "state_update"
              and m["params"]["update"].get("state") == "idle")
        outcomes.append("turn ended")
    with open(f"/proc/{agent.pid}/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    agent.stdin.close()
    agent.wait()
    for number, outcome in enumerate(outcomes, 1):
        print(f"prompt {number}: {outcome}")
    print(f"peak RSS: {int(peak) / 1024:.0f} MiB for {args.prompts} prompts of {args.megabytes} MB")


if __name__ == "__main__":
    main()
