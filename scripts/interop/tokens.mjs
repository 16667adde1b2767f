// Checks `tairseach-mcp tools --tokens` against real BPE tokenizers
// (gpt-tokenizer, pinned in package.json: OpenAI's o200k_base and
// cl100k_base encodings, whose ranks the package ships, so nothing is
// fetched). For each folder and tool mode it asks the bridge for its
// tools/list as a 2026-07-28 client, as a client receives it, counts the
// tokens of each tool's JSON and of the whole response, and requires
// the bridge's byte counts to match and its estimates to be within 15%.
// Prints "ok   tokens MODE CHECK (…)" or "FAIL tokens MODE CHECK: why".
//
//   node tokens.mjs --bridge PATH [--mode all|search] DIR...
import { execFileSync } from "node:child_process";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { encode as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as cl100k } from "gpt-tokenizer/encoding/cl100k_base";

const { values: opt, positionals: dirs } = parseArgs({
  options: { bridge: { type: "string" }, mode: { type: "string", default: "all" } },
  allowPositionals: true,
});
const tolerance = 0.15;
let failed = 0;
const pct = (x) => `${(100 * x).toFixed(1)}%`;

const mode = opt.mode;
for (const dir of dirs) {
  const args = ["--manifests", dir, "--tool-mode", mode];
  const name = `${mode} ${basename(dir)}`;
  const est = JSON.parse(execFileSync(opt.bridge, ["tools", "--tokens", "--json", ...args], { encoding: "utf8" }));
  const request = JSON.stringify({
    jsonrpc: "2.0", id: 1, method: "tools/list",
    params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
  });
  const line = execFileSync(opt.bridge, [...args, "--log-level", "error"], { input: request + "\n", encoding: "utf8" }).trim();
  // Each tool's JSON exactly as sent: the response's tools array, split
  // by re-encoding (the bridge sends compact JSON, so this is the same).
  const tools = JSON.parse(line).result.tools.map((t) => JSON.stringify(t));
  let worst = 0, why = "";
  const compare = (label, bytes, tokens, text) => {
    if (bytes !== Buffer.byteLength(text)) why ||= `${label}: ${bytes} bytes reported, ${Buffer.byteLength(text)} sent`;
    for (const [enc, count] of [["o200k_base", o200k(text).length], ["cl100k_base", cl100k(text).length]]) {
      const err = Math.abs(tokens - count) / count;
      if (err > worst) worst = err;
      if (err > tolerance) why ||= `${label}: estimated ${tokens} tokens, ${enc} counts ${count} (${pct(err)} off)`;
    }
  };
  if (est.tools.length !== tools.length) why = `${est.tools.length} tools reported, ${tools.length} listed`;
  est.tools.forEach((t, i) => compare(t.name, t.bytes, t.tokens, tools[i] ?? ""));
  compare("the whole response", est.bytes, est.tokens, line);
  const detail = `${tools.length} tools, ${est.bytes} bytes, ~${est.tokens} tokens, o200k_base ${o200k(line).length}, cl100k_base ${cl100k(line).length}, worst ${pct(worst)}`;
  if (why) {
    failed++;
    console.log(`FAIL tokens ${name}: ${why}`);
  } else {
    console.log(`ok   tokens ${name} (${detail})`);
  }
}
process.exit(failed ? 1 : 0);
