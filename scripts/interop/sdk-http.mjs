// The official TypeScript SDK client over Streamable HTTP
// (StreamableHTTPClientTransport) against a bridge serving
// --transport http: list, call (success, backend error, bad arguments,
// unknown tool), progress, cancellation, list_changed after a manifest
// edit, four clients at once, and the end of the session. Prints one line
// per check, "ok   sdk-http VERSION CHECK" or "FAIL sdk-http VERSION CHECK:
// why", and exits 1 if any check failed.
//
//   node sdk-http.mjs --url URL --manifests DIR --audit FILE [--protocol-version V]
//
// DIR is a manifest folder the bridge watches (this script adds a file to
// it and removes it again); FILE is the bridge's --audit-log, where the
// bridge records each call with its client, transport and outcome, so
// that a cancellation can be checked where the bridge ended the call. The
// bridge must send progress heartbeats often (--progress-interval 200ms).
//
// The SDK asks for its newest version (2025-11-25 for SDK 1.x);
// --protocol-version makes this script ask for an older one instead, by
// rewriting the initialize request on its way out.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { waitForEntries } from "./audit.mjs";

const { values: opt } = parseArgs({
  options: {
    url: { type: "string" },
    manifests: { type: "string" },
    audit: { type: "string" },
    "protocol-version": { type: "string" },
    timeout: { type: "string", default: "90" },
  },
});
for (const k of ["url", "manifests", "audit"]) {
  if (!opt[k]) {
    console.error("usage: node sdk-http.mjs --url URL --manifests DIR --audit FILE [--protocol-version V]");
    process.exit(2);
  }
}
const version = opt["protocol-version"] ?? LATEST_PROTOCOL_VERSION;
const structured = version >= "2025-06-18"; // structuredContent and outputSchema exist from 2025-06-18 on
const clientName = `interop-sdk-http-${version}`;

// check prints one check's line: "ok" with what it measured (said), or
// "FAIL" with why (detail).
let failed = 0;
function check(name, ok, detail = "", said = "") {
  const line = (s) => String(s).replace(/\s+/g, " ").slice(0, 400);
  console.log(ok ? `ok   sdk-http ${version} ${name}${said ? ` (${line(said)})` : ""}` : `FAIL sdk-http ${version} ${name}: ${line(detail)}`);
  if (!ok) failed++;
  return ok;
}
const textOf = (r) => (r?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
const show = (v) => JSON.stringify(v);
const errorOf = (e) => (e?.code !== undefined ? `code ${e.code}: ` : "") + (e?.message ?? String(e));

// within rejects with what after ms, unless p settles first.
function within(p, ms, what) {
  let t;
  const timeout = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

// A transport in front of the SDK's Streamable HTTP transport: it can
// rewrite the requested protocol version, records the version the server
// answered, and tells when the session's GET stream (where list_changed
// arrives) is open.
class TapTransport {
  constructor(url, requestVersion) {
    let opened;
    this.streamOpen = new Promise((resolve) => (opened = resolve));
    this.inner = new StreamableHTTPClientTransport(new URL(url), {
      // No reconnection: a GET stream that ends stays ended, so that a
      // list_changed it would have carried is missed, not retried.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      fetch: async (u, init) => {
        const res = await fetch(u, init);
        if (init?.method === "GET" && res.ok) opened();
        return res;
      },
    });
    this.requestVersion = requestVersion;
    this.initializeId = undefined;
    this.negotiated = undefined;
    this.inner.onmessage = (msg, extra) => {
      if (this.initializeId !== undefined && msg.id === this.initializeId && msg.result) this.negotiated = msg.result.protocolVersion;
      this.onmessage?.(msg, extra);
    };
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.onclose?.();
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(v) {
    this.inner.setProtocolVersion(v);
  }
  start() {
    return this.inner.start();
  }
  close() {
    return this.inner.close();
  }
  terminateSession() {
    return this.inner.terminateSession();
  }
  send(msg, options) {
    if (msg.method === "initialize") {
      this.initializeId = msg.id;
      if (this.requestVersion) msg = { ...msg, params: { ...msg.params, protocolVersion: this.requestVersion } };
    }
    return this.inner.send(msg, options);
  }
}

// connect returns a connected client named name, with its transport and a
// function that resolves on its next notifications/tools/list_changed.
async function connect(name) {
  const client = new Client({ name, version: "1.0.0" });
  let notify = () => {};
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => notify());
  const nextListChanged = (ms) =>
    within(new Promise((resolve) => (notify = resolve)), ms, "notifications/tools/list_changed").finally(() => (notify = () => {}));
  const transport = new TapTransport(opt.url, opt["protocol-version"]);
  await client.connect(transport, { timeout: 15000 });
  return { client, transport, nextListChanged };
}

// writeManifest adds (or rewrites) a manifest with one tool, served as
// tairseach_<name with _ for .>.
function writeManifest(path, id, name, description) {
  writeFileSync(
    path,
    JSON.stringify({
      id,
      tools: [{ name, description, inputSchema: { type: "object" } }],
      implementation: { type: "internal", methods: { [name]: "system.info" } },
    }),
  );
}

const watchdog = setTimeout(() => {
  console.log(`FAIL sdk-http ${version} session: not finished after ${opt.timeout}s`);
  process.exit(1);
}, Number(opt.timeout) * 1000);

const added = join(opt.manifests, `interop-http-${version}.json`);
const shared = join(opt.manifests, `interop-http-shared-${version}.json`);
const clients = [];
try {
  const main = await connect(clientName);
  clients.push(main);
  const { client, transport } = main;
  check("connect (initialize)", client.getServerVersion()?.name === "tairseach-mcp", show(client.getServerVersion()));
  check("negotiated version", transport.negotiated === version, `asked for ${version}, server answered ${transport.negotiated}`);
  check("session id", /^[0-9a-f]{32}$/.test(transport.sessionId ?? ""), `Mcp-Session-Id ${transport.sessionId}`);
  check("capabilities tools.listChanged", client.getServerCapabilities()?.tools?.listChanged === true, show(client.getServerCapabilities()));

  const list = await client.listTools();
  const names = list.tools.map((t) => t.name);
  const want = ["tairseach_system_info", "tairseach_notes_create", "tairseach_secrets_read", "tairseach_debug_sleep"];
  check("tools/list", want.every((n) => names.includes(n)), `got ${names.join(", ")}`);
  const withOutput = list.tools.filter((t) => t.outputSchema).length;
  check("tools/list outputSchema as the version has it", structured ? withOutput > 0 : withOutput === 0, `${withOutput} tool(s) with outputSchema`);

  // A success. The SDK itself checks structuredContent against the tool's
  // outputSchema and throws if they disagree.
  const title = `over HTTP ${version}`;
  try {
    const r = await client.callTool({ name: "tairseach_notes_create", arguments: { title, body: "interop" } });
    const okStructured = structured ? r.structuredContent?.title === title : r.structuredContent === undefined;
    check("tools/call success", !r.isError && textOf(r).includes(title) && okStructured, show(r));
  } catch (e) {
    check("tools/call success", false, errorOf(e));
  }

  try {
    const r = await client.callTool({ name: "tairseach_secrets_read", arguments: { name: "api-key" } });
    check("tools/call backend error is isError", r.isError === true && textOf(r).includes("-32011"), show(r));
  } catch (e) {
    check("tools/call backend error is isError", false, `threw instead: ${errorOf(e)}`);
  }

  try {
    const r = await client.callTool({ name: "tairseach_notes_create", arguments: { title: 7 } });
    check("tools/call bad arguments is isError", r.isError === true && textOf(r).includes("title"), show(r));
  } catch (e) {
    check("tools/call bad arguments is isError", false, `threw instead: ${errorOf(e)}`);
  }

  try {
    const r = await client.callTool({ name: "tairseach_no_such_tool", arguments: {} });
    check("tools/call unknown tool is an error", false, `no error, result ${show(r)}`);
  } catch (e) {
    check("tools/call unknown tool is an error", e?.code === -32602, errorOf(e));
  }

  // Progress: a call of 1.2 s with heartbeats every 200 ms, which come on
  // the POST's event stream before the result.
  try {
    const seen = [];
    const r = await client.callTool({ name: "tairseach_debug_sleep", arguments: { ms: 1200 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    const rising = seen.every((p, i) => i === 0 || p > seen[i - 1]);
    const said = `${seen.length} notifications/progress, progress ${seen.join(", ")}`;
    check("progress", !r.isError && seen.length >= 3 && rising, `${said}; result ${show(r)}`, said);
  } catch (e) {
    check("progress", false, errorOf(e));
  }

  // Cancellation: abort a 30 s call once it runs (its first heartbeat).
  // The SDK sends notifications/cancelled; the bridge must end the call
  // (its audit entry says cancelled, well before 30 s) and keep serving.
  try {
    const ac = new AbortController();
    const started = Date.now();
    const call = client.callTool({ name: "tairseach_debug_sleep", arguments: { ms: 30000 } }, undefined, {
      signal: ac.signal,
      onprogress: () => ac.abort("the user gave up"),
    });
    let rejected = "";
    try {
      await within(call, 10000, "the aborted call");
    } catch (e) {
      rejected = errorOf(e);
    }
    const entry = (await waitForEntries(opt.audit, (e) => e.client === clientName && e.name === "tairseach_debug_sleep" && e.outcome === "cancelled"))[0];
    const after = await client.callTool({ name: "tairseach_notes_create", arguments: { title: "after a cancellation" } });
    const said =
      `rejected after ${Date.now() - started} ms (${rejected || "not rejected"}); ` +
      `the bridge recorded ${entry ? `${entry.outcome} after ${Math.round(entry.dur_ms)} ms` : "no cancelled call"}; ` +
      `the next call ${after.isError ? "failed" : "succeeded"}`;
    check("cancellation", rejected !== "" && entry?.dur_ms < 10000 && entry?.transport === "http" && !after.isError, said, said);
  } catch (e) {
    check("cancellation", false, errorOf(e));
  }

  // list_changed: the bridge watches its manifest folder; the
  // notification comes on the session's GET stream, once it is open.
  const addedName = "tairseach_interop_http_added";
  let addedOk = false;
  try {
    await within(transport.streamOpen, 10000, "the GET stream");
    const changed = main.nextListChanged(10000);
    writeManifest(added, `interop-http-${version}`, "interop.http.added", "Added while a client is connected over HTTP.");
    await changed;
    const again = (await client.listTools()).tools.map((t) => t.name);
    addedOk = check("list_changed after adding a manifest", again.includes(addedName), `tools/list then: ${again.join(", ")}`);
    const r = await client.callTool({ name: addedName, arguments: {} });
    check("tools/call the added tool", !r.isError, show(r).slice(0, 200));
  } catch (e) {
    check("list_changed after adding a manifest", false, errorOf(e));
  }
  if (addedOk) {
    try {
      const changed = main.nextListChanged(10000);
      rmSync(added, { force: true });
      await changed;
      const again = (await client.listTools()).tools.map((t) => t.name);
      check("list_changed after removing it", !again.includes(addedName), `still listed: ${again.join(", ")}`);
    } catch (e) {
      check("list_changed after removing it", false, errorOf(e));
    }
  } else {
    check("list_changed after removing it", false, "not tried: adding a manifest was not seen");
  }

  // Four clients at once on the one bridge: each makes its calls while
  // the others make theirs, and one manifest edit reaches them all.
  try {
    const perClient = 10;
    const four = await Promise.all([1, 2, 3, 4].map((i) => connect(`${clientName}-c${i}`)));
    clients.push(...four);
    const results = await Promise.all(
      four.flatMap((c, i) =>
        Array.from({ length: perClient }, (_, j) =>
          c.client.callTool({ name: "tairseach_notes_create", arguments: { title: `c${i + 1}-${j}` } }).then((r) => !r.isError && textOf(r).includes(`c${i + 1}-${j}`)),
        ),
      ),
    );
    const good = results.filter(Boolean).length;
    await Promise.all(four.map((c) => within(c.transport.streamOpen, 10000, "a GET stream")));
    const told = Promise.all(four.map((c) => c.nextListChanged(10000)));
    writeManifest(shared, `interop-http-shared-${version}`, "interop.http.shared", "Seen by four clients.");
    await told;
    const recorded = await waitForEntries(opt.audit, (e) => e.client?.startsWith(`${clientName}-c`) && e.name === "tairseach_notes_create", {
      count: 4 * perClient,
    });
    const sessions = new Set(recorded.map((e) => e.session)).size;
    const said = `${good} of ${4 * perClient} concurrent calls right; the bridge recorded ${recorded.length} in ${sessions} sessions; list_changed reached all four`;
    check("four clients at once", good === 4 * perClient && recorded.length === 4 * perClient && sessions === 4, said, said);
  } catch (e) {
    check("four clients at once", false, errorOf(e));
  }

  // The end of a session: DELETE, after which its id is unknown (404).
  try {
    const id = transport.sessionId;
    await transport.terminateSession();
    const res = await fetch(opt.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": id, "MCP-Protocol-Version": version },
      body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "tools/list" }),
    });
    await res.body?.cancel();
    check("DELETE ends the session", res.status === 404, `a request in the ended session got HTTP ${res.status}`);
  } catch (e) {
    check("DELETE ends the session", false, errorOf(e));
  }
} catch (e) {
  check("session", false, e?.stack ?? e);
} finally {
  rmSync(added, { force: true });
  rmSync(shared, { force: true });
  clearTimeout(watchdog);
  const closed = await Promise.allSettled(clients.map((c) => c.client.close()));
  const bad = closed.filter((r) => r.status === "rejected");
  check("close", bad.length === 0, bad.map((r) => errorOf(r.reason)).join("; "));
}
process.exit(failed ? 1 : 0);
