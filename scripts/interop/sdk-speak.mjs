// The official TypeScript SDK client using the example tools whose
// backend speaks during the call (docs/backend-protocol.md): a Client
// that declares sampling, elicitation and roots and answers each, with a
// progress callback and a log handler, over StdioClientTransport
// (spawning the bridge) or, with --url, over StreamableHTTPClientTransport
// against a bridge serving --transport http. The example backend does
// the asking; the bridge passes each question on to this client and its
// answer back.
//
//   negotiated version  the session's protocol version
//   import progress     tairseach_notes_import: progress after each note,
//                       in order, before the response, and through the
//                       progress callback (which misses a last step read
//                       with the response: the SDK's own race)
//   import log message  its log message at the end, at the level set
//   digest              tairseach_notes_digest asks the client's model
//                       (sampling/createMessage) about the notes imported,
//                       and returns the model's text
//   label               tairseach_notes_label asks the user for a label
//                       with a form (elicitation/create): stored, as
//                       tairseach_notes_get then shows
//   label declined      a decline leaves the note as it was
//   roots               tairseach_files_roots returns the client's roots
//   no capabilities     a client that declared none gets an isError result
//                       from each of the three, saying what it lacks, at
//                       once, and is never asked
//
// Prints one line per check, "ok   CLIENT VERSION CHECK (detail)" or
// "FAIL CLIENT VERSION CHECK: why" (CLIENT is sdk-speak over stdio,
// sdk-speak-http with --url), and exits 1 if any check failed.
//
//   node sdk-speak.mjs --bridge PATH --socket SOCK --manifests DIR [--url URL] [--protocol-version V]
//
// The SDK asks for its newest version (2025-11-25 for SDK 1.x);
// --protocol-version makes this script ask for another, by rewriting the
// initialize request on its way out.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    bridge: { type: "string" },
    socket: { type: "string" },
    manifests: { type: "string" },
    url: { type: "string" },
    "protocol-version": { type: "string" },
    "log-level": { type: "string", default: "error" },
    timeout: { type: "string", default: "60" },
  },
});
if (!opt.url && (!opt.bridge || !opt.socket || !opt.manifests)) {
  console.error("usage: node sdk-speak.mjs --bridge PATH --socket SOCK --manifests DIR [--url URL] [--protocol-version V]");
  process.exit(2);
}
const version = opt["protocol-version"] ?? LATEST_PROTOCOL_VERSION;
const label = opt.url ? "sdk-speak-http" : "sdk-speak";
const clientName = `interop-${label}-${version}`;
const tag = `speak-${label}-${process.pid}`;
const roots = [{ uri: "file:///home/ann/notes", name: "notes" }];

let failed = 0;
function check(name, ok, detail = "", said = "") {
  const line = (s) => String(s).replace(/\s+/g, " ").slice(0, 400);
  console.log(ok ? `ok   ${label} ${version} ${name}${said ? ` (${line(said)})` : ""}` : `FAIL ${label} ${version} ${name}: ${line(detail)}`);
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

// A transport in front of the SDK's: it rewrites the requested protocol
// version, records the one the server answered, and counts the requests
// of the server's by method.
class TapTransport {
  constructor(inner) {
    this.inner = inner;
    this.asked = new Map();
    this.initializeId = undefined;
    this.negotiated = undefined;
    this.wire = []; // the progress notifications and responses received, in order
    inner.onmessage = (msg, extra) => {
      if (msg.method && msg.id !== undefined) this.asked.set(msg.method, (this.asked.get(msg.method) ?? 0) + 1);
      if (msg.method === "notifications/progress") this.wire.push({ token: msg.params.progressToken, seen: `${msg.params.progress}/${msg.params.total} ${msg.params.message}` });
      else if (msg.id !== undefined && msg.method === undefined) this.wire.push({ response: msg.id });
      if (msg.id !== undefined && msg.id === this.initializeId && msg.result) this.negotiated = msg.result.protocolVersion;
      this.onmessage?.(msg, extra);
    };
    inner.onerror = (e) => this.onerror?.(e);
    inner.onclose = () => this.onclose?.();
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(v) {
    this.inner.setProtocolVersion?.(v);
  }
  start() {
    return this.inner.start();
  }
  close() {
    return this.inner.close();
  }
  send(msg, options) {
    if (msg.method === "initialize") {
      this.initializeId = msg.id;
      msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
    }
    return this.inner.send(msg, options);
  }
}

// connect returns a connected client called name, declaring what it can
// be asked when able, and its transport.
async function connect(name, able) {
  const capabilities = able ? { sampling: {}, elicitation: version >= "2025-11-25" ? { form: {} } : {}, roots: { listChanged: true } } : {};
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  const transport = new TapTransport(
    opt.url
      ? new StreamableHTTPClientTransport(new URL(opt.url))
      : new StdioClientTransport({
          command: opt.bridge,
          args: ["--socket", opt.socket, "--manifests", opt.manifests, "--log-level", opt["log-level"]],
          stderr: "inherit",
        }),
  );
  await client.connect(transport, { timeout: 15000 });
  return { client, transport };
}

const call = (client, name, args, options) => client.callTool({ name, arguments: args }, undefined, options);

const watchdog = setTimeout(() => {
  console.log(`FAIL ${label} ${version} session: not finished after ${opt.timeout}s`);
  process.exit(1);
}, Number(opt.timeout) * 1000);

const clients = [];
try {
  const { client, transport } = await connect(clientName, true);
  clients.push(client);
  check("negotiated version", transport.negotiated === version, `asked for ${version}, server answered ${transport.negotiated}`, "declared sampling, elicitation and roots");

  // What the client is asked, and how it answers.
  const sampled = [];
  client.setRequestHandler(CreateMessageRequestSchema, (req) => {
    sampled.push(req.params);
    return { role: "assistant", content: { type: "text", text: "Two trips planned." }, model: "interop-model", stopReason: "endTurn" };
  });
  const elicited = [];
  let answer = { action: "accept", content: { label: "travel" } };
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    elicited.push(req.params);
    return answer;
  });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  const logs = [];
  let logged;
  const loggedOnce = new Promise((resolve) => (logged = resolve));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
    if (n.params.logger === "notes") logged(n.params);
  });
  await client.setLoggingLevel("info");

  // notes.import: progress per note, then a log message.
  let ids = [];
  try {
    const progress = [];
    transport.wire.length = 0;
    const r = await call(client, "tairseach_notes_import", { count: 3, delay_ms: 100, title: tag }, { onprogress: (p) => progress.push(p) });
    ids = r.structuredContent?.ids ?? [];
    const seen = progress.map((p) => `${p.progress}/${p.total} ${p.message}`);
    // What the bridge sent, as the transport received it: every step,
    // before the response. The SDK hands notifications to their handlers
    // a tick after the message while it takes a response at once, so a
    // last step read together with the response reaches no callback: the
    // callback must have seen the steps in order, all but possibly that
    // last one.
    const end = transport.wire.findIndex((w) => w.response !== undefined);
    const sent = transport.wire.slice(0, end < 0 ? undefined : end).map((w) => w.seen);
    const all = ["1/3 1 of 3 notes", "2/3 2 of 3 notes", "3/3 3 of 3 notes"];
    check(
      "import progress",
      !r.isError && r.structuredContent?.imported === 3 && ids.length === 3 && end >= 0 && show(sent) === show(all) &&
        seen.length >= all.length - 1 && show(seen) === show(all.slice(0, seen.length)),
      `sent ${show(sent)} before the response; the callback saw ${show(seen)}; result ${show(r)}`,
      `progress ${sent.join(", ")}, then the response; the callback saw ${seen.length === all.length ? "all" : `the first ${seen.length}`}; imported ${r.structuredContent?.imported}`,
    );
    const msg = await within(loggedOnce, 5000, "the import's log message").catch((e) => e.message);
    check("import log message", msg?.level === "info" && msg?.data === "imported 3 notes", `log messages ${show(logs)}: ${show(msg)}`, `${msg?.level} from ${msg?.logger}: ${show(msg?.data)}`);
  } catch (e) {
    check("import progress", false, errorOf(e));
  }

  // notes.digest: the client's model summarizes the notes imported.
  try {
    const r = await call(client, "tairseach_notes_digest", { topic: tag });
    const asked = sampled[0]?.messages?.[0]?.content?.text ?? "";
    check(
      "digest",
      !r.isError && r.structuredContent?.digest === "Two trips planned." && sampled.length === 1 && asked.includes(`## ${tag} 2 of 3`) && sampled[0].maxTokens === 300,
      `asked ${sampled.length} time(s): ${show(sampled[0])}; result ${show(r)}`,
      `the model was asked once (maxTokens ${sampled[0]?.maxTokens}); digest ${show(r.structuredContent?.digest)}`,
    );
  } catch (e) {
    check("digest", false, errorOf(e));
  }

  // notes.label: the user's label is stored; a decline changes nothing.
  try {
    const id = ids[0];
    const r = await call(client, "tairseach_notes_label", { id });
    const got = await call(client, "tairseach_notes_get", { id });
    const q = elicited[0] ?? {};
    check(
      "label",
      !r.isError && r.structuredContent?.label === "travel" && r.structuredContent?.changed === true && got.structuredContent?.label === "travel" &&
        q.message === `A label for the note “${tag} 1 of 3”?` && q.requestedSchema?.properties?.label?.type === "string",
      `asked ${show(q)}; result ${show(r)}; the note ${show(got.structuredContent)}`,
      `asked ${show(q.message)}; stored ${show(got.structuredContent?.label)}`,
    );
    answer = { action: "decline" };
    const d = await call(client, "tairseach_notes_label", { id });
    const after = await call(client, "tairseach_notes_get", { id });
    check(
      "label declined",
      !d.isError && d.structuredContent?.answer === "decline" && d.structuredContent?.changed === false && after.structuredContent?.label === "travel" &&
        elicited.length === 2 && elicited[1].requestedSchema?.properties?.label?.default === "travel",
      `result ${show(d)}; the note ${show(after.structuredContent)}; asked ${show(elicited[1])}`,
      `the form offered the label it had; the note keeps ${show(after.structuredContent?.label)}`,
    );
  } catch (e) {
    check("label", false, errorOf(e));
  }

  // files.roots: the client's own.
  try {
    const r = await call(client, "tairseach_files_roots", {});
    check("roots", !r.isError && show(r.structuredContent?.roots) === show(roots), `result ${show(r)}`, show(r.structuredContent?.roots));
  } catch (e) {
    check("roots", false, errorOf(e));
  }

  // A client that declared none of it.
  try {
    const { client: bare, transport: tap } = await connect(`${clientName}-bare`, false);
    clients.push(bare);
    const wants = [
      ["tairseach_notes_digest", { topic: tag }, "this client cannot summarize: it offers no sampling (MCP sampling capability)"],
      ["tairseach_notes_label", { id: ids[0] ?? "0" }, "this client cannot ask its user for a label: it offers no forms (MCP elicitation capability)"],
      ["tairseach_files_roots", {}, "this client cannot list its roots: it offers no roots (MCP roots capability)"],
    ];
    const wrong = [];
    let slowest = 0;
    for (const [name, args, want] of wants) {
      const started = Date.now();
      const r = await call(bare, name, args, { timeout: 10000 });
      slowest = Math.max(slowest, Date.now() - started);
      if (!r.isError || !textOf(r).includes("-32021") || !textOf(r).includes(want)) wrong.push(`${name}: ${show(r)}`);
    }
    const asked = [...tap.asked.keys()];
    check("no capabilities", wrong.length === 0 && asked.length === 0, `${wrong.join("; ")}; asked ${show(asked)}`, `three isError results naming what the client lacks, the slowest in ${slowest} ms; nothing asked`);
  } catch (e) {
    check("no capabilities", false, errorOf(e));
  }
} catch (e) {
  check("session", false, e?.stack ?? e);
} finally {
  clearTimeout(watchdog);
  const closed = await Promise.allSettled(clients.map((c) => c.close()));
  const bad = closed.filter((r) => r.status === "rejected");
  check("close", bad.length === 0, bad.map((r) => errorOf(r.reason)).join("; "));
}
process.exit(failed ? 1 : 0);
