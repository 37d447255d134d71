// Suite `session-ops` where DSH 0.1.0-rc.8 exports what an operation needs:
//
// - `session.offer` (capability `session-ops.append`): a detached `Session.create(id)` takes
//   the log's events through `Session.append`, then each offered event; an offer DSH refuses
//   throws before its log changes, so the next offer sees the session as it was. The offered
//   seq is DSH's to check only through its pure `foldSurface` (`Session.append` numbers events
//   itself), as at the `append` level of the session-log suite.
// - `session.request-header` (capability `session-ops.fold`): `foldRequestHeader(events,
//   initial)` over the log (or its prefix through `through`), after DSH's `foldSurface` has
//   accepted the log.
//
// `session.seed-boundary` has no exported function (the seed boundary and the open bracket
// are read inside BasicCompactionEngine and the compaction invariant companion) and answers
// `undefined`, an explicit skip. `session.typed`, `session.write` and `session.repair-file`
// belong to capabilities the harness does not declare.

import { Session, SessionId, foldRequestHeader, foldSurface } from '@deepseek-ai/dsh-session'
import { codeOf, dshError, envelopeCode, losslessCode } from './errors.mjs'

export const CAPABILITIES = ['session-ops.fold', 'session-ops.append']

const isObject = value => value !== null && typeof value === 'object' && !Array.isArray(value)
const json = value => JSON.parse(JSON.stringify(value))

/** The dshkit code of one refused event (DSH's message mapped, the member named). */
function codeFor(error, event) {
  const message = error instanceof Error ? error.message : String(error)
  let code = codeOf(message)
  if (code === 'ENVELOPE_INVALID') code = envelopeCode(event)
  if (code === 'JSON_NOT_LOSSLESS') code = losslessCode(event)
  return code ?? 'DSH_UNMAPPED'
}

/**
 * Offer one event to a live session: `accepted` are the events the session holds, in the
 * caller's form. Returns null when DSH appends it, else DSH's error.
 */
function offer(session, accepted, event) {
  if (!isObject(event)) return new Error('offered event is not an object')
  const options = {}
  if (event.surfaceOp !== undefined) options.surfaceOp = event.surfaceOp
  if (event.sourceEventSeqs !== undefined) options.sourceEventSeqs = event.sourceEventSeqs
  try {
    if (event.seq !== accepted.length) foldSurface([...accepted, event])
    session.append(event.type, event.data, options)
  } catch (error) {
    return error
  }
  accepted.push(event)
  return null
}

function sessionOffer(input, params) {
  const session = Session.create(SessionId('dshkit-offer'))
  const accepted = []
  for (const event of input.events) {
    const error = offer(session, accepted, event)
    if (error !== null) {
      const seq = isObject(event) && Number.isSafeInteger(event.seq) ? event.seq : accepted.length
      return { valid: false, error: dshError(error, { code: codeFor(error, event), seq }) }
    }
  }
  const offers = (params.offers ?? []).map(event => {
    const error = offer(session, accepted, event)
    return error === null ? null : { code: codeFor(error, event) }
  })
  return { valid: true, offers, nodes: [...session.surface.nodes],
    replaceGeneration: session.surface.replaceGeneration }
}

function requestHeader(input, params) {
  let events = input.events
  if (params.through !== undefined) {
    events = events.filter(e => isObject(e) && (e.seq ?? 0) <= params.through)
  }
  try {
    foldSurface(events)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const seq = /seq (\d+)/.exec(message)
    return { valid: false, error: dshError(error, { seq: seq ? Number(seq[1]) : null }) }
  }
  const header = foldRequestHeader(events, params.initial)
  return { valid: true, header: header === undefined ? null : json(header) }
}

export const OPERATIONS = {
  'session.offer': sessionOffer,
  'session.request-header': requestHeader,
}
