// Which protocol era a client spoke over HTTP, as the bridge recorded it:
// a client's HTTP requests cannot be tapped the way tap.sh taps stdin, so
// scripts/interop.sh reads the bridge's audit log instead, where each call
// names its transport and the protocol version in force. Exits 0 when the
// entries written after the first SKIP lines (within 5 s) hold a call over
// HTTP in ERA, printing what it found; else prints why (one line) and
// exits 1.
//
//   node audit-era.mjs FILE SKIP ERA     ERA: legacy (an initialize version) or modern (2026-07-28)
import { existsSync, readFileSync } from "node:fs";

const [file, skip, era] = process.argv.slice(2);
const want = { legacy: (v) => v < "2026-07-28", modern: (v) => v >= "2026-07-28" }[era];
if (!file || !want) {
  console.log("usage: node audit-era.mjs FILE SKIP legacy|modern");
  process.exit(2);
}

const deadline = Date.now() + 5000;
let entries = [];
for (;;) {
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.trim()) : [];
  entries = lines.slice(Number(skip)).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
  if (entries.length || Date.now() > deadline) break;
  await new Promise((r) => setTimeout(r, 50)); // the bridge writes an entry within milliseconds of the call's end
}
if (!entries.length) {
  console.log(`the bridge recorded no call in ${file}`);
  process.exit(1);
}
const bad = entries.filter((e) => e.transport !== "http" || !want(e.protocol_version ?? ""));
if (bad.length) {
  console.log(`recorded ${bad.map((e) => `${e.transport} ${e.protocol_version}`).join(", ")}, want http in the ${era} era`);
  process.exit(1);
}
console.log(`http ${[...new Set(entries.map((e) => e.protocol_version))].join(",")}`);
