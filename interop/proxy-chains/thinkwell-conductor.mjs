#!/usr/bin/env node
// Runs an ACP proxy chain under @thinkwell/conductor, which ships no command line of its own.
//
//   node thinkwell-conductor.mjs "PROXY ARGS"... "AGENT ARGS"
//
// The last argument is the agent, the ones before it the proxies (each one command line, split
// by the conductor). This process's stdin/stdout are the client's side (newline-delimited
// JSON-RPC); the components' stderr passes through. THINKWELL_TRACE=FILE writes the conductor's
// JSONL trace. The MCP bridge is off: the harness passes no MCP servers.
//
// With a trace configured, the conductor 0.5.7 logs at info level through console.log, i.e. onto
// stdout, the client's JSON-RPC stream; console.log goes to stderr here instead.
import { Conductor, fromCommands } from "@thinkwell/conductor";
import { createInterface } from "node:readline";

console.log = (...args) => console.error(...args);
console.info = console.log;
console.debug = console.log;

const chain = process.argv.slice(2);
if (chain.length === 0) {
  process.stderr.write("usage: thinkwell-conductor.mjs [PROXY...] AGENT\n");
  process.exit(2);
}

// The client side: one JSON value per stdin line in, one per stdout line out.
const client = {
  async connect() {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    async function* messages() {
      for await (const line of lines) {
        if (line.trim() === "") continue;
        try {
          yield JSON.parse(line);
        } catch (e) {
          process.stderr.write(`thinkwell-conductor: skipping a line that is not JSON: ${e}\n`);
        }
      }
    }
    return {
      send: (message) => process.stdout.write(JSON.stringify(message) + "\n"),
      messages: messages(),
      close: async () => lines.close(),
    };
  },
};

const conductor = new Conductor({
  instantiator: fromCommands(chain),
  trace: process.env.THINKWELL_TRACE ? { path: process.env.THINKWELL_TRACE } : undefined,
  mcpBridgeMode: "disabled",
});
await conductor.connect(client);
process.exit(0);
