// A minimal Streamable HTTP front for the stdio bridge, so that HTTP-only
// test suites (the official conformance suite) can reach it. Each HTTP
// session spawns its own tairseach-mcp and forwards JSON-RPC messages both
// ways unchanged; it adds no MCP behaviour of its own.
//
//   node http-bridge.mjs PORT BRIDGE [BRIDGE ARGS...]
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [port, command, ...args] = process.argv.slice(2);
const sessions = new Map(); // session id → HTTP transport

async function newSession() {
  const child = new StdioClientTransport({ command, args, stderr: "ignore" });
  // Progress tokens of requests in flight → the request's id, so that
  // progress travels on the stream that carries the response.
  const tokens = new Map();
  const http = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, http),
  });
  http.onmessage = (msg) => {
    const token = msg.params?._meta?.progressToken;
    if (token !== undefined && msg.id !== undefined) tokens.set(token, msg.id);
    child.send(msg).catch(() => {});
  };
  child.onmessage = (msg) => {
    let related;
    if (msg.method === "notifications/progress") related = tokens.get(msg.params?.progressToken);
    http.send(msg, related !== undefined ? { relatedRequestId: related } : undefined).catch(() => {});
  };
  http.onclose = () => {
    if (http.sessionId) sessions.delete(http.sessionId);
    child.close();
  };
  await child.start();
  return http;
}

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString() || "null") : undefined;
  const id = req.headers["mcp-session-id"];
  let http = id ? sessions.get(id) : undefined;
  if (!http) {
    if (id) {
      res.writeHead(404).end();
      return;
    }
    http = await newSession();
  }
  await http.handleRequest(req, res, body);
});
server.listen(Number(port), "127.0.0.1", () => console.error(`listening on http://127.0.0.1:${port}/mcp`));
