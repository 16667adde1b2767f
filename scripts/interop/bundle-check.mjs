// Checks an unpacked tairseach-mcp.mcpb the way Claude Desktop runs it: the
// server command is resolved from the bundle's manifest by the MCPB
// package's own getMcpConfigForManifest (platform_overrides for this OS,
// ${__dirname} and ${user_config.*} substituted, defaults filled in), then
// started and driven by the TypeScript SDK client. Two installs:
//
//   defaults  no settings changed: the manifest's defaults,
//             ~/.tairseach/manifests and ~/.tairseach/tairseach.sock, with
//             HOME=--home (which holds both);
//   settings  manifests folder and socket chosen, read-only on, an audit
//             log: it must record the call.
//
// Also checks the binaries: macOS universal (arm64 + x86_64), Linux amd64
// and arm64. Prints "ok   CHECK" or "FAIL CHECK: why" per check; exits 1 if
// any failed.
//
//   node bundle-check.mjs --dir UNPACKED --home HOME --manifests DIR --socket SOCK
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    dir: { type: "string" },
    home: { type: "string" },
    manifests: { type: "string" },
    socket: { type: "string" },
  },
});
for (const k of ["dir", "home", "manifests", "socket"]) {
  if (!opt[k]) {
    console.error("usage: node bundle-check.mjs --dir UNPACKED --home HOME --manifests DIR --socket SOCK");
    process.exit(2);
  }
}

let failed = 0;
// Each line names the client and era interop.sh records it under.
const label = `bundle ${process.platform}-${process.arch}`;
function check(name, ok, detail = "") {
  console.log(ok ? `ok   ${label} ${name}` : `FAIL ${label} ${name}: ${String(detail).replace(/\s+/g, " ").slice(0, 400)}`);
  if (!ok) failed++;
  return ok;
}
const show = (v) => JSON.stringify(v);
const textOf = (r) => (r?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

// ------------------------------------------------------------- binaries
// Mach-O CPU types (<mach/machine.h>) and ELF machines.
const machO = { 0x0100000c: "arm64", 0x01000007: "x86_64" };
const elf = { 0x3e: "amd64", 0xb7: "arm64" };
function fatArches(file) {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0xcafebabe) return [];
  const arches = [];
  for (let i = 0; i < b.readUInt32BE(4); i++) {
    const at = 8 + 20 * i;
    const offset = b.readUInt32BE(at + 8);
    // Each slice is a thin 64-bit Mach-O (MH_MAGIC_64, little-endian).
    if (b.readUInt32LE(offset) === 0xfeedfacf) arches.push(machO[b.readUInt32BE(at)] ?? "unknown");
  }
  return arches.sort();
}
function elfMachine(file) {
  const b = readFileSync(file);
  return b.readUInt32BE(0) === 0x7f454c46 ? (elf[b.readUInt16LE(18)] ?? "unknown") : "not ELF";
}
const darwin = fatArches(join(opt.dir, "server/darwin/tairseach-mcp"));
check("binary macOS universal (arm64, x86_64)", show(darwin) === show(["arm64", "x86_64"]), `slices: ${show(darwin)}`);
for (const arch of ["amd64", "arm64"]) {
  const got = elfMachine(join(opt.dir, `server/linux/tairseach-mcp-${arch}`));
  check(`binary Linux ${arch}`, got === arch, `ELF machine ${got}`);
}

// -------------------------------------------------------------- sessions
const manifest = JSON.parse(readFileSync(join(opt.dir, "manifest.json"), "utf8"));

// session NAME USERCONFIG HOME WANT: resolve the command as the host does,
// check it, start it, and run initialize, tools/list and one tools/call.
async function session(name, userConfig, home, want) {
  const config = await getMcpConfigForManifest({
    manifest,
    extensionPath: opt.dir,
    systemDirs: { HOME: home },
    userConfig,
    pathSeparator: sep,
  });
  if (!check(`${name} mcp_config`, config?.command.startsWith(opt.dir + sep) && show(config.args) === show(want.args) && show(config.env) === show(want.env), show(config))) {
    return;
  }
  try {
    accessSync(config.command, constants.X_OK);
  } catch (e) {
    check(`${name} command`, false, e.message);
    return;
  }

  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: { ...config.env, HOME: home },
    cwd: "/",
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr = (stderr + d).slice(-2000)));
  const client = new Client({ name: "tairseach-bundle-check", version: "1.0.0" });
  try {
    await client.connect(transport);
    check(`${name} initialize`, client.getServerVersion()?.name === "tairseach-mcp", show(client.getServerVersion()));
    const names = (await client.listTools()).tools.map((t) => t.name);
    check(`${name} tools/list`, names.includes(want.call.name), `no ${want.call.name} in ${names.join(", ") || "(none)"}`);
    // Read-only is passed as TAIRSEACH_READ_ONLY, which a bridge without
    // that setting ignores; a bridge whose help names --read-only must hide
    // a tool that writes.
    if (want.readOnly && spawnSync(config.command, ["--help"], { encoding: "utf8" }).stdout?.includes("--read-only")) {
      check(`${name} tools/list read-only`, !names.includes("tairseach_notes_create"), `tairseach_notes_create listed`);
    }
    const r = await client.callTool(want.call);
    const text = textOf(r);
    check(`${name} tools/call ${want.call.name}`, !r.isError && text.length > 0 && text.includes(want.text ?? ""), show(r));
  } catch (e) {
    check(`${name} session`, false, `${e?.message ?? e}; server stderr: ${stderr}`);
  } finally {
    await client.close();
  }
  // The bridge has exited: its audit log is written. A bridge without the
  // setting ignores TAIRSEACH_AUDIT_LOG; one whose help names --audit-log
  // must have recorded the call.
  if (want.auditLog && spawnSync(config.command, ["--help"], { encoding: "utf8" }).stdout?.includes("--audit-log")) {
    const lines = existsSync(want.auditLog) ? readFileSync(want.auditLog, "utf8").split("\n").filter(Boolean) : [];
    const entries = lines.flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
    check(`${name} audit log`, entries.some((e) => e.name === want.call.name && e.outcome === "ok"), `entries: ${show(entries)}`);
  }
}

const watchdog = setTimeout(() => {
  console.log(`FAIL ${label} sessions: not finished after 60s`);
  process.exit(1);
}, 60000);

await session("defaults", {}, opt.home, {
  args: ["--manifests", "~/.tairseach/manifests", "--socket", "~/.tairseach/tairseach.sock"],
  env: { TAIRSEACH_READ_ONLY: "false", TAIRSEACH_AUDIT_LOG: "" },
  call: { name: "tairseach_notes_create", arguments: { title: "from the bundle", body: "interop" } },
  text: "from the bundle",
});

const auditLog = join(opt.home, "audit", "audit.log");
await session("settings", { manifests: opt.manifests, socket: opt.socket, read_only: true, audit_log: auditLog }, opt.home, {
  args: ["--manifests", opt.manifests, "--socket", opt.socket],
  env: { TAIRSEACH_READ_ONLY: "true", TAIRSEACH_AUDIT_LOG: auditLog },
  call: { name: "tairseach_system_info", arguments: {} },
  readOnly: true,
  auditLog,
});

clearTimeout(watchdog);
process.exit(failed ? 1 : 0);
