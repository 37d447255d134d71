// The derived-view suites (session-reference, goal, session-query), wherever
// DSH 0.1.0-rc.8 exports a pure function for the operation. An operation without one answers
// `undefined`, which the harness reports as an explicit skip with the reason below.

import { createRequire } from 'node:module'

import { Context } from '@deepseek-ai/cordis'
import { Session, SessionId } from '@deepseek-ai/dsh-session'
import * as reference from '@deepseek-ai/dsh-session-reference'
import * as goal from '@deepseek-ai/dsh-goal'
import * as query from '@deepseek-ai/dsh-session-query'
import { goalCodeOf } from './errors.mjs'

// The installed release (the same lib serves every package set: harnesses/dsh, dsh-0.1.1).
const DSH_VERSION = createRequire(import.meta.url)('@deepseek-ai/dsh-session/package.json').version

const json = value => JSON.parse(JSON.stringify(value))

/** A DSH error with a stable `code` (SessionReferenceError, GoalError, SessionQueryError...). */
function refusal(error) {
  if (error === null || typeof error !== 'object' || typeof error.code !== 'string') throw error
  const out = { code: error.code, message: error.message, dsh: { name: error.name, message: error.message } }
  if (Number.isSafeInteger(error.seq)) out.seq = error.seq
  for (const key of ['seq', 'reason']) {
    const detail = error.detail?.[key] ?? error.details?.[key]
    if (detail !== undefined && out[key] === undefined) out[key] = detail
  }
  return { valid: false, error: out }
}

function guarded(run) {
  return (input, params) => {
    try {
      return run(input, params)
    } catch (error) {
      return refusal(error)
    }
  }
}

/** Abbreviated events get seq = their index and time 0, as the kit's suites number them. */
function numbered(events) {
  return events.map((event, index) => (event !== null && typeof event === 'object' && !('seq' in event)
    ? { seq: index, time: 0, ...event } : event))
}

// -- session-reference ---------------------------------------------------------------------

/** The resolver's constructor is where DSH validates its configuration. */
function referenceConfig(config) {
  const resolver = new reference.SessionReferenceResolver(new Context(), config)
  const resolved = resolver.config
  return { valid: true, maxReferences: resolved.maxReferences, candidateLimit: resolved.candidateLimit,
    maxReferenceBytes: resolved.maxReferenceBytes }
}

const REFERENCE = {
  'reference.uri.encode': d => ({ valid: true, uri: reference.encodeSessionReferenceUri(d.sessionId) }),
  'reference.uri.decode': d => ({ valid: true, sessionId: reference.decodeSessionReferenceUri(d.uri) }),
  'reference.uri.roundtrip': d => ({ valid: true,
    sessionId: reference.decodeSessionReferenceUri(reference.encodeSessionReferenceUri(d.sessionId)) }),
  'reference.mention.format': d => ({ valid: true, mention: reference.formatSessionReferenceMention(
    d.label === undefined ? { sessionId: d.sessionId } : { sessionId: d.sessionId, label: d.label }) }),
  'reference.text.parse': d => {
    const parsed = reference.parseSessionReferenceText(d.text)
    return { valid: true, text: parsed.text,
      references: parsed.references.map(r => ({ sessionId: r.sessionId, label: r.label })) }
  },
  'reference.config': d => referenceConfig(d.config),
}

// -- goal ----------------------------------------------------------------------------------

function goalState(folded) {
  const out = {}
  if (folded.goal !== undefined) out.goal = folded.goal
  out.roundsStarted = folded.roundsStarted
  if (folded.createdAt !== undefined) out.createdAt = folded.createdAt
  if (folded.updatedAt !== undefined) out.updatedAt = folded.updatedAt
  if (folded.lastRef !== undefined) out.lastRef = folded.lastRef
  return json(out)
}

/** A goal-fold refusal: DSH's plain Error mapped to a code, at the seq of the refused event. */
function goalRefusal(error, seq) {
  if (!(error instanceof Error) || error.code !== undefined) return refusal(error)
  const code = goalCodeOf(error.message) ?? 'DSH_UNMAPPED'
  const out = { code, message: error.message, dsh: { name: error.name, message: error.message } }
  if (seq !== undefined) out.seq = seq
  return { valid: false, error: out }
}

function foldsCleanly(events) {
  try {
    goal.foldGoal(events)
    return true
  } catch {
    return false
  }
}

function goalFold(d) {
  const events = numbered(d.events)
  try {
    return { valid: true, state: goalState(goal.foldGoal(events)) }
  } catch (error) {
    // foldGoal names the event only in some messages; bisect the prefixes for its seq.
    let good = 0
    let bad = events.length
    while (bad - good > 1) {
      const middle = Math.floor((good + bad) / 2)
      if (foldsCleanly(events.slice(0, middle))) good = middle
      else bad = middle
    }
    return goalRefusal(error, events[bad - 1]?.seq)
  }
}

function goalDecode(d) {
  try {
    const change = goal.decodeGoalChange(d.data)
    return { valid: true, change: change === undefined ? null : json(change) }
  } catch (error) {
    return goalRefusal(error)
  }
}

const GOAL = { 'goal.fold': goalFold, 'goal.decode': goalDecode }

// -- session-query -------------------------------------------------------------------------

const QUERY = {
  'query.classify': d => {
    const records = query.buildSessionEventRecords(SessionId('s'), d.events)
    const bySeq = new Map(records.map(r => [r.seq ?? r.event?.seq, r.surface]))
    return { valid: true, surfaces: d.events.map(e => bySeq.get(e.seq)) }
  },
  'query.documents': d => ({ valid: true, documents: query.buildSessionEventSearchDocuments(
    SessionId(d.sessionId ?? 's'), d.events).map(doc => [doc.seq, doc.text, doc.surface]) }),
  'query.extract': d => ({ valid: true, text: query.extractSessionEventText(d.event) }),
  'query.filter-sessions': d => ({ valid: true,
    ids: query.filterSessionResults(d.records, d.filters).map(r => r.header.id) }),
  'query.filter-events': d => ({ valid: true,
    seqs: query.filterSessionEventDocuments(d.documents, d.filters).map(doc => doc.seq) }),
  'query.text-filter': d => {
    const matcher = query.compileSessionTextFilter(d.text)
    return { valid: true, source: matcher.source, flags: matcher.flags,
      matches: d.subjects.map(subject => { matcher.lastIndex = 0; return matcher.test(subject) }) }
  },
}

// -- the suites ----------------------------------------------------------------------------

function suite(capability, operations) {
  const table = Object.fromEntries(Object.entries(operations).map(([op, run]) => [op, guarded(run)]))
  return {
    capabilities: [capability],
    run: (operation, input, params) => table[operation]?.(input, params),
  }
}

export const SUITES = {
  'session-reference': suite('session-reference', REFERENCE),
  goal: suite('goal', GOAL),
  'session-query': suite('session-query', QUERY),
}

const NOT_EXPORTED = {
  'session-reference': 'the projection, retention, normalisation and candidate steps are private to '
    + 'SessionReferenceResolver (which needs an agent and a session-query service)',
  goal: 'GoalService needs a Cordis agent context with session persistence and projection services',
  'session-query': 'only the extraction, classification and filter functions are exported; the log '
    + 'source, engine settings, index files, search provider, cursors, requests, reads and tools live in '
    + 'SessionQueryEngine and the SQLite provider (@deepseek-ai/dsh-session-query-sqlite, a Cordis plugin '
    + 'over session persistence), which the kit does not pin',
  'session-ops': 'the seed boundary and the open compaction bracket are read inside BasicCompactionEngine '
    + 'and the compaction invariant companion, not by an exported function',
  compaction: 'region selection, estimates, configuration, brackets, the pruner and the planner are '
    + 'private to the compaction engines (CompactionEngine, BasicCompactionEngine need an agent)',
}

export function skipReason(suiteName, operation) {
  const why = NOT_EXPORTED[suiteName] ?? 'no exported function'
  return `DSH ${DSH_VERSION} exports no pure function for ${operation}: ${why}`
}
