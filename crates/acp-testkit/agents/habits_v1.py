#!/usr/bin/env python3
"""A fake v1 agent with the habits of the real ones (issue 25), for the CLI's tests.

- An `available_commands_update` and a `usage_update` on the line right after the `session/new`
  response, in the same write (claude-agent-acp, mistral-vibe).
- `usage_update` with `used: null` (claude-agent-acp), also right after a prompt's response.
- A prompt "edit" asks permission for a tool call announced just before, naming only its
  `toolCallId` (mistral-vibe), with `allow_always` listed first (claude, gemini); refused, the
  tool call fails with the reason in its content and the turn ends `cancelled` (claude). With
  `--preamble N`, N lines of text come first, in one write.
- A prompt "shell" runs a shell line through `terminal/create` without `args` (claude-code);
  "read" reads `notes.md` in the session's directory with `fs/read_text_file`.
- An env-var auth method with `vars` (codex); `authenticate` without the variable answers
  -32603 with the reason in `data`; with `--require-auth`, `session/new` needs it first.
- Noisy stderr (hook warnings, a stack trace); with `--ignore-eof`, it does not exit on EOF.
- With `--load`: `loadSession` without `session/close` (claude-code, gemini, qwen); a load
  replays the session's one exchange.
Any other prompt is answered "Hello!", after `--slow SECONDS` unless cancelled first.
"""

import json
import os
import sys
import threading
import time

ARGS = sys.argv[1:]
lock = threading.Lock()
pending = {}
next_id = [100]
authenticated = [False]
cwd = ["/"]
cancelled = threading.Event()


def flag_value(name, default):
    if name in ARGS:
        return float(ARGS[ARGS.index(name) + 1])
    return default


def write(*messages):
    # Several messages in one write: the client reads them in one chunk.
    with lock:
        sys.stdout.write("".join(json.dumps(m) + "\n" for m in messages))
        sys.stdout.flush()


def noise(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def update(session, body):
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": session, "update": body}}


def text(session, words):
    return update(session, {"sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": words}})


def usage(session):
    return update(session, {"sessionUpdate": "usage_update", "used": None, "size": 200000,
                            "cost": {"amount": 0.01, "currency": "USD"}})


def call(method, params):
    """A request to the client; waits for its answer."""
    with lock:
        next_id[0] += 1
        ident = next_id[0]
        slot = pending[ident] = {"event": threading.Event()}
    write({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
    slot["event"].wait(30)
    return slot.get("answer", {})


def edit(session):
    lines = int(flag_value("--preamble", 0))
    if lines:
        write(*(text(session, "preamble line %d\n" % n) for n in range(1, lines + 1)))
    write(text(session, "Let me look."))
    write(update(session, {"sessionUpdate": "tool_call", "toolCallId": "t1",
                           "title": "Edit notes.md", "kind": "edit", "status": "pending"}))
    answer = call("session/request_permission", {
        "sessionId": session,
        "toolCall": {"toolCallId": "t1"},
        "options": [
            {"optionId": "always", "name": "Always Allow", "kind": "allow_always"},
            {"optionId": "once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ]})
    outcome = answer.get("result", {}).get("outcome", {})
    chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
    if chosen in ("once", "always"):
        write(update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                               "status": "completed"}),
              text(session, "allowed " + chosen))
        return "end_turn"
    write(update(session, {
        "sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed",
        "content": [{"type": "content", "content": {
            "type": "text", "text": "The user doesn't want to edit notes.md"}}]}))
    return "cancelled"


def shell(session):
    created = call("terminal/create", {"sessionId": session,
                                       "command": "echo 'hello from' \"the shell\" | tr a-z A-Z"})
    terminal = created.get("result", {}).get("terminalId")
    if terminal is None:
        write(text(session, "terminal refused: " + json.dumps(created.get("error"))))
        return "end_turn"
    call("terminal/wait_for_exit", {"sessionId": session, "terminalId": terminal})
    output = call("terminal/output", {"sessionId": session, "terminalId": terminal})
    call("terminal/release", {"sessionId": session, "terminalId": terminal})
    write(text(session, "shell said: " + output.get("result", {}).get("output", "").strip()))
    return "end_turn"


def read(session):
    answer = call("fs/read_text_file", {"sessionId": session, "path": cwd[0] + "/notes.md"})
    if "result" in answer:
        write(text(session, "read: " + answer["result"].get("content", "")))
    else:
        write(text(session, "read refused: " + json.dumps(answer.get("error"))))
    return "end_turn"


def prompt(request):
    session = request["params"]["sessionId"]
    words = " ".join(block.get("text", "") for block in request["params"]["prompt"]).strip()
    noise("(node:4242) Warning: PreToolUse hook exited with status 1")
    if words == "edit":
        stop = edit(session)
    elif words == "shell":
        stop = shell(session)
    elif words == "read":
        stop = read(session)
    else:
        if cancelled.wait(flag_value("--slow", 0)):
            stop = "cancelled"
        else:
            write(text(session, "Hello!"))
            stop = "end_turn"
    # The response, and on the next line of the same write, a usage report.
    write({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": stop}}, usage(session))


def respond(message):
    method = message.get("method")
    if method == "initialize":
        return {"result": {
            "protocolVersion": 1,
            "agentCapabilities": {"promptCapabilities": {}, "loadSession": "--load" in ARGS},
            "authMethods": [{"id": "openai-api-key", "name": "OpenAI API key",
                             "description": "Use OPENAI_API_KEY", "type": "env_var",
                             "vars": [{"name": "OPENAI_API_KEY"}]}],
            "agentInfo": {"name": "habits-v1", "version": "0.0.1"}}}
    if method == "authenticate":
        if not os.environ.get("OPENAI_API_KEY"):
            return {"error": {"code": -32603, "message": "Internal error",
                              "data": "OPENAI_API_KEY is not set"}}
        authenticated[0] = True
        return {"result": {}}
    if method == "session/new":
        if "--require-auth" in ARGS and not authenticated[0]:
            return {"error": {"code": -32000, "message": "Authentication required"}}
        cwd[0] = message["params"].get("cwd", "/")
        return {"result": {"sessionId": "s1"}, "then": [
            update("s1", {"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": "review", "description": "Review the changes"},
                {"name": "init", "description": "Write AGENTS.md"}]}),
            usage("s1")]}
    if method == "session/load" and "--load" in ARGS:
        session = message["params"]["sessionId"]
        replay = [update(session, {"sessionUpdate": "user_message_chunk",
                                   "content": {"type": "text", "text": "hello"}}),
                  text(session, "Hello!")]
        write(*replay)
        return {"result": {}}
    return {"error": {"code": -32601, "message": "Method not found"}}


noise("[hooks] warning: no hooks configured\n    at loadHooks (hooks.js:12:7)")
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "method" not in message:
        slot = pending.get(message.get("id"))
        if slot is not None:
            slot["answer"] = message
            slot["event"].set()
        continue
    if "id" not in message:
        if message["method"] == "session/cancel":
            cancelled.set()
        continue
    if message["method"] == "session/prompt":
        cancelled.clear()  # here, in arrival order: a cancel that follows is never lost
        threading.Thread(target=prompt, args=(message,), daemon=True).start()
        continue
    answer = respond(message)
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    reply.update({k: v for k, v in answer.items() if k != "then"})
    write(reply, *answer.get("then", []))

if "--ignore-eof" in ARGS:
    noise("stdin closed; staying up")
    time.sleep(3600)
