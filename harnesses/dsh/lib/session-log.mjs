// Suite `session-log` through DSH's exported functions:
//
// - level `append`: `Session.append` for each event (lossless JSON, retired request headers,
//   surface eligibility, the surface fold), seq contiguity as DSH's pure `foldSurface` reports it;
// - level `seed`: `Session.create(id, events)`;
// - level `invariants`: `ctx.sessions.create(id, {seed})` with DSH's InvariantRegistry and the
//   session invariant companion (`@deepseek-ai/dsh-session/invariant`) mounted;
// - level `load` and the `load` operation: DSH's PersistenceCoordinator with the JSONL backend
//   (lib/persistence.mjs); the level adds the invariant companion on the loaded log;
// - `fold`: `Session.create` + `surface.nodes` + `deriveMessages()`, the shadowed seqs from
//   `foldSurface(...).replacements`; with repair, on the log DSH's load returns;
// - `repair`: `interruptedTurnClosers(events)`.

import { Context } from '@deepseek-ai/cordis'
import SessionStore, {
  Session, SessionId, foldSurface, interruptedTurnClosers,
} from '@deepseek-ai/dsh-session'
import * as SessionInvariant from '@deepseek-ai/dsh-session/invariant'
import InvariantRegistry from '@deepseek-ai/dsh-invariants'

import {
  codeOf, dshError, envelopeCode, locationOf, losslessCode, seqAt,
} from './errors.mjs'
import { levelOf } from './codes.mjs'
import { ReadProblem, inputBytes, isZstd, plainBytes, readLog } from './reader.mjs'
import { LOAD_AVAILABLE, assumedHeader, loadThroughDsh } from './persistence.mjs'

export const CAPABILITIES = [
  'session-log.core', 'session-log.invariants', 'session-log.repair', 'session-log.jsonl',
  ...(LOAD_AVAILABLE ? ['session-log.load', 'session-log.zstd'] : []),
]

const isObject = value => value !== null && typeof value === 'object' && !Array.isArray(value)

/** A failed result from a DSH exception; events (and lines) locate the refused event. */
function failure(error, { events = [], lines, index, code } = {}) {
  const message = error instanceof Error ? error.message : String(error)
  const location = locationOf(message)
  const at = index ?? location.index
  let resolved = code ?? codeOf(message)
  if (resolved === 'ENVELOPE_INVALID') resolved = envelopeCode(events[at])
  if (resolved === 'JSON_NOT_LOSSLESS' && at !== undefined) resolved = losslessCode(events[at])
  const seq = at !== undefined ? seqAt(events, at) : (location.seq ?? null)
  let line = null
  if (lines !== undefined && at !== undefined) line = lines[at] ?? null
  return { valid: false, error: dshError(error, { code: resolved, seq, line }) }
}

// -- reading ---------------------------------------------------------------------------------

/** The events of a log input below `load`: {events, lines} or a failed result. */
async function eventsOf(log) {
  if ('events' in log) return { events: log.events, lines: undefined }
  try {
    const { events, lines } = readLog(await plainBytes(inputBytes(log)))
    return { events, lines }
  } catch (error) {
    if (error instanceof ReadProblem) {
      return { failed: { valid: false, error: { code: error.code, seq: null, line: error.line,
        message: error.message, dsh: { name: 'reader', message: error.message } } } }
    }
    throw error
  }
}

// -- the levels ------------------------------------------------------------------------------

function checkAppend(events, lines, id) {
  const session = Session.create(SessionId(id))
  for (const [index, event] of events.entries()) {
    if (!isObject(event)) {
      return failure(new Error(`event at index ${index} is not an object`),
        { events, lines, index, code: 'ENVELOPE_NOT_OBJECT' })
    }
    const options = {}
    if (event.surfaceOp !== undefined) options.surfaceOp = event.surfaceOp
    if (event.sourceEventSeqs !== undefined) options.sourceEventSeqs = event.sourceEventSeqs
    try {
      if (event.seq !== index) foldSurface(events.slice(0, index + 1))
      session.append(event.type, event.data, options)
    } catch (error) {
      return failure(error, { events, lines, index })
    }
  }
  return null
}

function checkSeed(events, lines, id) {
  try {
    Session.create(SessionId(id), events)
    return null
  } catch (error) {
    if (error instanceof TypeError && events.some(e => e === null)) {
      // DSH 0.1.0-rc.8 dereferences a null seed event before its envelope check and throws a
      // TypeError; the refusal is DSH's, the code names what the event is.
      return failure(error, { events, lines, index: events.indexOf(null), code: 'ENVELOPE_NOT_OBJECT' })
    }
    return failure(error, { events, lines })
  }
}

async function invariantContext() {
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(InvariantRegistry)
  await ctx.plugin(SessionInvariant)
  return ctx
}

let sessionCounter = 0

/** The first DSH invariant error for a seed, or null. */
async function invariantError(events) {
  const ctx = await invariantContext()
  try {
    sessionCounter += 1
    ctx.sessions.create(SessionId(`dshkit-${sessionCounter}`), { seed: events })
    return null
  } catch (error) {
    return error
  } finally {
    await ctx.dispose?.()
  }
}

/** The enclosure invariants; the failing index is found by bisecting prefixes. */
async function checkInvariants(events, lines) {
  const error = await invariantError(events)
  if (error === null) return null
  let good = 0
  let bad = events.length
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2)
    if (await invariantError(events.slice(0, middle)) === null) good = middle
    else bad = middle
  }
  return failure(error, { events, lines, index: bad - 1 })
}

// -- load --------------------------------------------------------------------------------------

async function fileOf(log, id) {
  if ('events' in log) {
    const text = [assumedHeader(id), ...log.events].map(e => JSON.stringify(e)).join('\n') + '\n'
    const bytes = Buffer.from(text, 'utf8')
    return { bytes, plain: bytes, zstd: false, assumed: true }
  }
  const bytes = inputBytes(log)
  return { bytes, plain: await plainBytes(bytes), zstd: isZstd(bytes), assumed: false }
}

/** Lines of the events of a file, tolerant of damage (to locate a load problem). */
function linesOf(file) {
  if (file.assumed) return { lines: undefined }
  try {
    return readLog(file.plain)
  } catch {
    return { lines: undefined }
  }
}

const HEADER_CODES = new Set(['FILE_HEADER_MISSING', 'FILE_HEADER_NOT_JSON', 'FILE_HEADER_NOT_SESSION',
  'FILE_HEADER_INVALID', 'FILE_HEADER_RETIRED_FIELDS', 'FORMAT_VERSION_NEWER', 'FORMAT_VERSION_OLDER'])

function headerRecord(bytes) {
  const end = bytes.indexOf(0x0a)
  try {
    return JSON.parse(bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8'))
  } catch {
    return undefined
  }
}

function loadFailure(error, file) {
  const message = error instanceof Error ? error.message : String(error)
  let code = codeOf(message)
  const location = locationOf(message)
  if (code !== undefined && HEADER_CODES.has(code)) {
    const header = headerRecord(file.plain)
    if (code === 'FILE_HEADER_NOT_SESSION' && isObject(header) && header.type === 'session') {
      code = 'FILE_HEADER_INVALID'
    }
    return { valid: false, error: dshError(error, { code, seq: null, line: file.assumed ? null : 1 }) }
  }
  if (code === 'FILE_COMMITTED_UNPARSABLE' || code === 'FILE_COMMITTED_SEQ_GAP') {
    return { valid: false, error: dshError(error, { code, seq: null,
      line: location.eventLine === undefined ? null : location.eventLine + 1 }) }
  }
  const { events, lines } = linesOf(file)
  let index = location.index
  if (index === undefined && location.seq !== undefined) index = location.seq
  if (code === 'ENVELOPE_INVALID') code = envelopeCode(events?.[index])
  if (code === 'JSON_NOT_LOSSLESS' && events?.[index] !== undefined) code = losslessCode(events[index])
  const seq = index === undefined ? null : (events?.[index] === undefined ? index : seqAt(events, index))
  const line = lines === undefined || index === undefined ? null : (lines[index] ?? null)
  return { valid: false, error: dshError(error, { code, seq, line }) }
}

/** DSH's load: {events} or a failed result. */
async function load(log, params, { stored = false } = {}) {
  const id = params.sessionId ?? 'session'
  const file = await fileOf(log, id)
  try {
    const loaded = await loadThroughDsh(file.bytes, { zstd: file.zstd, plain: file.plain,
      fallbackId: id, stored })
    return { events: loaded.events, stored: loaded.stored, file }
  } catch (error) {
    return { failed: loadFailure(error, file) }
  }
}

// -- operations --------------------------------------------------------------------------------

/**
 * The validator's report (SES-LVL-005) of a refusal: DSH stops at its first problem, so the
 * failing level is that problem's and the list holds it alone (the harness does not declare
 * session-log.problems).
 */
function report(result) {
  if (result.valid !== false) return result
  const error = result.error ?? {}
  const level = error.level ?? levelOf(error.code)
  return { valid: false, level: level ?? null, error, problems: [error] }
}

async function validate(log, params) {
  return report(await validateOnce(log, params))
}

async function validateOnce(log, params) {
  const level = params.level ?? 'load'
  const id = params.sessionId ?? 'session'
  if (level === 'load') {
    const loaded = await load(log, params)
    if (loaded.failed) return loaded.failed
    const { lines } = linesOf(loaded.file)
    return (await checkInvariants(loaded.events, lines)) ?? { valid: true, events: loaded.events.length }
  }
  const read = await eventsOf(log)
  if (read.failed) return read.failed
  const { events, lines } = read
  if (level === 'append') return checkAppend(events, lines, id) ?? { valid: true, events: events.length }
  // Session.create applies every check of Session.append too, in DSH's own order.
  const seed = checkSeed(events, lines, id)
  if (seed !== null || level === 'seed') return seed ?? { valid: true, events: events.length }
  return (await checkInvariants(events, lines)) ?? { valid: true, events: events.length }
}

function surfaceOf(events, id) {
  const session = Session.create(SessionId(id), events)
  const replacements = foldSurface(events).replacements
  const nodes = [...session.surface.nodes]
  const shadowed = replacements.flatMap(r => [...r.shadowedSeqs])
  return {
    valid: true,
    nodes,
    shadowed,
    messages: JSON.parse(JSON.stringify(session.deriveMessages())),
    logOnly: events.length - nodes.length - shadowed.length,
    replacements: replacements.map(r => ({ seq: r.seq, start: r.start, end: r.end,
      shadowedSeqs: [...r.shadowedSeqs] })),
    replaceGeneration: session.surface.replaceGeneration,
  }
}

async function fold(log, params) {
  const id = params.sessionId ?? 'session'
  const repair = params.repair ?? true
  let events
  let lines
  if (repair && LOAD_AVAILABLE) {
    const loaded = await load(log, params)
    if (loaded.failed) return loaded.failed
    events = loaded.events
  } else {
    const read = await eventsOf(log)
    if (read.failed) return read.failed
    events = read.events
    lines = read.lines
    if (repair) {
      const seed = checkSeed(events, lines, id)
      if (seed !== null) return seed
      events = [...events, ...interruptedTurnClosers(events)]
    }
  }
  try {
    return surfaceOf(events, id)
  } catch (error) {
    return failure(error, { events, lines })
  }
}

async function repair(log, params) {
  if ('events' in log || !LOAD_AVAILABLE) {
    const read = await eventsOf(log)
    if (read.failed) return read.failed
    try {
      return { valid: true, closers: JSON.parse(JSON.stringify(interruptedTurnClosers(read.events))) }
    } catch (error) {
      // DSH computed no closers: its refusal (a TypeError on a payload it did not expect
      // counts too), reported like every other DSH exception.
      return failure(error, { events: read.events, lines: read.lines })
    }
  }
  // A file: the closers DSH's load appends after what it read from the file.
  const loaded = await load(log, params, { stored: true })
  return loaded.failed ?? { valid: true, closers: loaded.events.slice(loaded.stored) }
}

async function loadOperation(log, params) {
  const loaded = await load(log, params)
  return loaded.failed ?? { valid: true, events: loaded.events }
}

export const OPERATIONS = {
  validate,
  fold,
  repair,
  load: loadOperation,
}
