// Assertions that scripts/interop.sh makes about what the Inspector CLI
// printed (its --format json output) and about what it sent to the bridge
// (the lines recorded by tap.sh). Exits 0 when the expectation holds, else
// prints why on stdout (one line) and exits 1.
//
//   node expect.mjs tools    OUT NAME...            result.tools has every NAME
//   node expect.mjs result   OUT TEXT [--is-error]  result content text contains TEXT;
//                                                   isError is true with --is-error, else absent/false
//   node expect.mjs structured OUT KEY VALUE        result.structuredContent[KEY] === VALUE
//   node expect.mjs resources OUT URI...            result.resources has every URI
//   node expect.mjs prompts  OUT NAME...            result.prompts has every NAME
//   node expect.mjs contents OUT TEXT               a text of result.contents contains TEXT
//   node expect.mjs messages OUT TEXT               a text of result.messages (embedded resources' too) contains TEXT
//   node expect.mjs wire     TAPLOG ERA             the client spoke ERA (legacy or modern) on the wire
import { readFileSync } from "node:fs";

const [what, file, ...rest] = process.argv.slice(2);

function fail(msg) {
  console.log(msg);
  process.exit(1);
}

function readResult(path) {
  const raw = readFileSync(path, "utf8").trim();
  if (!raw) fail("the client printed nothing on stdout");
  let doc;
  try {
    doc = JSON.parse(raw);
  } catch (e) {
    fail(`stdout is not one JSON document: ${raw.slice(0, 200)}`);
  }
  if (!doc || typeof doc !== "object" || !("result" in doc)) fail(`no "result" in ${raw.slice(0, 200)}`);
  return doc.result;
}

const textOf = (r) => (Array.isArray(r?.content) ? r.content : []).map((c) => (c?.type === "text" ? c.text : "")).join("\n");

switch (what) {
  case "tools": {
    const r = readResult(file);
    if (!Array.isArray(r.tools)) fail("result.tools is not an array");
    const names = r.tools.map((t) => t.name);
    const missing = rest.filter((n) => !names.includes(n));
    if (missing.length) fail(`missing tools ${missing.join(", ")}; got ${names.join(", ")}`);
    break;
  }
  case "result": {
    const [want, flag] = rest;
    const r = readResult(file);
    const isError = flag === "--is-error";
    if (isError && r.isError !== true) fail(`expected isError: true, got ${JSON.stringify(r).slice(0, 300)}`);
    if (!isError && r.isError === true) fail(`unexpected isError: ${textOf(r).slice(0, 300)}`);
    if (!textOf(r).includes(want)) fail(`result text lacks ${JSON.stringify(want)}: ${JSON.stringify(r).slice(0, 300)}`);
    break;
  }
  case "structured": {
    const [key, value] = rest;
    const r = readResult(file);
    if (r.structuredContent?.[key] !== value)
      fail(`structuredContent.${key} is ${JSON.stringify(r.structuredContent?.[key])}, want ${JSON.stringify(value)}`);
    break;
  }
  case "resources":
  case "prompts": {
    const r = readResult(file);
    const list = r[what];
    if (!Array.isArray(list)) fail(`result.${what} is not an array`);
    const names = list.map((x) => (what === "resources" ? x.uri : x.name));
    const missing = rest.filter((n) => !names.includes(n));
    if (missing.length) fail(`missing ${what} ${missing.join(", ")}; got ${names.join(", ")}`);
    break;
  }
  case "contents":
  case "messages": {
    const r = readResult(file);
    const list = r[what];
    if (!Array.isArray(list) || !list.length) fail(`result.${what} is empty or not an array: ${JSON.stringify(r).slice(0, 300)}`);
    // A contents block, or a message's content: text, or an embedded resource's.
    const texts = list.map((x) => x?.text ?? x?.content?.text ?? x?.content?.resource?.text ?? "");
    if (!texts.some((t) => t.includes(rest[0]))) fail(`no text of result.${what} contains ${JSON.stringify(rest[0])}: ${JSON.stringify(r).slice(0, 300)}`);
    break;
  }
  case "wire": {
    // One JSON-RPC message per line, as the client wrote them to the bridge.
    const era = rest[0];
    const msgs = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return {};
        }
      });
    const requests = msgs.filter((m) => m.method && m.id !== undefined);
    const init = requests.find((m) => m.method === "initialize");
    const metaVersions = new Set(requests.map((m) => m.params?._meta?.["io.modelcontextprotocol/protocolVersion"]).filter(Boolean));
    const calls = requests.filter((m) => /^(tools|resources|prompts)\//.test(m.method));
    if (!calls.length) fail("no tools, resources or prompts request reached the bridge");
    if (era === "legacy") {
      if (!init) fail(`no initialize sent (methods: ${requests.map((m) => m.method).join(", ")})`);
      const bad = calls.filter((m) => m.params?._meta?.["io.modelcontextprotocol/protocolVersion"]);
      if (bad.length) fail("legacy requests carry a modern protocolVersion in _meta");
      console.log(`initialize ${init.params?.protocolVersion}`);
    } else if (era === "modern") {
      if (init) fail("an initialize was sent: the client fell back to the legacy era");
      const unstamped = calls.filter((m) => !m.params?._meta?.["io.modelcontextprotocol/protocolVersion"]);
      if (unstamped.length) fail(`${unstamped.length} request(s) without _meta protocolVersion`);
      console.log(`stateless ${[...metaVersions].join(",")}`);
    } else {
      fail(`unknown era ${era}`);
    }
    break;
  }
  default:
    fail(`unknown expectation ${what}`);
}
