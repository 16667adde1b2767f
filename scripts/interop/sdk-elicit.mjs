// The official TypeScript SDK client answering the bridge's confirmation
// questions: a Client that declares elicitation and answers
// elicitation/create, over StdioClientTransport (spawning the bridge) or,
// with --url, over StreamableHTTPClientTransport against a bridge serving
// --transport http (the question then travels on the POST's event
// stream). Each check deletes a note of the example backend with
// tairseach_notes_delete, which asks first, and then looks with
// tairseach_notes_get or tairseach_notes_list whether the note is still
// there: the backend's state, not only the result text, proves what the
// bridge did. The bridge's audit log must record the user's answer.
//
//   question            the question names the note (the manifest's
//                       template) and asks for one boolean, confirm
//   accept yes          the note is gone
//   accept no, decline, cancel, handler error
//                       an isError result saying why, the note stays
//   no answer in time   a bridge with --ask-timeout 3s gives up, withdraws
//                       the question (notifications/cancelled), the note
//                       stays; a yes that comes after that changes nothing
//   call cancelled      the client cancels the call while the question is
//                       open: the question is withdrawn, the note stays, and
//                       the session still deletes on the next yes
//   32 at once          32 deletes, answered out of order, alternately yes
//                       and no: exactly the yes notes are gone
//   no elicitation allow|deny
//                       a client without the capability: the delete runs
//                       (the default), or is refused (--confirm-unsupported
//                       deny) and the note stays
//
// Prints one line per check, "ok   CLIENT VERSION CHECK (detail)" or
// "FAIL CLIENT VERSION CHECK: why" (CLIENT is sdk-elicit over stdio,
// sdk-elicit-http with --url), and exits 1 if any check failed.
//
//   node sdk-elicit.mjs --bridge PATH --socket SOCK --manifests DIR --protocol-version V [--url URL --audit FILE]
//
// Over stdio every session spawns a bridge of its own (its audit log in a
// temporary folder); with --url the main session uses the bridge at URL,
// whose audit log is FILE, and the sessions that need other flags spawn an
// HTTP bridge of their own on a free loopback port. The version is asked
// for by rewriting the initialize request on its way out (the SDK asks for
// its newest); the client declares elicitation as that version has it:
// {} in 2025-06-18, {form: {}} from 2025-11-25 on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { entries, waitForEntries } from "./audit.mjs";

const { values: opt } = parseArgs({
  options: {
    bridge: { type: "string" },
    socket: { type: "string" },
    manifests: { type: "string" },
    "protocol-version": { type: "string" },
    url: { type: "string" },
    audit: { type: "string" },
    "log-level": { type: "string", default: "error" },
    timeout: { type: "string", default: "90" },
  },
});
if (!opt.bridge || !opt.socket || !opt.manifests || !opt["protocol-version"] || (opt.url && !opt.audit)) {
  console.error("usage: node sdk-elicit.mjs --bridge PATH --socket SOCK --manifests DIR --protocol-version V [--url URL --audit FILE]");
  process.exit(2);
}
const version = opt["protocol-version"];
const http = opt.url !== undefined;
const label = http ? "sdk-elicit-http" : "sdk-elicit";
const clientName = `interop-${label}-${version}`;
const elicitation = version >= "2025-11-25" ? { form: {} } : {};
const DELETE = "tairseach_notes_delete";
const scratch = mkdtempSync(join(tmpdir(), "tse."));
// The HTTP bridges this script starts end with it, however it ends.
const spawned = [];
process.on("exit", () => {
  for (const p of spawned) p.kill();
  rmSync(scratch, { recursive: true, force: true });
});
process.on("SIGTERM", () => process.exit(143));

// check prints one check's line: "ok" with what it measured (said), or
// "FAIL" with why (detail).
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
// version, keeps each elicitation/create as it came over the wire, by id,
// and the ids of the questions withdrawn with notifications/cancelled
// (withdrawn). Over HTTP it also notes which questions came on a POST's
// event stream, with the request that POST carried (postQuestions), by
// reading a copy of each POST's response, and the ids of the requests
// whose POST event stream has ended (ended).
class TapTransport {
  constructor(make) {
    this.questions = new Map();
    this.postQuestions = new Map();
    this.withdrawn = new Set();
    this.ended = new Set();
    this.initializeId = undefined;
    this.negotiated = undefined;
    this.inner = make((u, init) => this.fetch(u, init));
    this.inner.onmessage = (msg, extra) => {
      if (msg.method === "elicitation/create") this.questions.set(msg.id, msg);
      if (msg.method === "notifications/cancelled") this.withdrawn.add(msg.params?.requestId);
      if (msg.id !== undefined && msg.id === this.initializeId && msg.result) this.negotiated = msg.result.protocolVersion;
      this.onmessage?.(msg, extra);
    };
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.onclose?.();
  }
  async fetch(u, init) {
    const res = await fetch(u, init);
    if (init?.method !== "POST" || !res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    const [mine, theirs] = res.body.tee();
    let sent;
    try {
      sent = JSON.parse(init.body);
    } catch {
      sent = init.body;
    }
    this.scan(mine, sent).then(() => this.ended.add(sent?.id));
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  }
  // scan reads the data lines of the event stream that answers the POST of
  // sent for questions, until it ends.
  async scan(body, sent) {
    let text = "";
    try {
      for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
        text += chunk;
        const lines = text.split("\n");
        text = lines.pop();
        for (const l of lines) {
          if (!l.startsWith("data:")) continue;
          try {
            const msg = JSON.parse(l.slice(5));
            if (msg.method === "elicitation/create") this.postQuestions.set(msg.id, sent);
          } catch {
            // not a message of ours to judge
          }
        }
      }
    } catch {
      // the stream was cut; the SDK's copy says what that means
    }
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

// onItsStream reports whether, over HTTP, the question came on the event
// stream of the POST that carried the delete of the note id: its call's
// own stream. Over stdio there is one stream.
function onItsStream(transport, question, id) {
  const post = transport.postQuestions.get(question);
  return !http || (post?.method === "tools/call" && post.params?.name === DELETE && post.params.arguments?.id === id);
}

// httpBridge starts a bridge serving --transport http with extra args on
// a free loopback port, and resolves to its URL once it says where.
function httpBridge(args) {
  const p = spawn(opt.bridge, ["--transport", "http", "--listen", "127.0.0.1:0", "--socket", opt.socket, "--manifests", opt.manifests, "--log-level", opt["log-level"], ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  spawned.push(p);
  const url = new Promise((resolve, reject) => {
    createInterface({ input: p.stderr }).on("line", (l) => {
      const m = l.match(/^serving MCP on (http:\/\/\S+\/mcp) /);
      if (m) resolve(m[1]);
      else process.stderr.write(`${l}\n`);
    });
    p.on("exit", (code) => reject(new Error(`the HTTP bridge exited (${code}) before it served`)));
  });
  return within(url, 10000, "the HTTP bridge's 'serving MCP on' line");
}

// connect returns a session: a connected client called name, which
// declares elicitation when asked to and answers each question with
// session.answer(request, extra). Without args it uses the bridge at --url
// (with --url), else it starts a bridge with args (and --audit-log).
async function connect(name, { elicit = true, args } = {}) {
  let audit = opt.audit;
  let url = opt.url;
  if (!http || args) {
    audit = join(scratch, `${name}.audit.log`);
    args = [...(args ?? []), "--audit-log", audit];
    if (http) url = await httpBridge(args);
  }
  const client = new Client({ name, version: "1.0.0" }, { capabilities: elicit ? { elicitation } : {} });
  const s = { name, client, audit, answer: async () => ({ action: "cancel" }) };
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (req, extra) => s.answer(req, extra));
  s.transport = new TapTransport((tapFetch) =>
    url
      ? new StreamableHTTPClientTransport(new URL(url), { fetch: tapFetch, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } })
      : new StdioClientTransport({
          command: opt.bridge,
          args: ["--socket", opt.socket, "--manifests", opt.manifests, "--log-level", opt["log-level"], ...args],
          stderr: "inherit",
        }),
  );
  await client.connect(s.transport, { timeout: 15000 });
  return s;
}

// call calls a tool and returns its result, or throws.
const call = (s, name, args, options) => s.client.callTool({ name, arguments: args }, undefined, options);

// create makes a note titled title and returns its id.
async function create(s, title) {
  const r = await call(s, "tairseach_notes_create", { title, body: "to be deleted, or not" });
  if (r.isError) throw new Error(`tairseach_notes_create: ${textOf(r)}`);
  return JSON.parse(textOf(r)).id;
}

// exists asks the backend whether the note id is still there.
async function exists(s, id) {
  const r = await call(s, "tairseach_notes_get", { id });
  if (!r.isError) return true;
  if (textOf(r).includes("note not found")) return false;
  throw new Error(`tairseach_notes_get ${id}: ${textOf(r)}`);
}

// recorded resolves to the audit entry of the session's next delete after
// the first skip entries of its log, or undefined.
async function recorded(s, skip) {
  return (await waitForEntries(s.audit, (e) => e.client === s.name && e.name === DELETE, { skip }))[0];
}

// tried runs one delete with the session's handler set to answer: it
// returns the note's id, the call's result (or error), the questions
// asked, whether the note is still there, and the call's audit entry.
async function tried(s, answer) {
  const id = await create(s, `elicit ${version}`);
  const asked = [];
  s.answer = (req, extra) => {
    asked.push({ req, extra });
    return answer(req, extra);
  };
  const skip = entries(s.audit).length;
  let result, error;
  try {
    result = await call(s, DELETE, { id });
  } catch (e) {
    error = e;
  }
  return { id, result, error, asked, there: await exists(s, id), entry: await recorded(s, skip) };
}

// refused checks one delete that the user did not allow: an isError
// result whose text has want, asked once, the note still there, and the
// audit entry declined with the answer given.
async function refused(s, name, answer, want, answered) {
  try {
    const t = await tried(s, answer);
    const e = t.entry;
    const said = `the note is still there; ${show(textOf(t.result))}; recorded ${e?.outcome}/${e?.answer}`;
    check(
      name,
      t.result?.isError === true && textOf(t.result).includes(want) && t.asked.length === 1 && t.there && e?.outcome === "declined" && e?.answer === answered,
      `asked ${t.asked.length} time(s); note there: ${t.there}; result ${show(t.result) ?? errorOf(t.error)}; audit ${show(e)}`,
      said,
    );
  } catch (e) {
    check(name, false, errorOf(e));
  }
}

// aborted resolves to the reason once signal is aborted (at once if it is).
const aborted = (signal) =>
  new Promise((resolve) => {
    if (signal.aborted) resolve(String(signal.reason));
    else signal.addEventListener("abort", () => resolve(String(signal.reason)), { once: true });
  });

const watchdog = setTimeout(() => {
  console.log(`FAIL ${label} ${version} session: not finished after ${opt.timeout}s`);
  process.exit(1);
}, Number(opt.timeout) * 1000);

const sessions = [];
const yes = async () => ({ action: "accept", content: { confirm: true } });
try {
  const main = await connect(clientName);
  sessions.push(main);
  check(
    "negotiated version",
    main.transport.negotiated === version,
    `asked for ${version}, server answered ${main.transport.negotiated}`,
    `declared elicitation ${show(elicitation)}`,
  );

  // The question, then the yes.
  try {
    const t = await tried(main, yes);
    const q = main.transport.questions.get(t.asked[0]?.extra.requestId);
    const p = q?.params ?? {};
    const props = p.requestedSchema?.properties ?? {};
    const form = version >= "2025-11-25" ? p.mode === "form" : p.mode === undefined;
    const stream = onItsStream(main.transport, q?.id, t.id);
    check(
      "question",
      t.asked.length === 1 && /^tairseach-\d+$/.test(q?.id) && p.message === `Delete the note ${t.id} for good? This cannot be undone.` &&
        show(Object.keys(props)) === '["confirm"]' && props.confirm.type === "boolean" && props.confirm.default === false && form && stream,
      `asked ${t.asked.length} time(s); ${show(q)}${stream ? "" : "; not on the call's POST stream"}`,
      `id ${q?.id}${http ? " on its call's POST event stream" : ""}, ${show(p.message)}, requestedSchema ${show(p.requestedSchema)}${p.mode ? `, mode ${p.mode}` : ""}`,
    );
    const e = t.entry;
    check(
      "accept yes",
      t.result && !t.result.isError && t.result.structuredContent?.deleted === true && !t.there && e?.outcome === "ok" && e?.answer === "accept",
      `note there: ${t.there}; result ${show(t.result) ?? errorOf(t.error)}; audit ${show(e)}`,
      `the note is gone; recorded ${e?.confirmation}/${e?.answer}`,
    );
  } catch (e) {
    check("question", false, errorOf(e));
  }

  await refused(main, "accept no", async () => ({ action: "accept", content: { confirm: false } }), `The user did not allow ${DELETE} (answered no)`, "no");
  await refused(main, "decline", async () => ({ action: "decline" }), `The user did not allow ${DELETE} (declined)`, "decline");
  await refused(main, "cancel", async () => ({ action: "cancel" }), `The user did not allow ${DELETE} (dismissed the question)`, "cancel");
  await refused(
    main,
    "handler error",
    async () => {
      throw new Error("the dialog could not be shown");
    },
    `The user could not be asked whether ${DELETE} may run`,
    "none",
  );

  await noAnswer();
  await cancelled(main);
  await many(main, 32);
  await unsupported("allow", []);
  await unsupported("deny", ["--confirm-unsupported", "deny"]);
} catch (e) {
  check("session", false, e?.stack ?? e);
} finally {
  clearTimeout(watchdog);
  const closed = await Promise.allSettled(sessions.map((s) => s.client.close()));
  const bad = closed.filter((r) => r.status === "rejected");
  check("close", bad.length === 0, bad.map((r) => errorOf(r.reason)).join("; "));
}
process.exit(failed ? 1 : 0);

// noAnswer: a bridge with --ask-timeout 3s, which bounds every wait for a
// person, and a user who never answers. The call ends with "The user did
// not answer in time …", the bridge withdraws the question, and a yes sent
// after that (as a late click would) is dropped.
async function noAnswer() {
  try {
    const s = await connect(`${clientName}-timeout`, { args: ["--ask-timeout", "3s"] });
    sessions.push(s);
    let withdrawn;
    const started = Date.now();
    const t = await tried(s, (_, extra) => {
      withdrawn = aborted(extra.signal);
      return withdrawn.then(() => ({ action: "cancel" })); // never sent: the SDK answers no withdrawn request
    });
    const took = Date.now() - started;
    const reason = withdrawn ? await within(withdrawn, 5000, "the withdrawal (notifications/cancelled)").catch((e) => `not withdrawn: ${e.message}`) : "never asked";
    const e = t.entry;
    const said = `result after ${took} ms, ${show(textOf(t.result))}; question withdrawn (${reason}); the note is ${t.there ? "still there" : "gone"}; recorded ${e?.outcome}/${e?.answer}`;
    check(
      "no answer in time",
      t.result?.isError === true && textOf(t.result).includes(`The user did not answer in time whether ${DELETE} may run, so nothing was done`) &&
        textOf(t.result).includes("did not answer elicitation/create within 3s") && t.asked.length === 1 &&
        s.transport.withdrawn.has(t.asked[0].extra.requestId) && t.asked[0].extra.signal.aborted && t.there &&
        e?.outcome === "declined" && e?.answer === "none",
      `${said}; result ${show(t.result) ?? errorOf(t.error)}; audit ${show(e)}`,
      said,
    );

    // The user clicks yes after all: the bridge has no such question any
    // more, drops the answer, and goes on serving (the ping).
    const question = t.asked[0]?.extra.requestId;
    await s.transport.send({ jsonrpc: "2.0", id: question, result: { action: "accept", content: { confirm: true } } });
    await s.client.ping();
    const there = await exists(s, t.id);
    const late = `a yes to ${question} after the timeout; the session still answers; the note is ${there ? "still there" : "gone"}`;
    check("late yes changes nothing", question !== undefined && there, late, late);
  } catch (e) {
    check("no answer in time", false, errorOf(e));
  }
}

// cancelled: the client cancels the call (AbortSignal) while the user is
// asked; the bridge withdraws the question and deletes nothing (seen once
// the call has ended, which its audit entry marks), and the session still
// asks and deletes on the next call.
async function cancelled(s) {
  try {
    const id = await create(s, `elicit ${version} cancelled`);
    const ac = new AbortController();
    let asked;
    const question = new Promise((resolve) => (asked = resolve));
    s.answer = (_, extra) => {
      asked(extra);
      return aborted(extra.signal).then(() => ({ action: "cancel" })); // never sent: the SDK answers no withdrawn request
    };
    const skip = entries(s.audit).length;
    const pending = call(s, DELETE, { id }, { signal: ac.signal });
    const extra = await within(question, 10000, "the question");
    ac.abort("the user closed the conversation");
    const error = await pending.then(
      (r) => `answered ${show(r)}`,
      (e) => `rejected (${errorOf(e)})`,
    );
    const reason = await within(aborted(extra.signal), 5000, "the withdrawal (notifications/cancelled)").catch((err) => `not withdrawn: ${err.message}`);
    const e = await recorded(s, skip);
    const there = await exists(s, id);
    const next = await tried(s, yes);
    // Over HTTP, the bridge has ended the event stream of the cancelled
    // call's POST, which carried the question, by the time the next
    // delete is done: a cancelled call gets no response, but nothing is
    // left open for it.
    const post = s.transport.postQuestions.get(extra.requestId);
    const streamEnded = !http || s.transport.ended.has(post?.id);
    const stream = http ? `; its POST stream ${streamEnded ? "ended" : "still open after the next call"}` : "";
    const said = `the call ${error}; question withdrawn (${reason})${stream}; the note is ${there ? "still there" : "gone"}; recorded ${e?.outcome}/${e?.answer}; the next delete ${next.there ? "failed" : "went ahead on yes"}`;
    check(
      "call cancelled",
      error.startsWith("rejected") && s.transport.withdrawn.has(extra.requestId) && extra.signal.aborted && streamEnded && there && e?.outcome === "cancelled" && next.result && !next.result.isError && !next.there,
      `${said}; audit ${show(e)}; next ${show(next.result) ?? errorOf(next.error)}`,
      said,
    );
  } catch (e) {
    check("call cancelled", false, errorOf(e));
  }
}

// many: n deletes at once, each question answered after a random 0-300
// ms (so out of order), yes for the even notes and no for the odd ones.
// Each call must get its own answer's outcome, and exactly the yes notes
// must be gone.
async function many(s, n) {
  const name = `${n} at once`;
  try {
    const tag = `elicit-many-${label}-${version}-${process.pid}`;
    const ids = [];
    for (let i = 0; i < n; i++) ids.push(await create(s, `${tag} ${i}`));
    const allow = new Map(ids.map((id, i) => [id, i % 2 === 0]));
    const askedOrder = [];
    const answeredOrder = [];
    let open = 0;
    let mostOpen = 0;
    const questions = [];
    s.answer = async (req, extra) => {
      const id = req.params.message.match(/^Delete the note ([0-9a-f]+) /)?.[1];
      questions.push([extra.requestId, id]);
      askedOrder.push(id);
      mostOpen = Math.max(mostOpen, ++open);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
      open--;
      answeredOrder.push(id);
      return { action: "accept", content: { confirm: allow.get(id) === true } };
    };
    const skip = entries(s.audit).length;
    const results = await Promise.all(ids.map((id) => call(s, DELETE, { id })));
    const wrong = ids.filter((id, i) => {
      const r = results[i];
      return allow.get(id) ? r.isError || r.structuredContent?.deleted !== true : !r.isError || !textOf(r).includes("(answered no)");
    });
    const list = await call(s, "tairseach_notes_list", { query: tag, limit: 1000 });
    const left = new Set(JSON.parse(textOf(list)).notes.map((note) => note.id));
    const stateWrong = ids.filter((id) => left.has(id) === allow.get(id));
    const logged = await waitForEntries(s.audit, (e) => e.client === s.name && e.name === DELETE, { skip, count: n });
    const answers = logged.map((e) => e.answer).sort();
    const wantAnswers = ids.map((id) => (allow.get(id) ? "accept" : "no")).sort();
    const outOfOrder = askedOrder.some((id, i) => answeredOrder[i] !== id);
    const offStream = questions.filter(([q, id]) => !onItsStream(s.transport, q, id)).map(([q]) => q);
    const said =
      `${askedOrder.length} questions${http && offStream.length === 0 ? ", each on its call's POST stream" : ""}, up to ${mostOpen} open at once, ` +
      `answered ${outOfOrder ? "out of" : "in"} order; ${n - wrong.length} of ${n} outcomes right; ` +
      `${left.size} of ${n} notes left${stateWrong.length === 0 ? ", exactly those answered no" : ""}; ${logged.length} recorded`;
    check(
      name,
      askedOrder.length === n && new Set(askedOrder).size === n && outOfOrder && offStream.length === 0 && wrong.length === 0 && stateWrong.length === 0 && left.size === n / 2 && show(answers) === show(wantAnswers),
      `${said}; wrong outcomes for ${wrong.join(", ") || "none"}; wrong state for ${stateWrong.join(", ") || "none"}; recorded answers ${answers.join(",")}; not on their call's POST stream: ${offStream.join(", ") || "none"}`,
      said,
    );
  } catch (e) {
    check(name, false, errorOf(e));
  }
}

// unsupported: a client without the elicitation capability, against a
// bridge with args. With allow (the default) the delete runs unasked;
// with deny it is refused, saying why and what to do, and the note stays.
async function unsupported(policy, args) {
  const name = `no elicitation ${policy}`;
  try {
    const s = await connect(`${clientName}-${policy}`, { elicit: false, args });
    sessions.push(s);
    const t = await tried(s, yes);
    const e = t.entry;
    const said = `${t.there ? "the note is still there" : "the note is gone"}; ${show(textOf(t.result)).slice(0, 120)}; recorded ${e?.outcome}`;
    const ok =
      policy === "allow"
        ? t.result && !t.result.isError && !t.there && e?.outcome === "ok" && e?.confirmation === undefined
        : t.result?.isError === true &&
          textOf(t.result).includes(`${DELETE} asks the user before it runs, and this client cannot ask (it declared no elicitation), so the call was refused; nothing was sent to the backend.`) &&
          textOf(t.result).includes("Use a client that supports elicitation") &&
          t.there &&
          e?.outcome === "refused";
    // A question to a client that cannot ask would be a defect of its own.
    const asked = s.transport.questions.size;
    check(name, ok && asked === 0, `${said}; ${asked} question(s) sent; result ${show(t.result) ?? errorOf(t.error)}; audit ${show(e)}`, said);
  } catch (e) {
    check(name, false, errorOf(e));
  }
}
