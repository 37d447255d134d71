// One memory case (operation memory.calls) against dsh-memento: the steps of the kit's program
// run in order on a fresh store directory, every gate call goes to the kit's approver, and
// concurrent calls of the approver run on a second handle of the same store.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, normalize, sep } from 'node:path'

import { beginCase, endCase } from './determinism.mjs'
import { UNSUPPORTED_OPS, dispatch, errorObject, isProtocolError, openProvider } from './memento.mjs'

export const CAPABILITIES = ['memory.protocol', 'memory.proposals']

function scratchRoot() {
  return process.env.DSHKIT_KIT_TMPDIR || tmpdir()
}

function storePath(dir, relative) {
  const name = relative ?? 'memory.db'
  const path = normalize(String(name))
  if (isAbsolute(path) || path.split(sep).includes('..')) {
    throw new Error(`store path ${JSON.stringify(name)} must stay inside the case directory`)
  }
  return join(dir, path)
}

// Which op of the case the provider does not offer, if any (the case is then skipped).
function unsupported(steps) {
  for (const step of steps) {
    const op = step?.call?.op
    if (op in UNSUPPORTED_OPS) return UNSUPPORTED_OPS[op]
  }
  return null
}

class ProtocolCrash extends Error {}

export async function runCase(m, kase, approver) {
  if (kase.suite !== 'memory' || kase.operation !== 'memory.calls') {
    return { skipped: true, message: `dsh-memento harness runs only memory.calls, not ${kase.operation}` }
  }
  const steps = kase.input?.steps
  if (!Array.isArray(steps)) {
    return { result: { valid: false, error: { code: 'CASE_INVALID', message: 'input.steps must be an array' } } }
  }
  const reason = unsupported(steps)
  if (reason) return { skipped: true, message: reason }

  const dir = mkdtempSync(join(scratchRoot(), 'dshkit-memento-'))
  const determinism = beginCase(kase.params)
  const state = { primary: null, secondary: null, path: null, options: null, step: 0 }
  // Closing a handle swallows failures, as the kit's own driver does.
  const closeAll = () => {
    for (const handle of [state.secondary, state.primary]) {
      try { handle?.store.close() } catch { /* already closed */ }
    }
    state.primary = state.secondary = null
  }
  const respond = async action => {
    try {
      return { ok: true, result: JSON.parse(JSON.stringify((await action()) ?? null)) }
    } catch (error) {
      if (error instanceof ProtocolCrash) throw error
      if (isProtocolError(m, error)) return { ok: false, error: errorObject(error) }
      throw new ProtocolCrash(error instanceof Error ? (error.stack ?? error.message) : String(error))
    }
  }
  const concurrent = async call => {
    if (state.secondary === null) {
      state.secondary = openProvider(m, state.path, state.options, async () => 'allowed-once')
    }
    return respond(() => dispatch(state.secondary, call))
  }
  const approve = (payload, write) => approver(state.step, payload, write, concurrent)

  const responses = []
  try {
    for (const [index, step] of steps.entries()) {
      state.step = index
      determinism.clock.enter(step)
      if (step !== null && typeof step === 'object' && 'open' in step) {
        responses.push(await respond(() => {
          closeAll()
          state.path = storePath(dir, step.path)
          state.options = step.open ?? {}
          state.primary = openProvider(m, state.path, state.options, approve)
          return null
        }))
      } else if (step !== null && typeof step === 'object' && 'call' in step) {
        if (state.primary === null) throw new ProtocolCrash(`step ${index}: a call with no open provider`)
        responses.push(await respond(() => dispatch(state.primary, step.call)))
        if (step.call.op === 'close') state.primary = null
      } else {
        return { skipped: true, message: 'store steps (prepare, inspect, defaultPath) are not declared (capability memory.store)' }
      }
    }
    return { result: { valid: true, steps: responses } }
  } catch (error) {
    if (error instanceof ProtocolCrash) return { errored: true, context: { message: error.message } }
    throw error
  } finally {
    closeAll()
    endCase()
    rmSync(dir, { recursive: true, force: true })
  }
}
