// Opening dsh-memento's provider the way its plugin assembles it (index.mjs `apply` and
// `MemoryService`), from a copy of its source outside this repository: the store
// (`openMemoryStore`), the protocol core (`MemoryProtocolCore`) and a gate that applies the
// write policies as the plugin's approval answerer does before asking the kit's approver.
// Only dsh-memento's exports are called; none of its code is reproduced here.

import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

// dsh-memento's documented defaults (README configuration table, index.mjs DEFAULT_BUDGETS).
const DEFAULT_BUDGETS = { user: { userGlobal: 2000, workspace: 2000 }, agent: { userGlobal: 4000, workspace: 4000 } }
// index.mjs Config defaults: proposals.maxPending (the snapshot section and auto-capture's
// "pending full" check) and proposals.maxChars (auto-capture's cut).
const MAX_PENDING_PROPOSALS = 8
const PROPOSAL_MAX_CHARS = 2000
// The cap of index.mjs `/memory proposals approve`, which looks the id up among this many
// pending proposals of the store.
const COMMAND_PENDING_LOOKUP = 1000

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
  return { m, store, core, config, approve }
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

// ---- Proposals (capability memory.proposals) ---------------------------------------------
// dsh-memento's proposal code is the store's `proposalUpsert`, `proposalList` and
// `proposalDecide` (lib/store.mjs), `visibleProposals` + `renderSnapshot` (lib/snapshot.mjs)
// and the core's `add` (lib/protocol.mjs); all are called unchanged. Plugin functions of
// index.mjs (which needs DSH's Cordis runtime, so it cannot be loaded) hold the rest, and the
// harness repeats their steps in the same order, no more: `handleSessionEvent` (auto-capture:
// the one place that proposes), the `/memory proposals approve|dismiss` command and its
// `makeCommandGate`. What they return is text or nothing; the harness only puts the values
// they hold into the kit's result shape, and adds no check, code or audit row dsh-memento does
// not have, with one exception, stated at `approveProposal`: the code of a refused approval.

// index.mjs `handleSessionEvent` on a successful `compaction/end`, with the kit's input in
// place of the captured summary: no session or no text is a silent return; 8 pending
// proposals in the store drop the new one; the text is cut at maxChars; the keys come from
// the session (the kit's explicit keys, when given, as the core's add takes them);
// `proposalUpsert` (null on a repeated (sessionId, kind)); then the plugin's `proposal` row.
// dsh-memento answers nothing either way, so the result is `{proposal: <inserted>, created:
// true}`, or `{proposal: null, created: false}` when nothing was inserted.
function propose(provider, input, write) {
  const { m, store } = provider
  const session = write?.agent?.session
  const notCreated = { proposal: null, created: false }
  if (session === undefined || session === null) return notCreated
  const text = input?.text
  if (typeof text !== 'string' || text.length === 0) return notCreated
  if (store.proposalList('pending', MAX_PENDING_PROPOSALS).length >= MAX_PENDING_PROPOSALS) return notCreated
  const truncated = text.length > PROPOSAL_MAX_CHARS ? text.slice(0, PROPOSAL_MAX_CHARS) : text
  const created = store.proposalUpsert({
    kind: input.kind,
    track: input.track,
    scope: input.scope,
    workspaceKey: input.workspaceKey ?? m.workspace.workspaceKeyOf(session.header?.cwd),
    agentKey: input.agentKey ?? m.workspace.agentKeyOf(session.header?.agentPreset),
    text: truncated,
    source: input.source,
    sessionId: typeof session.id === 'string' ? session.id : '',
  })
  if (created === null) return notCreated
  store.auditAppend({
    action: 'proposal', track: created.track, scope: created.scope, entryId: created.id,
    text: truncated, outcome: 'pending', source: created.source,
    sessionId: typeof session.id === 'string' ? session.id : null,
  })
  return { proposal: created, created: true }
}

// The store's listing, as `/memory proposals` and the panel route use it: by status (every
// status when absent) and limit, with no visibility filter (neither surface has one), so the
// write context is not used.
function listProposals(provider, filter) {
  const f = filter !== null && typeof filter === 'object' ? filter : {}
  return provider.store.proposalList(f.status, f.limit)
}

// index.mjs `makeCommandGate`: a session whose policy is `never` is refused; otherwise the
// question goes to DSH's approval (here the kit's approver). The write policies are not
// consulted: the person typed the command.
function commandGate(provider, write) {
  return async payload => {
    if (write?.agent?.session?.approvalPolicy === 'never') return 'rejected'
    return provider.approve(payload, write)
  }
}

// `/memory proposals approve <id>`: look the id up among the pending proposals; add the entry
// through the core with the command gate (source "proposal", the proposal's keys); then
// `proposalDecide(id, 'approved')`, whose PROPOSAL_NOT_FOUND the command swallows (the entry
// stays written). The command's refusal of an id that is not pending is a text with no error
// code; the harness reports it as the error dsh-memento's store raises for the same condition
// (ProposalNotFoundError, code PROPOSAL_NOT_FOUND, details {id}) and says so in the baseline.
async function approveProposal(provider, input, write) {
  const { m, store, core } = provider
  const id = input?.id
  const proposal = store.proposalList('pending', COMMAND_PENDING_LOOKUP).find(c => c.id === id) ?? null
  if (proposal === null) throw new m.errors.ProposalNotFoundError(id)
  const result = await core.add(
    { track: proposal.track, scope: proposal.scope, text: proposal.text, source: 'proposal',
      workspaceKey: proposal.workspaceKey, agentKey: proposal.agentKey },
    { agent: write?.agent, gate: commandGate(provider, write) },
  )
  let decided = null
  try {
    decided = store.proposalDecide(id, 'approved')
  } catch (error) {
    if (!(error instanceof m.errors.ProposalNotFoundError)) throw error
  }
  return { proposal: decided, entry: result.entry, usage: result.usage }
}

// `/memory proposals dismiss <id>`: `proposalDecide(id, 'dismissed')`, nothing else.
function dismissProposal(provider, input) {
  return { proposal: provider.store.proposalDecide(input?.id, 'dismissed') }
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
    case 'propose':
      return propose(provider, call.input, call.write)
    case 'proposals':
      return listProposals(provider, call.input)
    case 'approve_proposal':
      return approveProposal(provider, call.input, call.write)
    case 'dismiss_proposal':
      return dismissProposal(provider, call.input)
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
