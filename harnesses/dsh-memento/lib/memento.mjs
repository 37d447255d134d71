// Opening dsh-memento's provider the way its plugin assembles it (index.mjs `apply` and
// `MemoryService`), from a copy of its source outside this repository: the store
// (`openMemoryStore`), the protocol core (`MemoryProtocolCore`) and a gate that applies the
// write policies as the plugin's approval answerer does before asking the kit's approver.
// Only dsh-memento's exports are called; none of its code is reproduced here.

import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

// dsh-memento's documented defaults (README configuration table, index.mjs DEFAULT_BUDGETS).
const DEFAULT_BUDGETS = { user: { userGlobal: 2000, workspace: 2000 }, agent: { userGlobal: 4000, workspace: 4000 } }
// index.mjs Config: proposals.maxPending default, used by the snapshot section.
const MAX_PENDING_PROPOSALS = 8

export async function loadMemento(dir) {
  const load = name => import(pathToFileURL(join(dir, 'lib', name)).href)
  const [protocol, store, budget, gate, errors, snapshot, workspace, constants] = await Promise.all([
    load('protocol.mjs'), load('store.mjs'), load('budget.mjs'), load('gate.mjs'),
    load('errors.mjs'), load('snapshot.mjs'), load('workspace.mjs'), load('constants.mjs'),
  ])
  return { protocol, store, budget, gate, errors, snapshot, workspace, constants }
}

// The plugin refuses a bad configuration when it is applied (index.mjs `apply`): the same
// checks, in the kit's option order (budgets, writePolicy, writePolicies).
function configure(m, options) {
  const budgets = options.budgets === undefined || options.budgets === null
    ? DEFAULT_BUDGETS : options.budgets
  const checked = m.budget.validateBudgets(budgets)
  if (!checked.ok) throw new m.errors.InvalidInputError(`dsh-memento config: ${checked.message}`)
  const writePolicy = m.gate.normalizeWritePolicy(options.writePolicy ?? 'ask')
  const writePolicies = m.gate.validateWritePolicies(options.writePolicies ?? {})
  return { budgets, writePolicy, writePolicies }
}

// The gate of MemoryService (`askApproval`) behind the plugin's answerer: a session whose
// approval policy is `never` is refused before any answerer (the DSH approval service; the
// plugin's command gate checks it the same way), then `auto`/`off` answer for the user and
// `ask` goes to the approver; an approver that throws is an `unavailable` denial.
function makeGate(m, config, approve) {
  return async (payload, write) => {
    if (write?.agent?.session?.approvalPolicy === 'never') return 'rejected'
    const policy = m.gate.resolveWritePolicy(config.writePolicies, config.writePolicy,
      payload.track, payload.scope, payload.source)
    try {
      return await m.gate.applyWritePolicy(policy, payload, () => approve(payload, write))
    } catch (error) {
      if (error instanceof m.errors.MemoryError) throw error
      const message = error instanceof Error ? error.message : String(error)
      throw new m.errors.WriteDeniedError('unavailable', `approval ask failed: ${message}`)
    }
  }
}

export function openProvider(m, path, options, approve) {
  const config = configure(m, options)
  const retentionDays = options.auditRetentionDays ?? 0
  const store = m.store.openMemoryStore(path, { retentionDays })
  const core = new m.protocol.MemoryProtocolCore({
    store, budgets: config.budgets, writePolicy: config.writePolicy,
    gate: makeGate(m, config, approve),
  })
  return { m, store, core, config }
}

// The frozen snapshot as the plugin's system-prompt section renders it for a session.
function snapshot(provider, write) {
  const { m, store, config } = provider
  const session = write?.agent?.session
  if (session === undefined || session === null) return ''
  const workspaceKey = m.workspace.workspaceKeyOf(session.header?.cwd)
  const agentKey = m.workspace.agentKeyOf(session.header?.agentPreset)
  const entries = m.snapshot.visibleEntries(store.listEntries(), workspaceKey, agentKey)
  const proposals = m.snapshot.visibleProposals(
    store.proposalList('pending', MAX_PENDING_PROPOSALS), workspaceKey, agentKey)
  const text = m.snapshot.renderSnapshot(entries, config.budgets, proposals, 'en')
  store.auditAppend({
    action: 'snapshot', track: null, scope: null, entryId: null, text, outcome: 'ok',
    source: m.constants.DEFAULT_SOURCE, sessionId: session.id ?? null,
  })
  return text
}

// The kit's query options: a reader is the in-session memory tool (agent filter from the
// reader's preset), a recall also records the reader's session (the `recalled` audit row).
function queryOptions(m, opts) {
  if (opts === undefined || opts === null || typeof opts !== 'object') return opts
  const session = opts.reader?.agent?.session
  const mapped = {}
  if (session !== undefined && session !== null) {
    mapped.agentKey = m.workspace.agentKeyOf(session.header?.agentPreset)
    if (opts.recall === true) mapped.sessionId = session.id
  }
  return mapped
}

export const UNSUPPORTED_OPS = {
  export: 'dsh-memento 0.4.4 has no export on its provider: the envelope is assembled by the /memory export command inside the plugin',
  import_envelope: 'dsh-memento 0.4.4 has no import on its provider: /memory import parses the document inside the plugin and seeds the entries',
}

// One call of the kit's JSON call form (spec/memory/provider.md) on a provider.
export async function dispatch(provider, call) {
  const { m, store, core } = provider
  const op = call.op
  switch (op) {
    case 'add': case 'replace': case 'remove': case 'consolidate': case 'seed':
      return core[op](call.input, call.write)
    case 'query':
      return 'opts' in call ? core.query(call.input, queryOptions(m, call.opts))
        : 'input' in call ? core.query(call.input) : core.query()
    case 'audit_list':
      return call.input && typeof call.input === 'object' && 'limit' in call.input
        ? store.auditList(call.input.limit) : store.auditList()
    case 'snapshot':
      return snapshot(provider, call.write)
    case 'budgets':
      return core.budgets()
    case 'list_entries':
      return store.listEntries()
    case 'close':
      store.close()
      return null
    default:
      throw new Error(UNSUPPORTED_OPS[op] ?? `unknown memory call op ${JSON.stringify(op)}`)
  }
}

export function isProtocolError(m, error) {
  return error instanceof m.errors.MemoryError
}

export function errorObject(error) {
  return { code: error.code, message: error.message, details: error.details ?? {} }
}
