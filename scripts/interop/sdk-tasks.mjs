// Real requesters of MCP tasks against the bridge: the official
// @modelcontextprotocol/ext-tasks package over a @modelcontextprotocol/client
// 2.x Client, in both generations (2025-11-25's core tasks, "v1", and
// 2026-07-28's io.modelcontextprotocol/tasks extension, "v2"), and the
// TypeScript SDK 1.32's own 2025-11-25 tasks client
// (client.experimental.tasks), over stdio (each session spawning a
// bridge) or, with --url, over Streamable HTTP against a bridge serving
// --transport http. The bridge serves the example manifests and the
// conformance fixtures; the tools:
//
//   tairseach_notes_import      taskSupport optional; reports progress
//   tairseach_confirm_delete    asks the user once it is a task
//   tairseach_slow_compute      computes for some seconds, cancellable
//   tairseach_notes_list        never a task
//
// The checks, per generation and transport:
//
//   task        a call becomes a task: created, polled (its progress in
//               statusMessage), its result the import's
//   input       the task asks the user: answered through the requester's
//               input handler (v1: a request with related-task _meta; v2:
//               inputRequests answered by tasks/update), and completes
//   cancel      a task cancelled ends cancelled
//   immediate   a tool that does not run as tasks answers at once
//   reconnect   (HTTP) a task created by one client, which then closes, is
//               resumed by another from its serialized reference, and its
//               result fetched
//   another owner  (HTTP, with TASKS_TOKEN and OTHER_TOKEN: the tokens of
//               two named clients of the bridge) a task created by one is
//               unknown to the other, connected to the same bridge at the
//               same time: -32602, as for a task that does not exist. (Over
//               stdio the process owns the tasks, and no other client shares
//               it.)
//
// Over HTTP every request carries TASKS_TOKEN when it is set.
//
// ext-tasks needs, for a 2026-07-28 server, a raw request path: over HTTP
// it is fetch with the headers the transport requires, over stdio a tap in
// front of the Client's transport that sends the request and takes its
// response.
//
// Prints "ok   CLIENT VERSION CHECK (detail)" or "FAIL CLIENT VERSION
// CHECK: why" (CLIENT is ext-tasks or sdk-tasks, with -http over HTTP),
// and exits 1 if any check failed.
//
//   node sdk-tasks.mjs --bridge PATH --socket SOCK --manifests DIR --fixtures DIR --protocol-version V [--url URL] [--sdk]
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { Client as SDKClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as SDKStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as SDKHTTP } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    bridge: { type: "string" },
    socket: { type: "string" },
    manifests: { type: "string" },
    fixtures: { type: "string" },
    "protocol-version": { type: "string" },
    url: { type: "string" },
    sdk: { type: "boolean", default: false },
  },
});
if (!opt["protocol-version"] || (!opt.url && (!opt.bridge || !opt.socket || !opt.manifests || !opt.fixtures))) {
  console.error("usage: node sdk-tasks.mjs --bridge PATH --socket SOCK --manifests DIR --fixtures DIR --protocol-version V [--url URL] [--sdk]");
  process.exit(2);
}
const version = opt["protocol-version"];
const modern = version >= "2026-07-28";
const http = opt.url !== undefined;
const label = (opt.sdk ? "sdk-tasks" : "ext-tasks") + (http ? "-http" : "");
const info = { name: `interop-${label}`, version: "1" };

let failed = 0;
function check(name, ok, detail = "", said = "") {
  const line = (s) => String(s).replace(/\s+/g, " ").slice(0, 400);
  console.log(ok ? `ok   ${label} ${version} ${name}${said ? ` (${line(said)})` : ""}` : `FAIL ${label} ${version} ${name}: ${line(detail)}`);
  if (!ok) failed++;
  return ok;
}
const errorOf = (e) =>
  (e?.code !== undefined ? `code ${e.code}: ` : "") + (e?.message ?? String(e)) + (e?.issues ? ` ${JSON.stringify(e.issues).slice(0, 300)}` : "") + (e?.cause ? ` (${errorOf(e.cause)})` : "");
const textOf = (r) => (r?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

// within rejects with what after ms, unless p settles first.
function within(p, ms, what) {
  let t;
  const timeout = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

const bridgeArgs = () => ["--socket", opt.socket, "--manifests", opt.manifests, "--manifests", opt.fixtures, "--log-level", "error"];
const capabilities = { elicitation: { form: {} } };

// Tap is a transport in front of another: it sends raw requests of its
// own (ids "raw-N") and hands their responses to them, not to the Client.
class Tap {
  constructor(inner) {
    this.inner = inner;
    this.waiting = new Map();
    this.n = 0;
  }
  async start() {
    this.inner.onmessage = (m, extra) => {
      const w = typeof m.id === "string" && this.waiting.get(m.id);
      if (w && (m.result !== undefined || m.error !== undefined)) {
        this.waiting.delete(m.id);
        w(m.error !== undefined ? { kind: "error", error: m.error } : { kind: "result", result: m.result });
        return;
      }
      this.onmessage?.(m, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }
  send(m, o) {
    return this.inner.send(m, o);
  }
  close() {
    return this.inner.close();
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(v) {
    this.inner.setProtocolVersion?.(v);
  }
  // dispatch sends request as it is, with an id of its own, and returns
  // its response.
  dispatch = (request) =>
    new Promise((resolve, reject) => {
      const id = `raw-${++this.n}`;
      this.waiting.set(id, resolve);
      this.inner.send({ ...request, jsonrpc: "2.0", id }).catch(reject);
    });
}

// fetchDispatch sends a raw 2026-07-28 request over HTTP with the headers
// that mirror its body.
function fetchDispatch(url, token) {
  let n = 0;
  return async (request) => {
    const body = { ...request, jsonrpc: "2.0", id: `raw-${++n}` };
    const p = body.params ?? {};
    const name = p.taskId ?? p.name ?? p.uri;
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": version,
      "Mcp-Method": body.method,
    };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (name !== undefined) headers["Mcp-Name"] = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(name) ? name : `=?base64?${Buffer.from(name).toString("base64")}?=`;
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    const text = await res.text();
    let msg;
    if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      // The last data of the stream is the response.
      const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim());
      msg = JSON.parse(data.at(-1));
    } else {
      msg = JSON.parse(text);
    }
    return msg.error !== undefined ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result };
  };
}

// The named clients' tokens, over HTTP (see the top).
const tokens = { owner: process.env.TASKS_TOKEN, other: process.env.OTHER_TOKEN };
const bearer = (token) => (token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined);

// connect returns a connected 2.x Client, as the client with token over
// HTTP, and the tap in front of its transport over stdio.
async function connect(token = tokens.owner) {
  const client = new Client(info, {
    capabilities,
    ...(modern ? { versionNegotiation: { mode: { pin: version } } } : {}),
  });
  const inner = http
    ? new StreamableHTTPClientTransport(new URL(opt.url), bearer(token))
    : new StdioClientTransport({ command: opt.bridge, args: bridgeArgs(), stderr: "ignore" });
  const tap = new Tap(inner);
  await within(client.connect(tap), 20000, "connect");
  return { client, tap };
}

// session returns a task session of ext-tasks over a new Client, as the
// client with token over HTTP.
async function session(endpointId, answer, token = tokens.owner) {
  const { client, tap } = await connect(token);
  const options = {
    endpointId,
    onInputRequest: async (request) => {
      if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind}`);
      return answer(request.params);
    },
  };
  if (modern) {
    options.rawDispatch = http ? fetchDispatch(opt.url, token) : tap.dispatch;
    options.v2RequestFraming = { protocolVersion: version, clientInfo: info, clientCapabilities: capabilities };
  }
  return { client, s: createTaskSessionFromClient(client, options) };
}

const yes = async () => ({ action: "accept", content: { confirm: true } });

async function extTasks() {
  const endpoint = `tairseach-${http ? opt.url : "stdio"}`;
  let { client, s } = await session(endpoint, yes);
  try {
    // task
    try {
      const events = [];
      const ex = await s.callTool("tairseach_notes_import", { count: 3, delay_ms: 300 }, { task: { preference: "prefer" } });
      const { outcome } = await within(ex.settle({ onEvent: (e) => e.type === "task" && events.push(e.task.statusMessage ?? e.task.status) }), 30000, "the import");
      const res = resultFromTaskOutcome(outcome);
      check("task", ex.kind === "task" && res.structuredContent?.imported === 3,
        `${ex.kind}, ${JSON.stringify(outcome).slice(0, 200)}`, `task ${ex.handle?.taskId}, seen: ${[...new Set(events)].join(" · ")}`);
    } catch (e) {
      check("task", false, errorOf(e));
    }
    // input
    try {
      const ex = await s.callTool("tairseach_confirm_delete", { filename: "old.txt" }, { task: { preference: "prefer" } });
      const { outcome } = await within(ex.settle(), 30000, "the question");
      const res = resultFromTaskOutcome(outcome);
      check("input", ex.kind === "task" && textOf(res) === "Deleted old.txt.", `${ex.kind}, ${JSON.stringify(outcome).slice(0, 200)}`, textOf(res));
    } catch (e) {
      check("input", false, errorOf(e));
    }
    // cancel
    try {
      const ex = await s.callTool("tairseach_slow_compute", { seconds: 30, label: "cancel" }, { task: { preference: "prefer" } });
      await ex.cancel();
      const { outcome } = await within(ex.settle(), 30000, "the cancelled task");
      check("cancel", ex.kind === "task" && outcome.status === "cancelled", `${ex.kind}, ${outcome.status}`, `task ${ex.handle?.taskId} ${outcome.status}`);
    } catch (e) {
      check("cancel", false, errorOf(e));
    }
    // immediate
    try {
      const ex = await s.callTool("tairseach_notes_list", {});
      const res = resultFromTaskOutcome(await ex.result());
      check("immediate", ex.kind === "immediate" && Array.isArray(res.structuredContent?.notes), `${ex.kind}, ${JSON.stringify(res).slice(0, 200)}`);
    } catch (e) {
      check("immediate", false, errorOf(e));
    }
    if (!http) return;
    // another owner
    if (tokens.owner && tokens.other) {
      try {
        const ex = await s.callTool("tairseach_slow_compute", { seconds: 5, label: "owner" }, { task: { preference: "prefer" } });
        const other = await session(endpoint, yes, tokens.other);
        let code;
        try {
          await other.s.task(ex.handle.taskId).snapshot();
        } catch (e) {
          code = e?.code ?? e?.response?.code;
        } finally {
          await other.client.close().catch(() => {});
        }
        const mine = await s.task(ex.handle.taskId).snapshot();
        await ex.cancel();
        check("another owner", ex.kind === "task" && code === -32602 && mine?.taskId === ex.handle.taskId,
          `${ex.kind}; the other client got ${code}, want -32602; the owner's snapshot ${JSON.stringify(mine).slice(0, 120)}`,
          "another named client of the same bridge does not know the task: -32602; its owner does");
      } catch (e) {
        check("another owner", false, errorOf(e));
      }
    }
    // reconnect
    try {
      const ex = await s.callTool("tairseach_notes_import", { count: 2, delay_ms: 600 }, { task: { preference: "prefer" } });
      // The client goes away as a crashed or restarted one does: its
      // connection closes, its task session is dropped unclosed (closing it
      // would cancel the task), the reference kept.
      const ref = ex.serializeReference();
      await ex.detach();
      await client.close();
      ({ client, s } = await session(endpoint, yes));
      const resumed = await s.resumeTask(ref);
      const { outcome } = await within(resumed.settle(), 30000, "the resumed task");
      const res = resultFromTaskOutcome(outcome);
      check("reconnect", res.structuredContent?.imported === 2, JSON.stringify(outcome).slice(0, 200), `task ${ref.taskId} resumed by a new client`);
    } catch (e) {
      check("reconnect", false, errorOf(e));
    }
  } finally {
    await s.close().catch(() => {});
    await client.close().catch(() => {});
  }
}

// sdkTasks drives the TypeScript SDK 1.32's 2025-11-25 tasks client.
async function sdkTasks() {
  const client = new SDKClient(info, { capabilities: { ...capabilities, tasks: {} } });
  client.setRequestHandler(ElicitRequestSchema, yes);
  const transport = http
    ? new SDKHTTP(new URL(opt.url), bearer(tokens.owner))
    : new SDKStdio({ command: opt.bridge, args: bridgeArgs(), stderr: "ignore" });
  await within(client.connect(transport), 20000, "connect");
  const stream = async (name, args) => {
    const seen = [];
    let result, error, taskId;
    for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 60000 } })) {
      if (m.type === "taskCreated") taskId = m.task.taskId;
      if (m.type === "taskStatus") seen.push(m.task.statusMessage ?? m.task.status);
      if (m.type === "result") result = m.result;
      if (m.type === "error") error = m.error;
    }
    return { result, error, taskId, seen };
  };
  try {
    try {
      const { result, error, taskId, seen } = await within(stream("tairseach_notes_import", { count: 3, delay_ms: 300 }), 30000, "the import");
      check("task", taskId && result?.structuredContent?.imported === 3, errorOf(error) || JSON.stringify(result), `task ${taskId}, seen: ${[...new Set(seen)].join(" · ")}`);
    } catch (e) {
      check("task", false, errorOf(e));
    }
    try {
      const { result, error, taskId } = await within(stream("tairseach_confirm_delete", { filename: "old.txt" }), 30000, "the question");
      check("input", taskId && textOf(result) === "Deleted old.txt.", errorOf(error) || JSON.stringify(result), textOf(result));
    } catch (e) {
      check("input", false, errorOf(e));
    }
    try {
      const created = await client.request(
        { method: "tools/call", params: { name: "tairseach_slow_compute", arguments: { seconds: 30 }, task: { ttl: 60000 } } },
        (await import("@modelcontextprotocol/sdk/types.js")).CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      await client.experimental.tasks.cancelTask(taskId);
      const task = await client.experimental.tasks.getTask(taskId);
      check("cancel", task.status === "cancelled", task.status, `task ${taskId} ${task.status}`);
    } catch (e) {
      check("cancel", false, errorOf(e));
    }
  } finally {
    await client.close().catch(() => {});
  }
}

try {
  await (opt.sdk ? sdkTasks() : extTasks());
} catch (e) {
  check("session", false, errorOf(e));
}
process.exit(failed ? 1 : 0);
