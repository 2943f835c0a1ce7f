#!/usr/bin/env python3
"""Drive an ACP agent (or a conductor presenting a chain as one agent) over its stdio.

    drive.py [--protocol 1|2] [--turns echo,permission,cancel] [--expect TEXT]...
             [--transcript FILE] [--stderr FILE] [--print] -- COMMAND [ARGS...]
    drive.py --show FILE

Runs initialize (v1 or v2 params), session/new, then one turn per name in --turns, in one
session, and prints `ok   TURN` / `FAIL TURN: why` for each (exit 1 if any failed; after a
turn that did not end, the rest print `SKIP TURN`):

  echo        prompt "hello from drive"; the reply must contain "You said:" and every --expect
              text (a context proxy's text, an official proxy's marker), so the proxies' effect
              on the prompt is visible at the agent.
  permission  prompt "permission"; the agent's session/request_permission is answered with its
              allow_once option (else the first allow); the turn must end with end_turn and the
              reply say "permission granted".
  cancel      prompt "slow"; after the turn's first session/update, send session/cancel; the turn
              must end cancelled well before the slow turn would (v1: the prompt's result has
              stopReason "cancelled"; v2: the prompt is acknowledged at once with a messageId and
              the turn ends with a session/update state_update {state: idle, stopReason:
              cancelled}).
  cancel-permission  prompt "permission"; at the agent's session/request_permission send
              session/cancel and hold the answer until a `$/cancel_request` naming that request's
              id (as the client saw it) arrives, or 2 s pass; then answer it "cancelled" (v1: the
              client MUST answer pending permission requests so). The turn must end cancelled;
              a `$/cancel_request` naming an id the client never saw fails it.
  cancel-request  (v1 only) prompt "slow"; after the first session/update send
              `$/cancel_request` naming the prompt's request id; the prompt must end at once,
              answered stopReason "cancelled" or error -32800. Through a chain this checks that
              every hop translates the id to the one it used downstream.

Lines on the command's stdout that are not JSON fail the run (`FAIL stdout: ...`).
Every line in either direction goes to the transcript (NDJSON: t_ms, dir "->" to the agent or
"<-" from it, the message); --print prints it at the end, --show prints a saved one.
Standard library only.
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time

TURN_TIMEOUT = 20.0  # seconds, for a turn
CANCEL_TIMEOUT = 10.0  # seconds, for a cancelled turn (the reference agent's "slow" one runs 30 s)


class Failure(Exception):
    """The session is in an unknown state: later turns are skipped."""


class CheckFailure(Failure):
    """A turn ended but not as expected: later turns still run."""


class Peer:
    """One JSON-RPC connection over a child's stdio, recording every line."""

    def __init__(self, command, transcript, stderr):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, bufsize=0
        )
        self.transcript = transcript
        self.lines = []  # (t_ms, dir, message or raw text)
        self.inbox = queue.Queue()
        self.next_id = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _record(self, direction, message):
        entry = {"t_ms": int(time.time() * 1000), "dir": direction, "msg": message}
        with self.lock:
            self.lines.append(entry)
            if self.transcript:
                self.transcript.write(json.dumps(entry) + "\n")
                self.transcript.flush()

    def _read(self):
        for raw in self.proc.stdout:
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except ValueError:
                self._record("<-", {"not_json": text})
                continue
            self._record("<-", message)
            self.inbox.put(message)
        self.inbox.put(None)

    def send(self, message):
        self._record("->", message)
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise Failure("the agent's stdin is closed")

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def receive(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure("timed out")
        try:
            message = self.inbox.get(timeout=left)
        except queue.Empty:
            raise Failure("timed out")
        if message is None:
            raise Failure(f"the agent's stdout closed (exit {self.proc.poll()})")
        return message

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Session:
    def __init__(self, peer, protocol):
        self.peer = peer
        self.protocol = protocol
        self.session_id = None
        self.permission_requests = 0
        self.cancelled_permission = None
        self.stray_cancels = []  # ids named by `$/cancel_request`s that matched no request
        self.held_permission_id = None

    def answer_request(self, message):
        """Answers a request from the agent side (permission: allow; anything else: -32601)."""
        if message.get("method") == "session/request_permission":
            self.permission_requests += 1
            options = message.get("params", {}).get("options", [])
            chosen = next((o for o in options if o.get("kind") == "allow_once"), None) or next(
                (o for o in options if str(o.get("kind", "")).startswith("allow")), None
            )
            if chosen is None:
                result = {"outcome": {"outcome": "cancelled"}}
            else:
                result = {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}
            self.peer.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        else:
            self.peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )

    def answer_cancelled(self, request):
        if self.cancelled_permission is None:
            self.cancelled_permission = "answered cancelled after 2 s, no matching $/cancel_request"
        self.peer.send(
            {"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {"outcome": "cancelled"}}}
        )

    def call(self, method, params, timeout=TURN_TIMEOUT):
        """A request whose answer comes before anything else of interest; serves the agent's
        requests meanwhile."""
        rid = self.peer.request(method, params)
        deadline = time.monotonic() + timeout
        while True:
            message = self.peer.receive(deadline)
            if "method" in message and "id" in message:
                self.answer_request(message)
            elif "method" not in message and message.get("id") == rid:
                if "error" in message:
                    raise Failure(f"{method} failed: {json.dumps(message['error'])}")
                return message.get("result")

    def initialize(self):
        if self.protocol == 1:
            params = {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": {"name": "drive.py", "version": "0.1.0"},
            }
        else:
            params = {
                "protocolVersion": 2,
                "info": {"name": "drive.py", "version": "0.1.0"},
                "capabilities": {},
            }
        result = self.call("initialize", params)
        if result.get("protocolVersion") != self.protocol:
            raise Failure(f"initialize answered protocolVersion {result.get('protocolVersion')}")
        cwd = os.getcwd()
        params = {"cwd": cwd, "mcpServers": []} if self.protocol == 1 else {"cwd": cwd}
        self.session_id = self.call("session/new", params)["sessionId"]

    def turn(self, text, cancel_after_first_update=False, cancel_request=False,
             cancel_at_permission=False):
        """Runs one prompt turn; returns (stop_reason, reply_text, seconds, ack).

        cancel_after_first_update: send session/cancel after the turn's first session/update.
        cancel_request: send `$/cancel_request` for the prompt request instead; an error answer
        -32800 (request cancelled) then counts as the stop reason "cancelled".
        cancel_at_permission: at the agent's session/request_permission send session/cancel and
        hold the answer until the agent cancels the request (`$/cancel_request` naming the id
        the client saw) or 2 s pass, then answer it with the cancelled outcome."""
        started = time.monotonic()
        cancelling = cancel_after_first_update or cancel_request or cancel_at_permission
        held = None  # (permission request, when the cancel was sent)
        self.cancelled_permission = None
        deadline = started + (CANCEL_TIMEOUT if cancelling else TURN_TIMEOUT)
        rid = self.peer.request(
            "session/prompt",
            {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]},
        )
        reply, ack, stop, cancelled_sent = [], None, None, False
        while True:
            if held is not None and time.monotonic() - held[1] > 2:
                self.answer_cancelled(held[0])
                held = None
            try:
                message = self.peer.receive(
                    deadline if held is None else min(deadline, held[1] + 2.05)
                )
            except Failure as e:
                if held is not None and time.monotonic() < deadline:
                    continue
                waiting_for = "no answer to the prompt" if self.protocol == 1 or ack is None else (
                    "no state_update idle with a stopReason")
                sent = " (the cancel was sent)" if cancelled_sent else ""
                raise Failure(f"{e}: {waiting_for} within {deadline - started:.0f} s{sent}")
            method = message.get("method")
            if (
                cancel_at_permission
                and method == "session/request_permission"
                and not cancelled_sent
            ):
                self.permission_requests += 1
                self.held_permission_id = message.get("id")
                self.peer.notify("session/cancel", {"sessionId": self.session_id})
                cancelled_sent = True
                held = (message, time.monotonic())
            elif method == "$/cancel_request":
                target = (message.get("params") or {}).get("requestId")
                if held is not None and target == held[0]["id"]:
                    self.cancelled_permission = "by $/cancel_request naming its id"
                    self.answer_cancelled(held[0])
                    held = None
                else:
                    self.stray_cancels.append(target)
            elif method is not None and "id" in message:
                self.answer_request(message)
            elif method == "session/update":
                update = message.get("params", {}).get("update", {})
                kind = update.get("sessionUpdate")
                if kind == "agent_message_chunk":
                    content = update.get("content", {})
                    if content.get("type") == "text":
                        reply.append(content.get("text", ""))
                if (
                    self.protocol == 2
                    and kind == "state_update"
                    and update.get("state") == "idle"
                    and update.get("stopReason") is not None
                ):
                    stop = update["stopReason"]
                if cancel_after_first_update and not cancelled_sent:
                    self.peer.notify("session/cancel", {"sessionId": self.session_id})
                    cancelled_sent = True
                elif cancel_request and not cancelled_sent:
                    self.peer.notify("$/cancel_request", {"requestId": rid})
                    cancelled_sent = True
            elif method is None and message.get("id") == rid:
                if cancel_request and message.get("error", {}).get("code") == -32800:
                    return "cancelled", "".join(reply), time.monotonic() - started, ack
                if "error" in message:
                    raise Failure(f"session/prompt failed: {json.dumps(message['error'])}")
                result = message.get("result") or {}
                if self.protocol == 1:
                    stop = result.get("stopReason")
                else:
                    if "messageId" not in result:
                        raise Failure(f"v2 prompt acknowledgement without messageId: {result}")
                    ack = time.monotonic() - started
            if stop is not None and (self.protocol == 1 or ack is not None):
                if held is not None:
                    raise Failure(
                        "the turn ended with the agent's session/request_permission unanswered "
                        "and not cancelled to the client (a hop dropped the agent's "
                        "$/cancel_request?)"
                    )
                return stop, "".join(reply), time.monotonic() - started, ack


def run_turn(session, name, expect):
    if name == "echo":
        stop, reply, _, _ = session.turn("hello from drive")
        if stop != "end_turn":
            raise CheckFailure(f"stopReason {stop!r}")
        missing = [t for t in ["You said:"] + expect if t not in reply]
        if missing:
            raise CheckFailure(f"reply lacks {missing}: {reply!r}")
        return f"echo: {reply!r}"
    if name == "permission":
        before = session.permission_requests
        stop, reply, _, _ = session.turn("permission")
        if session.permission_requests == before:
            raise CheckFailure("no session/request_permission reached the client")
        if stop != "end_turn":
            raise CheckFailure(f"stopReason {stop!r}")
        if "permission granted" not in reply:
            raise CheckFailure(f"reply lacks 'permission granted': {reply!r}")
        return "granted, end_turn"
    if name == "cancel":
        stop, _, seconds, ack = session.turn("slow", cancel_after_first_update=True)
        if stop != "cancelled":
            raise CheckFailure(f"stopReason {stop!r}")
        if session.protocol == 2 and ack is not None and ack > 5:
            raise CheckFailure(f"the v2 prompt was acknowledged only after {ack:.1f} s")
        return f"cancelled after {seconds:.2f} s"
    if name == "cancel-permission":
        before = session.permission_requests
        stop, _, seconds, _ = session.turn("permission", cancel_at_permission=True)
        if session.permission_requests == before:
            raise CheckFailure("no session/request_permission reached the client")
        if session.stray_cancels:
            raise CheckFailure(
                f"$/cancel_request named id(s) {session.stray_cancels} the client never saw (the "
                f"permission request it got had id {session.held_permission_id!r}); the request "
                f"ended {session.cancelled_permission}"
            )
        if stop != "cancelled":
            raise CheckFailure(f"stopReason {stop!r}")
        return f"cancelled after {seconds:.2f} s; the permission request ended {session.cancelled_permission}"
    if name == "cancel-request":
        if session.protocol != 1:
            raise Failure("cancel-request is a v1 turn (a v2 prompt is acknowledged at once)")
        stop, _, seconds, _ = session.turn("slow", cancel_request=True)
        if stop != "cancelled":
            raise CheckFailure(f"stopReason {stop!r}")
        return f"cancelled by $/cancel_request after {seconds:.2f} s"
    raise Failure(f"unknown turn {name!r}")


def show(path, out=sys.stdout):
    with open(path) as f:
        for line in f:
            entry = json.loads(line)
            out.write(f"{entry['t_ms']} {entry['dir']} {json.dumps(entry['msg'])}\n")


def main():
    parser = argparse.ArgumentParser(
        usage=argparse.SUPPRESS,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=1)
    parser.add_argument("--turns", default="echo,permission,cancel")
    parser.add_argument("--expect", action="append", default=[], help="text the echo must hold")
    parser.add_argument("--transcript", help="write the NDJSON transcript here")
    parser.add_argument("--stderr", help="write the agent's stderr here (default: inherited)")
    parser.add_argument("--print", action="store_true", help="print the transcript at the end")
    parser.add_argument("--show", metavar="FILE", help="print a saved transcript and exit")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if args.show:
        show(args.show)
        return 0
    if not args.command:
        parser.error("no command given")

    transcript = open(args.transcript, "w") if args.transcript else None
    stderr = open(args.stderr, "wb") if args.stderr else None
    peer = Peer(args.command, transcript, stderr)
    session = Session(peer, args.protocol)
    failed = lost = False
    try:
        session.initialize()
    except Failure as e:
        print(f"FAIL init: {e}")
        failed = lost = True
    if not lost:
        for name in args.turns.split(","):
            if lost:  # the session's state is unknown; later turns would only add noise
                print(f"SKIP {name}")
                continue
            try:
                detail = run_turn(session, name, args.expect)
                print(f"ok   {name}  ({detail})")
            except CheckFailure as e:
                print(f"FAIL {name}: {e}")
                failed = True
            except Failure as e:
                print(f"FAIL {name}: {e}")
                failed = lost = True
    peer.close()
    not_json = [e["msg"]["not_json"] for e in peer.lines if "not_json" in e["msg"]]
    if not_json:
        print(f"FAIL stdout: {len(not_json)} line(s) on stdout are not JSON, first: {not_json[0]!r}")
        failed = True
    sys.stdout.flush()
    if args.print:
        for entry in peer.lines:
            print(f"{entry['t_ms']} {entry['dir']} {json.dumps(entry['msg'])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
