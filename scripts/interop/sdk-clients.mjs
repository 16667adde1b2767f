// The official TypeScript SDK client as named clients of a bridge serving
// --transport http with a clients file (--clients): each connects with its
// own token (Authorization: Bearer), and the bridge serves each its own
// policy. Prints one line per check, "ok   sdk-clients VERSION CHECK" or
// "FAIL sdk-clients VERSION CHECK: why", and exits 1 if any check failed.
//
//   READER_TOKEN=… WRITER_TOKEN=… LIMITED_TOKEN=… node sdk-clients.mjs --url URL
//
// The tokens are those `tairseach-mcp clients add` printed: READER's
// client is read-only (--read-only), WRITER's has every right, LIMITED's
// makes two calls a minute (--calls-per-minute 2). They come in the
// environment, not on the command line, where ps would show them.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({ options: { url: { type: "string" } } });
const tokens = { reader: process.env.READER_TOKEN, writer: process.env.WRITER_TOKEN, limited: process.env.LIMITED_TOKEN };
if (!opt.url || !tokens.reader || !tokens.writer || !tokens.limited) {
  console.error("usage: READER_TOKEN=… WRITER_TOKEN=… LIMITED_TOKEN=… node sdk-clients.mjs --url URL");
  process.exit(2);
}
const version = LATEST_PROTOCOL_VERSION;

let failed = 0;
function check(name, ok, detail = "", said = "") {
  const line = (s) => String(s).replace(/\s+/g, " ").slice(0, 400);
  console.log(ok ? `ok   sdk-clients ${version} ${name}${said ? ` (${line(said)})` : ""}` : `FAIL sdk-clients ${version} ${name}: ${line(detail)}`);
  if (!ok) failed++;
  return ok;
}
const errorOf = (e) => (e?.code !== undefined ? `code ${e.code}: ` : "") + (e?.message ?? String(e));

// connect connects a client with token (none when undefined).
async function connect(name, token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const client = new Client({ name: `interop-sdk-clients-${name}`, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(opt.url), { requestInit: { headers } }));
  return client;
}
const names = async (c) => (await c.listTools()).tools.map((t) => t.name).sort();
const call = (c, name, args) => c.callTool({ name, arguments: args });

const open = [];
try {
  // Without a token, the bridge refuses even a client on loopback.
  try {
    open.push(await connect("anonymous"));
    check("no token: refused", false, "connected without a token");
  } catch (e) {
    check("no token: refused", /401/.test(errorOf(e)), errorOf(e), errorOf(e));
  }

  // Two clients at once, each with its token, see their own tools.
  const [reader, writer] = await Promise.all([connect("reader", tokens.reader), connect("writer", tokens.writer)]);
  open.push(reader, writer);
  const [readerTools, writerTools] = await Promise.all([names(reader), names(writer)]);
  const extra = writerTools.filter((n) => !readerTools.includes(n));
  check("two tokens, two tool lists", readerTools.length > 0 && extra.includes("tairseach_notes_create") && readerTools.every((n) => writerTools.includes(n)),
    `reader ${readerTools.join(",")}; writer ${writerTools.join(",")}`, `the writer alone sees ${extra.join(", ")}`);

  // The read-only client is refused the call the other makes.
  const args = { title: "interop-sdk-clients", body: "named clients" };
  const [asReader, asWriter] = await Promise.allSettled([call(reader, "tairseach_notes_create", args), call(writer, "tairseach_notes_create", args)]);
  check("the read-only client is refused a writing tool", asReader.status === "rejected" && /-32602|unknown tool/i.test(errorOf(asReader.reason)),
    asReader.status === "fulfilled" ? JSON.stringify(asReader.value) : errorOf(asReader.reason), asReader.reason && errorOf(asReader.reason));
  check("the writer calls it", asWriter.status === "fulfilled" && !asWriter.value.isError,
    asWriter.status === "fulfilled" ? JSON.stringify(asWriter.value) : errorOf(asWriter.reason));
  const readerRead = await call(reader, "tairseach_system_info", {});
  check("the read-only client calls a read-only tool", !readerRead.isError, JSON.stringify(readerRead));

  // A client over its rate is refused (429) while another's calls go on.
  const limited = await connect("limited", tokens.limited);
  open.push(limited);
  const within = [await call(limited, "tairseach_system_info", {}), await call(limited, "tairseach_system_info", {})];
  const [over, meanwhile] = await Promise.allSettled([call(limited, "tairseach_system_info", {}), call(writer, "tairseach_system_info", {})]);
  check("a client over its rate gets 429", within.every((r) => !r.isError) && over.status === "rejected" && /429/.test(errorOf(over.reason)) && /retryAfterMs/.test(errorOf(over.reason)),
    over.status === "fulfilled" ? "the third call of two a minute ran" : errorOf(over.reason), over.reason && errorOf(over.reason).slice(0, 120));
  check("another client meanwhile is not held back", meanwhile.status === "fulfilled" && !meanwhile.value.isError,
    meanwhile.status === "fulfilled" ? JSON.stringify(meanwhile.value) : errorOf(meanwhile.reason));
  check("the limited client's session lives on", (await names(limited)).length > 0);
} catch (e) {
  check("session", false, errorOf(e));
} finally {
  await Promise.allSettled(open.map((c) => c.close()));
}
process.exit(failed ? 1 : 0);
