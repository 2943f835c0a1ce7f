"""A pass-through proxy that speaks only the extension dialect of proxy chains, as the deployed
TypeScript conductors' proxies do: it refuses `proxy/initialize` (-32601), takes `initialize`
with `_meta.proxy: true` and echoes the flag, and reaches its successor through
`_proxy/successor/request` / `_proxy/successor/notification`. It routes without state but the
ids it is waiting on, so any number of messages may be in flight. It marks every prompt it
forwards (a text block "[via extension proxy]") so a test can tell it was in the path. A
`$/cancel_request` for a request it forwarded to its successor goes on in the older proxies'
form (wrapped, naming its own envelope request); one for a request it forwarded to the client
side, plain, naming its own request there."""

import json
import sys

REQUEST, NOTIFICATION = "_proxy/successor/request", "_proxy/successor/notification"
down, up, counter = {}, {}, [0]


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def fresh(prefix):
    counter[0] += 1
    return f"{prefix}{counter[0]}"


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method, mid = message.get("method"), message.get("id")
    if method == "$/cancel_request":
        wanted = message["params"]["requestId"]
        for inner, (original, _) in list(down.items()):
            if original == wanted:
                cancel = {"method": "$/cancel_request", "params": {"requestId": inner}}
                send({"method": NOTIFICATION, "params": cancel})
        for inner, original in list(up.items()):
            if original == wanted:
                send({"method": "$/cancel_request", "params": {"requestId": inner}})
    elif method == "proxy/initialize":
        send({"id": mid, "error": {"code": -32601, "message": "Method not found"}})
    elif method == REQUEST:  # from the successor, for the client side: plain
        inner = fresh("u")
        up[inner] = mid
        send({"id": inner, "method": message["params"]["method"], "params": message["params"].get("params")})
    elif method == NOTIFICATION:
        send({"method": message["params"]["method"], "params": message["params"].get("params")})
    elif method is not None and mid is not None:  # from the client side: to the successor
        params = message.get("params")
        if method == "session/prompt":
            params["prompt"].append({"type": "text", "text": "[via extension proxy]"})
        inner = fresh("d")
        down[inner] = (mid, method == "initialize")
        send({"id": inner, "method": REQUEST, "params": {"method": method, "params": params}})
    elif method is not None:
        send({"method": NOTIFICATION, "params": {"method": method, "params": message.get("params")}})
    elif mid in down:  # the successor's answer
        original, initialize = down.pop(mid)
        answer = {key: message[key] for key in ("result", "error") if key in message}
        if initialize and "result" in answer:
            answer["result"].setdefault("_meta", {})["proxy"] = True
        send({"id": original, **answer})
    elif mid in up:  # the client side's answer
        answer = {key: message[key] for key in ("result", "error") if key in message}
        send({"id": up.pop(mid), **answer})
