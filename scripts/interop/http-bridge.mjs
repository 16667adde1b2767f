// A minimal Streamable HTTP front for the stdio bridge, only so that the
// official conformance suite (which tests servers over HTTP) can reach it.
// Every HTTP session (one initialize) spawns its own tairseach-mcp, exactly
// as a stdio client would, and JSON-RPC messages travel both ways unchanged:
// this adds no MCP behaviour of its own. The HTTP side is the TypeScript
// SDK's StreamableHTTPServerTransport, the stdio side its
// StdioClientTransport.
//
//   node http-bridge.mjs PORT COMMAND [ARGS...]
//
// PORT 0 picks a free port. The URL (http://127.0.0.1:PORT/mcp) is printed
// on stdout once listening. Only 127.0.0.1 is bound.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [port, command, ...args] = process.argv.slice(2);
if (port === undefined || !command) {
  console.error("usage: node http-bridge.mjs PORT COMMAND [ARGS...]");
  process.exit(2);
}

const sessions = new Map(); // Mcp-Session-Id → { http, child }

async function newSession() {
  const child = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  // notifications/progress carry the token of the request they belong to;
  // remember token → request id so that they go out on the HTTP stream of
  // that request (the only stream a client is sure to read).
  const tokens = new Map();
  const http = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, { http, child }),
  });
  http.onmessage = (msg) => {
    const token = msg.params?._meta?.progressToken;
    if (token !== undefined && msg.id !== undefined) tokens.set(token, msg.id);
    child.send(msg).catch((e) => console.error(`http-bridge: to the bridge: ${e.message}`));
  };
  child.onmessage = (msg) => {
    let related;
    if (msg.method === "notifications/progress") related = tokens.get(msg.params?.progressToken);
    if (msg.id !== undefined && (msg.result !== undefined || msg.error !== undefined)) {
      for (const [t, id] of tokens) if (id === msg.id) tokens.delete(t);
    }
    http.send(msg, related !== undefined ? { relatedRequestId: related } : undefined).catch((e) => console.error(`http-bridge: to the client: ${e.message}`));
  };
  child.onerror = (e) => console.error(`http-bridge: bridge process: ${e.message}`);
  http.onclose = () => {
    if (http.sessionId) sessions.delete(http.sessionId);
    child.close().catch(() => {});
  };
  child.onclose = () => {
    http.close().catch(() => {});
  };
  await child.start();
  return http;
}

const server = createServer(async (req, res) => {
  try {
    if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    let body;
    if (req.method === "POST") {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
        return;
      }
    }
    const id = req.headers["mcp-session-id"];
    let http = id ? sessions.get(id)?.http : undefined;
    if (!http) {
      if (id || req.method !== "POST") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
        return;
      }
      http = await newSession();
    }
    await http.handleRequest(req, res, body);
  } catch (e) {
    console.error(`http-bridge: ${e?.stack ?? e}`);
    if (!res.headersSent) res.writeHead(500).end();
  }
});

function shutdown() {
  for (const { http, child } of sessions.values()) {
    http.close().catch(() => {});
    child.close().catch(() => {});
  }
  server.close();
  setTimeout(() => process.exit(0), 500).unref();
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

server.listen(Number(port), "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}/mcp`);
});
