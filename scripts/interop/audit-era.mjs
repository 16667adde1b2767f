// Which protocol era a client spoke over HTTP, as the bridge recorded it:
// a client's HTTP requests cannot be tapped the way tap.sh taps stdin, so
// scripts/interop.sh reads the bridge's audit log instead, where each call
// names its transport and the protocol version in force. Exits 0 when the
// entries written after the first SKIP lines (within 5 s) are calls over
// HTTP in ERA, printing what it found; else prints why (one line) and
// exits 1.
//
//   node audit-era.mjs FILE SKIP ERA     ERA: legacy (an initialize version) or modern (2026-07-28)
import { waitForEntries } from "./audit.mjs";

const [file, skip, era] = process.argv.slice(2);
const want = { legacy: (v) => v < "2026-07-28", modern: (v) => v >= "2026-07-28" }[era];
if (!file || !want) {
  console.log("usage: node audit-era.mjs FILE SKIP legacy|modern");
  process.exit(2);
}

const found = await waitForEntries(file, () => true, { skip: Number(skip) });
if (!found.length) {
  console.log(`the bridge recorded no call in ${file}`);
  process.exit(1);
}
const bad = found.filter((e) => e.transport !== "http" || !want(e.protocol_version ?? ""));
if (bad.length) {
  console.log(`recorded ${bad.map((e) => `${e.transport} ${e.protocol_version}`).join(", ")}, want http in the ${era} era`);
  process.exit(1);
}
console.log(`http ${[...new Set(found.map((e) => e.protocol_version))].join(",")}`);
