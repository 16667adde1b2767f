// One session of the official TypeScript SDK client against the bridge in
// search mode (--tool-mode search): the list holds exactly find_tools and
// call_tool; find_tools finds a tool, call_tool calls it as tools/call
// would, and a name that is not served is an isError result.
// Prints "ok   sdk-search VERSION CHECK" or "FAIL sdk-search VERSION CHECK: why"
// per check and exits 1 if any failed.
//
//   node sdk-search.mjs --bridge PATH --socket SOCK --manifests DIR --protocol-version V
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    bridge: { type: "string" },
    socket: { type: "string" },
    manifests: { type: "string" },
    "protocol-version": { type: "string" },
  },
});
const version = opt["protocol-version"];
let failed = 0;
function check(name, ok, detail = "") {
  console.log(ok ? `ok   sdk-search ${version} ${name}` : `FAIL sdk-search ${version} ${name}: ${String(detail).replace(/\s+/g, " ").slice(0, 400)}`);
  if (!ok) failed++;
}
const textOf = (r) => (r?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

const stdio = new StdioClientTransport({
  command: opt.bridge,
  args: ["--socket", opt.socket, "--manifests", opt.manifests, "--tool-mode", "search", "--exclude", "secrets.*", "--log-level", "error"],
  stderr: "inherit",
});
// Ask for the version under test by rewriting initialize on its way out.
const send = stdio.send.bind(stdio);
stdio.send = (msg, o) =>
  send(msg.method === "initialize" ? { ...msg, params: { ...msg.params, protocolVersion: version } } : msg, o);
const client = new Client({ name: "tairseach-interop-search", version: "1.0.0" });
const watchdog = setTimeout(() => {
  console.log(`FAIL sdk-search ${version} session: not finished after 60s`);
  process.exit(1);
}, 60000);
try {
  await client.connect(stdio);
  const names = (await client.listTools()).tools.map((t) => t.name);
  check("tools/list is find_tools and call_tool", names.join(",") === "tairseach_find_tools,tairseach_call_tool", names.join(", "));

  const r = await client.callTool({ name: "tairseach_find_tools", arguments: { query: "write a new note", limit: 3 } });
  // Before 2025-06-18 only the text carries the result.
  const found = version >= "2025-06-18" ? r.structuredContent : JSON.parse(textOf(r));
  const tool = found?.tools?.[0];
  check("find_tools finds notes_create", !r.isError && tool?.name === "tairseach_notes_create" && tool?.inputSchema?.type === "object", textOf(r));
  check("find_tools structuredContent as the version has it", version >= "2025-06-18" ? r.structuredContent !== undefined : r.structuredContent === undefined, JSON.stringify(r));

  const title = `search mode ${version}`;
  const c = await client.callTool({ name: "tairseach_call_tool", arguments: { name: tool?.name, arguments: { title } } });
  check("call_tool calls it", !c.isError && textOf(c).includes(title), JSON.stringify(c));

  const bad = await client.callTool({ name: "tairseach_call_tool", arguments: { name: "tairseach_notes_create", arguments: { title: 7 } } });
  check("call_tool validates arguments", bad.isError === true && textOf(bad).includes("title"), JSON.stringify(bad));

  const hidden = await client.callTool({ name: "tairseach_call_tool", arguments: { name: "tairseach_secrets_read", arguments: { name: "x" } } });
  check("call_tool of a filtered-out tool is isError", hidden.isError === true && textOf(hidden).includes("tairseach_find_tools"), JSON.stringify(hidden));
} catch (e) {
  check("session", false, e?.stack ?? e);
} finally {
  clearTimeout(watchdog);
  await client.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
