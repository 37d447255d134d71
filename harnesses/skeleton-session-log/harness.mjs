#!/usr/bin/env node
// A harness skeleton for the session-log suite of the dshkit conformance kit (protocol 1,
// spec/conformance/harness.md). Copy this directory, fill in the four operations below,
// and add to CAPABILITIES each capability you implement (spec/conformance/suites/session-log.md).
//
//   dshkit conformance --impl "cmd:node harness.mjs" --suite session-log
//
// stdout carries protocol messages only (CNF-HAR-001): write diagnostics to stderr, which the
// kit keeps per case in its report.
import readline from 'node:readline'

const PROTOCOL_VERSION = 1

// Who you are. `version` is a released version or a commit, never a branch name (CNF-HAR-002).
const IMPLEMENTATION = {
  name: 'my-session-log',
  version: '0.0.0',
  language: 'javascript',
}

// What you implement. A case that needs a capability not listed here is "not applicable";
// a listed capability whose cases answer `skipped` fails the run (exit status 1).
// Known names: session-log.core, session-log.invariants, session-log.repair, session-log.load,
// session-log.jsonl, session-log.zstd (or session-log for all of them).
const CAPABILITIES = []

// Thrown by an operation that is not implemented yet: the kit records the case as skipped.
class NotImplemented extends Error {}

// The log of a case: events in memory, the text of a .jsonl file, or the bytes of a file
// (base64; possibly zstd frames). Parse text and bytes as your implementation reads files.
function readLog (input) {
  if ('events' in input) return { events: input.events }
  if ('text' in input) return { text: input.text }
  if ('base64' in input) return { bytes: Buffer.from(input.base64, 'base64') }
  throw new Error(`unknown log form: ${Object.keys(input).join(', ')}`)
}

// The operations. Each returns the result object the suite documents, e.g.
// {valid: true, events: n} or {valid: false, error: {code, seq?, line?}}.
const OPERATIONS = {
  // params.level: append | seed | invariants | load (default load)
  validate (log, { level = 'load', sessionId } = {}) {
    throw new NotImplemented(`validate at level ${level}`)
  },
  // params.repair: close an interrupted turn before folding (default true)
  // -> {valid: true, nodes: [...], shadowed: [...], messages: [...]}
  fold (log, { repair = true, sessionId } = {}) {
    throw new NotImplemented(`fold (repair ${repair})`)
  },
  // -> {valid: true, closers: [...events...]}
  repair (log, { sessionId } = {}) {
    throw new NotImplemented('repair')
  },
  // -> {valid: true, events: [...]} (the loader's view: normalised, repaired)
  load (log, { sessionId } = {}) {
    throw new NotImplemented('load')
  },
}

function send (message) {
  process.stdout.write(JSON.stringify(message) + '\n')
}

function runCase (seq, { id, suite, operation, input, params }) {
  const run = suite === 'session-log' ? OPERATIONS[operation] : undefined
  if (run === undefined) {
    send({ seq, skipped: true, message: `${suite} ${operation} is not implemented` })
    return
  }
  try {
    send({ seq, result: run(readLog(input), params ?? {}) })
  } catch (error) {
    if (error instanceof NotImplemented) {
      send({ seq, skipped: true, message: `not implemented: ${error.message}` })
    } else {
      // an exception is not a result (CNF-HAR-005)
      process.stderr.write(`case ${id}: ${error.stack}\n`)
      send({ seq, errored: true, context: { message: String(error.message), traceback: String(error.stack) } })
    }
  }
}

async function main () {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    const request = JSON.parse(line)
    if (request.cmd === 'start') {
      if (request.version !== PROTOCOL_VERSION) {
        process.stderr.write(`unsupported protocol version ${request.version}\n`)
        process.exit(2) // exit without answering (CNF-HAR-002)
      }
      send({ version: PROTOCOL_VERSION, implementation: { ...IMPLEMENTATION, capabilities: CAPABILITIES } })
    } else if (request.cmd === 'run') {
      runCase(request.seq, request.case)
    } else if (request.cmd === 'stop') {
      break
    } else {
      process.stderr.write(`unknown command ${JSON.stringify(request.cmd)}\n`)
    }
  }
  process.exit(0) // stop, or the end of stdin (CNF-HAR-006)
}

main().catch(error => {
  process.stderr.write(`${error.stack}\n`)
  process.exit(1)
})
