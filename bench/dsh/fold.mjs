// The real DSH fold, timed: read a bare JSONL log of events, JSON.parse each line, build a
// detached session from them (Session.create validates every event and folds the surface), and
// derive the messages a model would see. Prints one JSON object per run on stdout:
//   {"runs":[{"seconds":..,"cpuSeconds":..,"createSeconds":..,"events":..,"messages":..}],
//    "maxRssBytes":..,
//    "node":"v20..","dshSession":"0.1.0-rc.8"}
//
// usage: node fold.mjs LOG.jsonl [RUNS]
//
// "seconds" covers reading, parsing, Session.create and deriveMessages (what dshkit's figure
// covers too); "createSeconds" only Session.create and deriveMessages.

import { openSync, readSync, closeSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Session, SessionId } from "@deepseek-ai/dsh-session";

const BLOCK = 1 << 20;

function readEvents(path) {
  const events = [];
  const fd = openSync(path, "r");
  const buffer = Buffer.allocUnsafe(BLOCK);
  let carry = Buffer.alloc(0);
  try {
    for (;;) {
      const size = readSync(fd, buffer, 0, BLOCK, null);
      if (size === 0) break;
      const chunk = carry.length ? Buffer.concat([carry, buffer.subarray(0, size)]) : buffer.subarray(0, size);
      let start = 0;
      for (let at = chunk.indexOf(10, start); at !== -1; at = chunk.indexOf(10, start)) {
        if (at > start) events.push(JSON.parse(chunk.toString("utf8", start, at)));
        start = at + 1;
      }
      carry = Buffer.from(chunk.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
  if (carry.length) events.push(JSON.parse(carry.toString("utf8")));
  return events;
}

function once(path) {
  const cpu = process.cpuUsage();
  const begin = performance.now();
  const events = readEvents(path);
  const created = performance.now();
  const session = Session.create(SessionId("bench"), events);
  const messages = session.deriveMessages();
  const end = performance.now();
  const used = process.cpuUsage(cpu);
  return {
    seconds: (end - begin) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
    createSeconds: (end - created) / 1000,
    events: events.length,
    messages: messages.length,
  };
}

const [path, runsText] = process.argv.slice(2);
if (!path) {
  process.stderr.write("usage: node fold.mjs LOG.jsonl [RUNS]\n");
  process.exit(2);
}
const runs = [];
for (let i = 0; i < Number(runsText ?? 1); i++) runs.push(once(path));
const pkg = JSON.parse(readFileSync(new URL("./node_modules/@deepseek-ai/dsh-session/package.json", import.meta.url)));
process.stdout.write(JSON.stringify({
  runs,
  maxRssBytes: process.resourceUsage().maxRSS * 1024,
  node: process.version,
  dshSession: pkg.version,
}) + "\n");
