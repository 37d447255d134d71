import { levelOf, requirementOf } from './codes.mjs'

// DSH reports plain Error messages without codes; this table turns each message the kit
// cares about into the dshkit error code of spec/session/errors.md ("From DSH messages to
// codes") and spec/session/invariants.md ("DSH messages"). The original message is always
// kept in the result (error.message and error.dsh) so that the report shows what DSH said.

/** One row: a pattern over DSH's message, the dshkit code, and how to read seq / line. */
const TABLE = [
  // -- surface fold (foldSurface, Session.append, "invalid seed event at index N: ...") --
  [/^session event seq (\d+) is not contiguous; expected \d+/, 'SEQ_NOT_CONTIGUOUS'],
  [/is not surface-eligible and cannot carry (surfaceOp|sourceEventSeqs)$/, 'SURFACE_NOT_ELIGIBLE'],
  [/is surface-eligible and requires a surfaceOp marker$/, 'SURFACE_OP_MISSING'],
  [/carries an invalid replace surfaceOp$/, 'SURFACE_REPLACE_INVALID'],
  [/carries an invalid surfaceOp$/, 'SURFACE_OP_INVALID'],
  [/^surface replace: start seq \S+ not found in surface/, 'SURFACE_REPLACE_START_NOT_FOUND'],
  [/^surface replace: end seq \S+ not found in surface/, 'SURFACE_REPLACE_END_NOT_FOUND'],
  [/^surface replace: start seq \S+ \(index \d+\) is after end seq/, 'SURFACE_REPLACE_REVERSED'],
  [/^surface replace: sourceEventSeqs must include every shadowed/, 'PROVENANCE_MISSING_SHADOWED'],
  [/^sourceEventSeqs on event at seq .* must be an array when present/, 'PROVENANCE_NOT_ARRAY'],
  [/^sourceEventSeqs must not be empty except on assistant\/message/, 'PROVENANCE_EMPTY'],
  [/sourceEventSeqs must densely contain non-negative safe integers$/, 'PROVENANCE_ELEMENT'],
  [/^sourceEventSeqs must not contain duplicates/, 'PROVENANCE_DUPLICATE'],
  [/^sourceEventSeqs must reference earlier events/, 'PROVENANCE_NOT_EARLIER'],
  [/^tool\/result surface replacement must rewrite exactly one current node/, 'TOOL_REWRITE_SPAN'],
  [/^tool\/result surface replacement must target a current tool\/result/, 'TOOL_REWRITE_TARGET'],
  [/^tool\/result surface replacement may change only content/, 'TOOL_REWRITE_CHANGED'],
  // -- lossless JSON, retired request headers (append and seed) --
  [/carries non-JSON-serializable (data|surface metadata)$/, 'JSON_NOT_LOSSLESS'],
  [/^seed event at index \d+ is not losslessly JSON-serializable/, 'JSON_NOT_LOSSLESS'],
  [/uses unsupported legacy request\/header-delta format$/, 'LEGACY_REQUEST_HEADER_DELTA'],
  [/uses unsupported legacy request\/header reason "fallback"$/, 'LEGACY_REQUEST_HEADER_FALLBACK'],
  // -- seed envelope and shapes (ENVELOPE_INVALID is a placeholder: envelopeCode() names the member) --
  [/^seed event at index \d+ has an invalid event envelope/, 'ENVELOPE_INVALID'],
  [/^seed event at index \d+ has seq .* seed must be contiguous from 0/, 'SEQ_NOT_CONTIGUOUS'],
  [/ lacks an identified message$/, 'MESSAGE_UNIDENTIFIED'],
  [/ message must have role "/, 'MESSAGE_ROLE'],
  [/ message has invalid source$/, 'MESSAGE_SOURCE'],
  [/ message has invalid content$/, 'MESSAGE_CONTENT'],
  [/ message must have model source$/, 'MESSAGE_MODEL_SOURCE'],
  [/ message must have tool source$/, 'MESSAGE_TOOL_SOURCE'],
  [/ message must contain one tool-result block$/, 'MESSAGE_TOOL_RESULT_BLOCK'],
  [/ message has mismatched tool call ids$/, 'MESSAGE_TOOL_CALL_ID_MISMATCH'],
  [/request\/header at index \d+ lacks provider\/model$/, 'REQUEST_HEADER_CONFIG'],
  [/request\/header at index \d+ has an invalid reasoningEffort$/, 'REQUEST_HEADER_REASONING_EFFORT'],
  [/request\/header at index \d+ has invalid adapterDefaults$/, 'REQUEST_HEADER_ADAPTER_DEFAULTS'],
  // -- enclosure invariants (after the InvariantError prefix) --
  [/^turn\/start \S+ while turn \S+ is still open/, 'INVARIANT_TURN_ALREADY_OPEN'],
  [/^turn\/start expected turn /, 'INVARIANT_TURN_NUMBER'],
  [/^turn\/end \S+ does not match open turn/, 'INVARIANT_TURN_END_MISMATCH'],
  [/^turn\/end \S+ while step \S+ is still open/, 'INVARIANT_STEP_STILL_OPEN'],
  [/^step\/start in turn \S+ but open turn is/, 'INVARIANT_STEP_TURN_MISMATCH'],
  [/^step\/start \S+ while step \S+ is still open/, 'INVARIANT_STEP_ALREADY_OPEN'],
  [/^step\/start expected step /, 'INVARIANT_STEP_NUMBER'],
  [/ names turn \S+\/step \S+ but open is turn/, 'INVARIANT_STEP_SCOPE'],
  [/^tool\/result for .* with no prior tool\/call in this step/, 'INVARIANT_TOOL_RESULT_UNPAIRED'],
  [/^tool\/result surface replacement appended outside any open turn/, 'INVARIANT_REPLACE_OUTSIDE_TURN'],
  [/appended outside any open turn \(core execution events must be turn-enclosed\)/, 'INVARIANT_OUTSIDE_TURN'],
  [/^seq must strictly increase/, 'SEQ_NOT_CONTIGUOUS'],
  // -- the persistence load (coordinator and JSONL backend) --
  [/^empty or header-less session log/, 'FILE_HEADER_MISSING'],
  [/^corrupt session log: header line is not valid JSON/, 'FILE_HEADER_NOT_JSON'],
  [/^corrupt session log: first line is not a session header/, 'FILE_HEADER_NOT_SESSION'],
  [/^session header uses retired policy baseline fields/, 'FILE_HEADER_RETIRED_FIELDS'],
  [/^session header /, 'FILE_HEADER_INVALID'],
  [/^corrupt session log "[^"]*": (?:requested id .* does not match header id|header id .* identify)/,
    'FILE_HEADER_INVALID'],
  [/uses log format v-?\d+, but this harness reads only v/, 'FORMAT_VERSION_NEWER'],
  [/uses log format v-?\d+, older than the supported v/, 'FORMAT_VERSION_OLDER'],
  [/^malformed \S+ storage row: /, 'CHUNK_ROW_MALFORMED'],
  [/^corrupt session log: unparsable committed event at line \d+/, 'FILE_COMMITTED_UNPARSABLE'],
  [/^corrupt session log: seq gap in committed region at line \d+/, 'FILE_COMMITTED_SEQ_GAP'],
  [/^corrupt Zstandard session log: complete frame contains a torn JSONL record/, 'ZSTD_FRAME_MID_RECORD'],
  [/^corrupt Zstandard session log: /, 'ZSTD_CORRUPT'],
  [/contains unsupported legacy request\/header-delta event at seq \d+/, 'LEGACY_REQUEST_HEADER_DELTA'],
  [/contains unsupported legacy mode\/set event at seq \d+/, 'LEGACY_MODE_SET'],
  [/contains unsupported legacy request\/header reason "fallback" at seq \d+/, 'LEGACY_REQUEST_HEADER_FALLBACK'],
  [/contains malformed pre-react-loop turn\/start at seq \d+/, 'LEGACY_TURN_START_MALFORMED'],
  [/contains malformed pre-react-loop turn\/end at seq \d+/, 'LEGACY_TURN_END_MALFORMED'],
  [/contains malformed pre-react-loop steering\/message at seq \d+/, 'LEGACY_STEERING_MALFORMED'],
  [/contains event type .* \(seq \d+\) unknown to this harness and not marked ignorable/, 'UNKNOWN_EVENT_TYPE'],
]

export const TABLE_SIZE = TABLE.length

const INVARIANT_PREFIX = /^invariant violated by "[^"]*": /
const STORED_PREFIX = /^stored session "(?:[^"\\]|\\.)*" failed validation: (?:Error: )?/

/** The message without DSH's wrappers (stored-session and invariant prefixes). */
export function innerMessage(message) {
  let text = message
  for (;;) {
    const stripped = text.replace(STORED_PREFIX, '').replace(INVARIANT_PREFIX, '')
    if (stripped === text) return text
    text = stripped
  }
}

/** The dshkit code for one DSH message, or undefined when the table has no row for it. */
export function codeOf(message) {
  const text = innerMessage(message)
  const seedSurface = /^invalid seed event at index \d+: (.*)$/s.exec(text)
  const subject = seedSurface ? seedSurface[1] : text
  for (const [pattern, code] of TABLE) {
    if (pattern.test(subject)) return code
  }
  return undefined
}

/** Where DSH says the problem is: an event index, a seq, or a 1-based event line. */
export function locationOf(message) {
  const text = innerMessage(message)
  const index = /(?:^|\s)(?:seed event|seed \S+) at index (\d+)/.exec(text)
    ?? /^invalid seed event at index (\d+)/.exec(text)
  const seq = /\(seq (\d+)\)/.exec(text) ?? / at seq (\d+)\b/.exec(text)
  const line = / at line (\d+)\b/.exec(text)
  return {
    index: index ? Number(index[1]) : undefined,
    seq: seq ? Number(seq[1]) : undefined,
    eventLine: line ? Number(line[1]) : undefined,
  }
}

const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs', 'ignorable'])

const safeNonNegative = value => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

/**
 * DSH's single "invalid event envelope" message covers six dshkit codes. The harness names
 * the member, checking the event in DSH's own order (unknown keys first, then type, seq,
 * time, data, ignorable): a refinement of DSH's verdict, never a new verdict.
 */
export function envelopeCode(event) {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return 'ENVELOPE_NOT_OBJECT'
  if (Object.keys(event).some(key => !ENVELOPE_KEYS.has(key))) return 'ENVELOPE_UNKNOWN_KEY'
  if (typeof event.type !== 'string') return 'ENVELOPE_TYPE'
  if (!safeNonNegative(event.seq)) return 'ENVELOPE_SEQ'
  if (typeof event.time !== 'number' || !Number.isSafeInteger(event.time)) return 'ENVELOPE_TIME'
  if (event.data === undefined) return 'ENVELOPE_DATA_MISSING'
  return 'ENVELOPE_IGNORABLE'
}

/**
 * DSH's "not losslessly JSON-serializable" covers three dshkit codes; the harness names the
 * kind of value DSH refused (negative zero, a non-finite number, anything else).
 */
export function losslessCode(value) {
  const stack = [value]
  const seen = new Set()
  while (stack.length > 0) {
    const current = stack.pop()
    if (typeof current === 'number') {
      if (Object.is(current, -0)) return 'JSON_NEGATIVE_ZERO'
      if (!Number.isFinite(current)) return 'JSON_NON_FINITE'
    } else if (current !== null && typeof current === 'object' && !seen.has(current)) {
      seen.add(current)
      for (const key of Object.keys(current)) stack.push(current[key])
    }
  }
  return 'JSON_NOT_LOSSLESS'
}

/** The seq a problem is reported at: the event's own seq when well formed, else its index. */
export function seqAt(events, index) {
  if (index === undefined) return null
  const event = events[index]
  if (event !== null && typeof event === 'object' && safeNonNegative(event.seq)) return event.seq
  return index
}

/**
 * A dshkit error object built from a DSH exception. The requirement and the failing level
 * follow from the code (the specification's error table); DSH names no member of the event,
 * so the problem has no pointer.
 */
export function dshError(error, fields = {}) {
  const message = error instanceof Error ? error.message : String(error)
  const name = error instanceof Error ? error.name : typeof error
  const code = fields.code ?? codeOf(message) ?? 'DSH_UNMAPPED'
  const found = {
    code,
    seq: fields.seq ?? null,
    line: fields.line ?? null,
    message,
    dsh: { name, message },
  }
  const requirement = requirementOf(code)
  const level = levelOf(code)
  if (requirement !== null) found.requirement = requirement
  if (level !== null) found.level = level
  return found
}

// -- goal (dsh-goal's fold raises plain Errors; spec/goal/errors.md) --------------------------

const GOAL_TABLE = [
  [/^unsupported goal change version /, 'GOAL_CHANGE_VERSION'],
  [/^goal change operation is invalid/, 'GOAL_CHANGE_OPERATION'],
  [/^goal change at session event \d+ has an invalid kind/, 'GOAL_CHANGE_KIND'],
  [/^goal change updatedAt cannot precede createdAt/, 'GOAL_CHANGE_TIMESTAMPS'],
  [/must have exactly .* fields$/, 'GOAL_CHANGE_KEYS'],
  [/^goal (?:change|clear tombstone) /, 'GOAL_CHANGE_VALUE'],
  [/^goal message source is invalid/, 'GOAL_ROUND_SOURCE_INVALID'],
  [/^goal round at session event \d+ is not the next admitted round/, 'GOAL_ROUND_NOT_ADMITTED'],
  [/^goal create requires a fresh active revision-one goal/, 'GOAL_CREATE_REFUSED'],
  [/^goal \S+ requires a current goal/, 'GOAL_NOT_FOUND'],
  [/^goal \S+ must advance the current goal by one revision/, 'GOAL_REVISION_MISMATCH'],
  [/^goal \S+ does not preserve the current counters and timestamps/, 'GOAL_COUNTERS_CHANGED'],
  [/^goal edit cannot change phase or blocked reason/, 'GOAL_EDIT_PHASE_CHANGED'],
  [/^goal \S+ cannot change objective or maxGoalRounds/, 'GOAL_DEFINITION_CHANGED'],
  [/^goal \S+ has an invalid phase transition/, 'GOAL_INVALID_TRANSITION'],
  [/^goal clear timestamp cannot precede/, 'GOAL_CLEAR_TIMESTAMP'],
]

export const GOAL_TABLE_SIZE = GOAL_TABLE.length

/** The dshkit goal code for one message of DSH's goal fold, or undefined. */
export function goalCodeOf(message) {
  for (const [pattern, code] of GOAL_TABLE) {
    if (pattern.test(message)) return code
  }
  return undefined
}
