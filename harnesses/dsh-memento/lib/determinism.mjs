// The kit fixes each case's clock and id source (params.clock, params.ids; see
// conformance/memory_driver.py). dsh-memento reads `Date.now()` and `randomUUID` of
// `node:crypto` directly, so the harness puts a switchable source behind both: the case's
// while a case runs, the real ones otherwise.

import crypto from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'

const realNow = Date.now.bind(Date)
const realUUID = crypto.randomUUID.bind(crypto)
let active = null

Date.now = () => (active ? active.clock.read() : realNow())
crypto.randomUUID = options => (active ? active.ids.next() : realUUID(options))
syncBuiltinESMExports()

const DEFAULT_CLOCK = { start: 1_700_000_000_000, step: 1000 }
const DEFAULT_IDS = { prefix: '00000000-0000-4000-8000-', start: 1 }

class CaseClock {
  constructor(spec) {
    const s = spec ?? DEFAULT_CLOCK
    this.now = Number(s.start ?? DEFAULT_CLOCK.start) || 0
    this.step = Number(s.step ?? 0)
    this.tick = Number(s.tick ?? 0)
    this.started = false
  }

  enter(step) {
    if (step !== null && typeof step === 'object' && 'at' in step) this.now = Number(step.at)
    else if (this.started && !this.tick) this.now += this.step
    this.started = true
  }

  read() {
    if (!this.tick) return this.now
    const value = this.now
    this.now += this.tick
    return value
  }
}

class CaseIds {
  constructor(spec) {
    const s = spec ?? DEFAULT_IDS
    this.prefix = String(s.prefix ?? DEFAULT_IDS.prefix)
    this.counter = Number(s.start ?? DEFAULT_IDS.start) || 0
  }

  next() {
    const value = this.prefix + this.counter.toString(16).padStart(12, '0')
    this.counter += 1
    return value
  }
}

export function beginCase(params) {
  active = { clock: new CaseClock(params?.clock), ids: new CaseIds(params?.ids) }
  return active
}

export function endCase() {
  active = null
}
