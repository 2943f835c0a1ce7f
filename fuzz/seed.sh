#!/usr/bin/env bash
# Builds the seed corpora from the fixtures (fuzz/corpus/<target>/; not committed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
rm -rf corpus
mkdir -p corpus/decode_messages corpus/framing corpus/reducer_replay corpus/terminal_text
python3 - <<'PY'
import glob, json, os, hashlib
def put(target, data):
    name = hashlib.sha1(data).hexdigest()
    with open(f"corpus/{target}/{name}", "wb") as f:
        f.write(data)
lines = []
for path in sorted(glob.glob("../fixtures/*/*/messages/*.json")):
    text = open(path, "rb").read()
    try:
        line = json.dumps(json.loads(text), separators=(",", ":")).encode()
    except ValueError:
        line = text.replace(b"\n", b"")
    put("decode_messages", line)
    lines.append(line)
for i in range(0, len(lines), 8):
    put("framing", b"\n".join(lines[i:i + 8]) + b"\n")
for path in sorted(glob.glob("../fixtures/v2/sessions/*.jsonl")):
    updates = []
    for raw in open(path, "rb"):
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and m.get("method") == "session/update":
                updates.append(json.dumps(m["params"]["update"], separators=(",", ":")).encode())
    if updates:
        put("reducer_replay", b"\n".join(updates))
for sample in [b"\x00plain text\r\nline two\n", b"\x03caf\xc3\xa9 \x1b[31mred\x1b[0m\n",
               b"\x05\x1b]0;title\x07ok \x1bPdcs\x1b\\ done", b"\x01a\rb\r\n\xe2\x80\xaeevil\n",
               b"\x02\xf0\x9f\x98\x80\xe2\x80\x8d\xf0\x9f\x98\x80\x18\x1a"]:
    put("terminal_text", sample)
PY
for target in corpus/*; do echo "$target: $(ls "$target" | wc -l) seeds"; done
