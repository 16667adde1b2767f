// A session of the official TypeScript SDK client against the bridge:
// connect, list, call (success, tool error, unknown tool, bad arguments),
// then add a manifest and wait for notifications/tools/list_changed.
//
//   node sdk-client.mjs BRIDGE SOCKET MANIFEST_DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const [bridge, socket, manifests] = process.argv.slice(2);
let failed = 0;
function check(name, ok, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} sdk ${name}${ok ? "" : ": " + detail}`);
  if (!ok) failed++;
}
const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");

const client = new Client({ name: "interop", version: "1.0.0" });
let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

const transport = new StdioClientTransport({
  command: bridge,
  args: ["--socket", socket, "--manifests", manifests, "--log-level", "warn"],
  stderr: "ignore",
});
const timer = setTimeout(() => {
  console.log("FAIL sdk session: timed out after 60s");
  process.exit(1);
}, 60000);

try {
  await client.connect(transport);
  const version = client.getServerVersion();
  check("connect (initialize)", version?.name === "tairseach-mcp", JSON.stringify(version));
  check("capabilities declare tools.listChanged", client.getServerCapabilities()?.tools?.listChanged === true);

  const list = await client.listTools();
  const names = list.tools.map((t) => t.name);
  check("tools/list", names.includes("tairseach_notes_create") && names.includes("tairseach_system_info"), names.join(","));
  check("tool names are client-safe", names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)), names.join(","));

  const ok = await client.callTool({ name: "tairseach_notes_create", arguments: { title: "from the TypeScript SDK" } });
  check("tools/call success", !ok.isError && ok.structuredContent?.title === "from the TypeScript SDK", JSON.stringify(ok));

  const denied = await client.callTool({ name: "tairseach_secrets_read", arguments: { name: "x" } });
  check("tools/call backend error is isError", denied.isError === true && text(denied).includes("-32011"), JSON.stringify(denied));

  const bad = await client.callTool({ name: "tairseach_notes_create", arguments: { title: 7 } });
  check("tools/call bad arguments is isError", bad.isError === true && text(bad).includes("arguments.title"), JSON.stringify(bad));

  let unknownErr = "";
  try {
    await client.callTool({ name: "tairseach_nope", arguments: {} });
  } catch (e) {
    unknownErr = String(e?.message ?? e);
  }
  check("tools/call unknown tool is a JSON-RPC error", unknownErr.includes("unknown tool"), unknownErr || "no error");

  writeFileSync(
    join(manifests, "interop-added.json"),
    JSON.stringify({
      id: "interop",
      tools: [{ name: "interop.added", description: "Added while connected.", inputSchema: { type: "object" } }],
      implementation: { methods: { "interop.added": "echo" } },
    }),
  );
  await Promise.race([listChanged, new Promise((_, reject) => setTimeout(() => reject(new Error("no list_changed in 10s")), 10000))]);
  const again = await client.listTools();
  check("list_changed after adding a manifest", again.tools.some((t) => t.name === "tairseach_interop_added"));
} catch (e) {
  check("session", false, String(e?.stack ?? e));
} finally {
  clearTimeout(timer);
  await client.close();
}
process.exit(failed ? 1 : 0);
