// One session of the official TypeScript SDK client (Client +
// StdioClientTransport) against the bridge: connect, list, call (success,
// backend error, bad arguments, unknown tool), list and read resources,
// expand a resource template, list and get prompts, complete an argument,
// then add a manifest file and wait for the list_changed of tools, prompts
// and resources, remove it and wait again, close.
// Prints one line per check, "ok   sdk VERSION CHECK" or
// "FAIL sdk VERSION CHECK: why", and exits 1 if any check failed.
//
//   node sdk-client.mjs --bridge PATH --socket SOCK --manifests DIR [--protocol-version V]
//
// The SDK always asks for its newest version (2025-11-25 for SDK 1.x);
// --protocol-version makes this script ask for an older one instead, by
// rewriting the initialize request on its way out, so that the same client
// also exercises the bridge's 2024-11-05, 2025-03-26 and 2025-06-18 shapes.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  LATEST_PROTOCOL_VERSION,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    bridge: { type: "string" },
    socket: { type: "string" },
    manifests: { type: "string" },
    "protocol-version": { type: "string" },
    "log-level": { type: "string", default: "warn" },
    timeout: { type: "string", default: "60" },
  },
});
for (const k of ["bridge", "socket", "manifests"]) {
  if (!opt[k]) {
    console.error(`usage: node sdk-client.mjs --bridge PATH --socket SOCK --manifests DIR [--protocol-version V]`);
    process.exit(2);
  }
}
const version = opt["protocol-version"] ?? LATEST_PROTOCOL_VERSION;
const structured = version >= "2025-06-18"; // structuredContent and outputSchema exist from 2025-06-18 on

let failed = 0;
function check(name, ok, detail = "") {
  console.log(ok ? `ok   sdk ${version} ${name}` : `FAIL sdk ${version} ${name}: ${String(detail).replace(/\s+/g, " ").slice(0, 400)}`);
  if (!ok) failed++;
  return ok;
}
const textOf = (r) => (r?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
const show = (v) => JSON.stringify(v);

// A transport in front of the SDK's stdio transport: it can rewrite the
// requested protocol version, and it records what the server answered to
// initialize, so the negotiated version can be checked.
class TapTransport {
  constructor(inner, requestVersion) {
    this.inner = inner;
    this.requestVersion = requestVersion;
    this.initializeId = undefined;
    this.negotiated = undefined;
    inner.onmessage = (msg, extra) => {
      if (this.initializeId !== undefined && msg.id === this.initializeId && msg.result) this.negotiated = msg.result.protocolVersion;
      this.onmessage?.(msg, extra);
    };
    inner.onerror = (e) => this.onerror?.(e);
    inner.onclose = () => this.onclose?.();
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
      if (this.requestVersion) msg = { ...msg, params: { ...msg.params, protocolVersion: this.requestVersion } };
    }
    return this.inner.send(msg, options);
  }
}

// nextListChanged(list, ms) resolves on the next
// notifications/<list>/list_changed, or rejects after ms.
const onListChanged = { tools: () => {}, prompts: () => {}, resources: () => {} };
function nextListChanged(list, ms) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no notifications/${list}/list_changed within ${ms} ms`)), ms);
    onListChanged[list] = () => {
      clearTimeout(t);
      onListChanged[list] = () => {};
      resolve();
    };
  });
}

const client = new Client({ name: "tairseach-interop", version: "1.0.0" });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => onListChanged.tools());
client.setNotificationHandler(PromptListChangedNotificationSchema, () => onListChanged.prompts());
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => onListChanged.resources());

const stdio = new StdioClientTransport({
  command: opt.bridge,
  args: ["--socket", opt.socket, "--manifests", opt.manifests, "--log-level", opt["log-level"]],
  stderr: "inherit",
});
const transport = new TapTransport(stdio, opt["protocol-version"]);

const watchdog = setTimeout(() => {
  console.log(`FAIL sdk ${version} session: not finished after ${opt.timeout}s`);
  process.exit(1);
}, Number(opt.timeout) * 1000);

const added = join(opt.manifests, `interop-added-${version}.json`);
try {
  await client.connect(transport);
  check("connect (initialize)", client.getServerVersion()?.name === "tairseach-mcp", show(client.getServerVersion()));
  check("negotiated version", transport.negotiated === version, `asked for ${version}, server answered ${transport.negotiated}`);
  check(
    "capabilities tools.listChanged",
    client.getServerCapabilities()?.tools?.listChanged === true,
    show(client.getServerCapabilities()),
  );

  const list = await client.listTools();
  const names = list.tools.map((t) => t.name);
  const want = ["tairseach_system_info", "tairseach_notes_create", "tairseach_notes_list", "tairseach_secrets_read"];
  check("tools/list", want.every((n) => names.includes(n)), `got ${names.join(", ")}`);
  check("tools/list names match ^[a-zA-Z0-9_-]{1,64}$", names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)), names.join(", "));
  const withOutput = list.tools.filter((t) => t.outputSchema).length;
  // outputSchema exists from 2025-06-18 on: the bridge must send it then,
  // and must not before.
  check("tools/list outputSchema as the version has it", structured ? withOutput > 0 : withOutput === 0, `${withOutput} tool(s) with outputSchema`);

  // A success. The SDK itself checks structuredContent against the tool's
  // outputSchema and throws if they disagree.
  const title = `from the TypeScript SDK ${version}`;
  try {
    const r = await client.callTool({ name: "tairseach_notes_create", arguments: { title, body: "interop" } });
    const okStructured = structured ? r.structuredContent?.title === title : r.structuredContent === undefined;
    check("tools/call success", !r.isError && textOf(r).includes(title) && okStructured, show(r));
  } catch (e) {
    check("tools/call success", false, e?.message ?? e);
  }
  try {
    const r = await client.callTool({ name: "tairseach_system_info", arguments: {} });
    check("tools/call system_info", !r.isError && textOf(r).length > 0, show(r));
  } catch (e) {
    check("tools/call system_info", false, e?.message ?? e);
  }

  // The backend answers secrets.read with JSON-RPC error -32011: a result
  // with isError, not a protocol error.
  try {
    const r = await client.callTool({ name: "tairseach_secrets_read", arguments: { name: "api-key" } });
    check("tools/call backend error is isError", r.isError === true && textOf(r).includes("-32011"), show(r));
  } catch (e) {
    check("tools/call backend error is isError", false, `threw instead: ${e?.message ?? e}`);
  }

  // Arguments that break the input schema never reach the backend.
  try {
    const r = await client.callTool({ name: "tairseach_notes_create", arguments: { title: 7 } });
    check("tools/call bad arguments is isError", r.isError === true && textOf(r).includes("title"), show(r));
  } catch (e) {
    check("tools/call bad arguments is isError", false, `threw instead: ${e?.message ?? e}`);
  }

  // An unknown tool is a JSON-RPC error (-32602), which the SDK throws.
  try {
    const r = await client.callTool({ name: "tairseach_no_such_tool", arguments: {} });
    check("tools/call unknown tool is an error", false, `no error, result ${show(r)}`);
  } catch (e) {
    check("tools/call unknown tool is an error", e?.code === -32602, `code ${e?.code}: ${e?.message ?? e}`);
  }

  await resourcesAndPrompts();

  // The bridge watches its manifest folders: a new file is a new tool, a
  // new prompt and a new resource, each list announced on its own.
  const addedName = "tairseach_interop_added";
  const lists = ["tools", "prompts", "resources"];
  let changed = Promise.all(lists.map((l) => nextListChanged(l, 10000)));
  writeFileSync(
    added,
    JSON.stringify({
      id: `interop-${version}`,
      tools: [{ name: "interop.added", description: "Added while a client is connected.", inputSchema: { type: "object" } }],
      resources: [{ uri: `tairseach://interop/${version}`, name: "added", description: "Added too.", text: "added" }],
      prompts: [{ name: "interop.added", description: "Added too.", messages: [{ role: "user", text: "added" }] }],
      implementation: { type: "internal", methods: { "interop.added": "system.info" } },
    }),
  );
  let addedOk = false;
  try {
    await changed;
    const again = (await client.listTools()).tools.map((t) => t.name);
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    addedOk = check(
      "list_changed after adding a manifest",
      again.includes(addedName) && prompts.includes(addedName) && resources.includes(`tairseach://interop/${version}`),
      `tools/list then: ${again.join(", ")}; prompts: ${prompts.join(", ")}; resources: ${resources.join(", ")}`,
    );
    const r = await client.callTool({ name: addedName, arguments: {} });
    check("tools/call the added tool", !r.isError, show(r));
  } catch (e) {
    check("list_changed after adding a manifest", false, e?.message ?? e);
  }

  if (addedOk) {
    changed = Promise.all(lists.map((l) => nextListChanged(l, 10000)));
    rmSync(added, { force: true });
    try {
      await changed;
      const again = (await client.listTools()).tools.map((t) => t.name);
      check("list_changed after removing it", !again.includes(addedName), `still listed: ${again.join(", ")}`);
    } catch (e) {
      check("list_changed after removing it", false, e?.message ?? e);
    }
  } else {
    check("list_changed after removing it", false, "not tried: adding a manifest was not seen");
  }
} catch (e) {
  check("session", false, e?.stack ?? e);
} finally {
  rmSync(added, { force: true });
  clearTimeout(watchdog);
  try {
    await client.close();
    check("close", true);
  } catch (e) {
    check("close", false, e?.message ?? e);
  }
}
process.exit(failed ? 1 : 0);

// resourcesAndPrompts checks the example manifests' resources, template,
// prompts and completions as this client sees them.
async function resourcesAndPrompts() {
  const caps = client.getServerCapabilities() ?? {};
  // The completions capability exists from 2025-03-26 on.
  check(
    "capabilities resources and prompts listChanged, completions",
    caps.resources?.listChanged === true && !caps.resources?.subscribe && caps.prompts?.listChanged === true &&
      (version >= "2025-03-26" ? caps.completions !== undefined : caps.completions === undefined),
    show(caps),
  );
  const attempt = async (name, f) => {
    try {
      await f();
    } catch (e) {
      check(name, false, `threw: ${e?.message ?? e}`);
    }
  };
  await attempt("resources/list", async () => {
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    check("resources/list", ["tairseach://system/status", "tairseach://examples/readme"].every((u) => uris.includes(u)), uris.join(", "));
  });
  await attempt("resources/read method", async () => {
    const r = await client.readResource({ uri: "tairseach://system/status" });
    const c = r.contents[0];
    check("resources/read method", c?.mimeType === "application/json" && JSON.parse(c.text).status === "ok", show(r));
  });
  await attempt("resources/read file", async () => {
    const r = await client.readResource({ uri: "tairseach://examples/readme" });
    check("resources/read file", r.contents[0]?.text?.includes("# Example manifests"), show(r).slice(0, 200));
  });
  // A note to read through the template, and to review.
  const note = JSON.parse(textOf(await client.callTool({ name: "tairseach_notes_create", arguments: { title: `template ${version}` } })));
  await attempt("resources/templates/list and read an expansion", async () => {
    const tpl = (await client.listResourceTemplates()).resourceTemplates.find((t) => t.uriTemplate === "tairseach://notes/{id}");
    const uri = new UriTemplate(tpl.uriTemplate).expand({ id: note.id });
    const r = await client.readResource({ uri });
    check("resources/templates/list and read an expansion", JSON.parse(r.contents[0].text).title === `template ${version}`, show(r));
  });
  await attempt("resources/read unknown is -32002", async () => {
    try {
      const r = await client.readResource({ uri: "tairseach://nothing" });
      check("resources/read unknown is -32002", false, `no error, result ${show(r)}`);
    } catch (e) {
      check("resources/read unknown is -32002", e?.code === -32002, `code ${e?.code}: ${e?.message}`);
    }
  });
  await attempt("prompts/list", async () => {
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    check("prompts/list", ["tairseach_notes_review", "tairseach_notes_summarize"].every((n) => names.includes(n)), names.join(", "));
  });
  await attempt("prompts/get embeds a resource", async () => {
    const r = await client.getPrompt({ name: "tairseach_notes_review", arguments: { id: note.id } });
    const embedded = r.messages.find((m) => m.content.type === "resource");
    check("prompts/get embeds a resource", embedded?.content.resource.uri === `tairseach://notes/${note.id}`, show(r));
  });
  await attempt("prompts/get without a required argument is -32602", async () => {
    try {
      const r = await client.getPrompt({ name: "tairseach_notes_review", arguments: {} });
      check("prompts/get without a required argument is -32602", false, `no error, result ${show(r)}`);
    } catch (e) {
      check("prompts/get without a required argument is -32602", e?.code === -32602, `code ${e?.code}: ${e?.message}`);
    }
  });
  await attempt("completion/complete", async () => {
    const r = await client.complete({ ref: { type: "ref/prompt", name: "tairseach_notes_review" }, argument: { name: "id", value: note.id.slice(0, 4) } });
    check("completion/complete", r.completion.values.includes(note.id), show(r));
  });
}
