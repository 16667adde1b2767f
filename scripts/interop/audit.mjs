// The bridge's audit log (--audit-log), one JSON line per call: its
// transport, protocol version, client, session, outcome and duration.
// The HTTP checks read it to see what the bridge did with a call: which
// era served it, whether it ended cancelled.
import { existsSync, readFileSync, watch } from "node:fs";
import { dirname } from "node:path";

// entries returns the entries of the log at file after its first skip
// lines, and [] while there is no log.
export function entries(file, skip = 0) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .slice(skip)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

// waitForEntries resolves to the entries after the first skip lines for
// which want is true, once there are count of them, or to those there are
// after ms. The bridge writes an entry within milliseconds of the call's
// end, so a client may have its answer first: the log is read again each
// time its folder changes.
export function waitForEntries(file, want, { skip = 0, count = 1, ms = 5000 } = {}) {
  const found = () => entries(file, skip).filter(want);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (v) => {
      if (settled) return;
      settled = true;
      watcher.close();
      clearTimeout(timer);
      resolve(v);
    };
    // The watcher starts before the first read, so no write falls between.
    const watcher = watch(dirname(file), () => {
      const v = found();
      if (v.length >= count) finish(v);
    });
    const timer = setTimeout(() => finish(found()), ms);
    const v = found();
    if (v.length >= count) finish(v);
  });
}
