// Runs the official conformance suite's server scenarios for one protocol
// version against a bridge's URL, with a baseline of the scenarios (or
// single checks) that do not apply, and prints one line per scenario:
//
//   ok   conformance VERSION SCENARIO (what passed)
//   n/a  conformance VERSION SCENARIO (why it does not apply)
//   FAIL conformance VERSION SCENARIO: why
//
// after a first line with the suite's own verdict with the baseline (its
// exit code). A scenario fails when a check fails (or warns) that the
// baseline does not excuse, when it did not run, or when the baseline
// excuses it and it passes (the entry is stale: remove it). A scenario
// whose checks all say they could not apply (no check passed, none
// failed) is n/a with its own words. Exits 1 if any line is FAIL.
//
//   node conformance.mjs --cli PATH --url URL --spec-version V --baseline FILE --out DIR [--extensions PREFIX]
//
// PATH is the suite's dist/index.js; FILE a baseline in the suite's
// --expected-failures format, each entry followed by "# why". With
// --extensions, the scenarios of extensions whose names start with PREFIX
// (such as "tasks-", the tasks extension's) run too, one at a time: the
// suite selects them by name only, not by version.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    cli: { type: "string" },
    url: { type: "string" },
    "spec-version": { type: "string" },
    baseline: { type: "string" },
    out: { type: "string" },
    timeout: { type: "string", default: "240" },
    extensions: { type: "string" },
  },
});
for (const k of ["cli", "url", "spec-version", "baseline", "out"]) {
  if (!opt[k]) {
    console.error("usage: node conformance.mjs --cli PATH --url URL --spec-version V --baseline FILE --out DIR");
    process.exit(2);
  }
}
const version = opt["spec-version"];
const oneLine = (s) => String(s).replace(/\s+/g, " ").trim().slice(0, 300);

let failed = 0;
function line(status, scenario, text) {
  if (status === "FAIL") {
    failed++;
    console.log(`FAIL conformance ${version} ${scenario}: ${oneLine(text)}`);
  } else {
    console.log(`${status.padEnd(4)} conformance ${version} ${scenario}${text ? ` (${oneLine(text)})` : ""}`);
  }
}

// suite runs the conformance CLI, bounded by the timeout.
function suite(...args) {
  return spawnSync(process.execPath, [opt.cli, ...args], { encoding: "utf8", timeout: Number(opt.timeout) * 1000, maxBuffer: 64 << 20 });
}

// The baseline: entry (scenario, or scenario:check-id) → why.
const excused = new Map();
for (const l of readFileSync(opt.baseline, "utf8").split("\n")) {
  const m = /^\s+-\s+([^\s#]+)\s*(?:#\s*(.*))?$/.exec(l);
  if (m) excused.set(m[1], m[2] ?? "listed in the baseline");
}

// The scenarios the suite has for this version.
const listed = suite("list", "--server", "--spec-version", version);
const scenarios = [...(listed.stdout ?? "").matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]);
if (listed.status !== 0 || scenarios.length === 0) {
  line("FAIL", "list", `conformance list --server --spec-version ${version} gave no scenarios: ${listed.stderr || listed.error}`);
  process.exit(1);
}

mkdirSync(opt.out, { recursive: true });
const run = suite("server", "--url", opt.url, "--suite", "all", "--spec-version", version, "--expected-failures", opt.baseline, "-o", opt.out);
writeFileSync(join(opt.out, "suite.log"), `${run.stdout ?? ""}${run.stderr ?? ""}`);

// The suite's own verdict with the baseline: 0 when every failure was
// expected and no entry is stale.
if (run.status === 0) {
  line("ok", "suite verdict", `exit 0 with --expected-failures ${opt.baseline.split("/").at(-1)}`);
} else {
  // What the suite says after its totals, less the expected failures (~).
  const said = `${run.stdout ?? ""}${run.stderr ?? ""}`.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  const after = said.slice(said.findIndex((l) => l.startsWith("Total:")) + 1).filter((l) => l.trim() && !l.trim().startsWith("~") && !l.trim().endsWith(":"));
  line("FAIL", "suite verdict", `exit ${run.status ?? run.signal ?? run.error}: ${after.join(" ") || said.slice(-3).join(" ")}`);
}

// checksOf returns the checks of the scenario's run, or undefined.
function checksOf(scenario) {
  const esc = scenario.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const dir = readdirSync(opt.out)
    .filter((d) => new RegExp(`^server-${esc}-\\d{4}-\\d{2}-\\d{2}T`).test(d))
    .sort()
    .at(-1);
  const file = dir && join(opt.out, dir, "checks.json");
  return file && existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
}

// The extensions' scenarios asked for, each run on its own.
const extensions = [];
if (opt.extensions) {
  const all = suite("list", "--server");
  extensions.push(...[...(all.stdout ?? "").matchAll(/^\s+- (\S+) \[extension\]/gm)].map((m) => m[1]).filter((n) => n.startsWith(opt.extensions)));
  if (extensions.length === 0) line("FAIL", "list", `conformance list --server has no extension scenario named ${opt.extensions}*`);
  for (const scenario of extensions) {
    const one = suite("server", "--url", opt.url, "--scenario", scenario, "-o", opt.out);
    writeFileSync(join(opt.out, `${scenario}.log`), `${one.stdout ?? ""}${one.stderr ?? ""}`);
  }
}

const describe = (c) => `${c.id}: ${c.errorMessage ?? c.description}`;
for (const scenario of [...scenarios, ...extensions]) {
  const checks = checksOf(scenario);
  if (!checks) {
    line("FAIL", scenario, `did not run (see ${join(opt.out, "suite.log")})`);
    continue;
  }
  // The suite's baseline counts a warning (a SHOULD not met) as a failure.
  const failures = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  const passed = checks.filter((c) => c.status === "SUCCESS");
  if (excused.has(scenario)) {
    if (failures.length) line("n/a", scenario, excused.get(scenario));
    else line("FAIL", scenario, `passes, but the baseline says it does not apply: remove it from ${opt.baseline}`);
    continue;
  }
  const byCheck = new Map([...excused].filter(([k]) => k.startsWith(`${scenario}:`)).map(([k, why]) => [k.slice(scenario.length + 1), why]));
  const unexcused = failures.filter((c) => !byCheck.has(c.id));
  const stale = [...byCheck.keys()].filter((id) => checks.some((c) => c.id === id && c.status === "SUCCESS"));
  if (unexcused.length) {
    line("FAIL", scenario, unexcused.map(describe).join("; "));
  } else if (stale.length) {
    line("FAIL", scenario, `${stale.join(", ")} passes, but the baseline says it does not apply: remove it from ${opt.baseline}`);
  } else if (passed.length === 0) {
    // Nothing said either way: the scenario found nothing to test, or
    // the suite skips it, and says why.
    const info = checks.filter((c) => c.status === "INFO" && c.details?.message).map((c) => c.details.message);
    const skipped = checks.filter((c) => c.status === "SKIPPED" && c.errorMessage).map((c) => `the suite skips it: ${c.errorMessage.replace(/^Skipped: /, "")}`);
    line("n/a", scenario, info.at(-1) ?? skipped.at(-1) ?? "no check applied");
  } else {
    const notes = [passed.length === 1 ? "1 check passes" : `${passed.length} checks pass`];
    if (byCheck.size) notes.push(`n/a: ${[...byCheck.keys()].join(", ")}`);
    line("ok", scenario, notes.join("; "));
  }
}

process.exit(failed ? 1 : 0);
