// The `load` level through DSH's own persistence: a Cordis context with DSH's SessionStore
// and its JSONL backend (`@deepseek-ai/dsh-session-persistence-jsonl`), whose
// PersistenceCoordinator reads the file, refuses foreign versions, applies the committed
// region rule, migrates legacy shapes, refuses unknown required types and closes an
// interrupted turn. Needs Node 22 (node:zlib zstd, Promise.withResolvers).

import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

export const LOAD_AVAILABLE = Number(process.versions.node.split('.')[0]) >= 22
  && typeof Promise.withResolvers === 'function'

let modules
async function dsh() {
  modules ??= {
    cordis: await import('@deepseek-ai/cordis'),
    session: await import('@deepseek-ai/dsh-session'),
    jsonl: await import('@deepseek-ai/dsh-session-persistence-jsonl'),
  }
  return modules
}

/** The header line a list of events is loaded under when it has none (spec session/levels). */
export function assumedHeader(id) {
  return { type: 'session', version: 0, id, createdAt: 0, delegationDepth: 0 }
}

function headerOf(bytes) {
  const end = bytes.indexOf(0x0a)
  if (end === -1) return undefined
  try {
    const parsed = JSON.parse(bytes.subarray(0, end).toString('utf8'))
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * Load one session file through DSH. `bytes` is the file (plain JSONL or zstd frames),
 * `plain` its text (for the header's id and cwd, which decide where DSH looks for it);
 * resolves to {events, id, stored?} or rejects with DSH's error.
 */
export async function loadThroughDsh(bytes, { zstd, plain, fallbackId, stored = false }) {
  const { cordis, session, jsonl } = await dsh()
  const header = headerOf(plain)
  const id = typeof header?.id === 'string' && header.id !== '' ? header.id : fallbackId
  const cwd = typeof header?.cwd === 'string' ? header.cwd : undefined
  const root = await mkdtemp(join(tmpdir(), 'dshkit-dsh-'))
  const ctx = new cordis.Context()
  let fiber
  try {
    await ctx.plugin(session.default)
    fiber = await ctx.plugin(jsonl.default, { root, compression: zstd ? 'zstd' : 'none' })
    const meta = { version: 0, id: session.SessionId(id), createdAt: 0, delegationDepth: 0,
      ...(cwd === undefined ? {} : { cwd }) }
    const location = ctx.sessionPersistence.locate(meta)
    await mkdir(dirname(location.path), { recursive: true })
    await writeFile(location.path, bytes)
    // readFrom is DSH's raw stored view (no repair): what was stored before load closes a turn.
    const before = stored ? await ctx.sessionPersistence.readFrom(session.SessionId(id), 0) : undefined
    const loaded = await ctx.sessionPersistence.load(session.SessionId(id))
    return { events: JSON.parse(JSON.stringify(loaded.events)), id, stored: before?.events.length }
  } finally {
    if (fiber !== undefined) await fiber.dispose().catch(() => {})
    await rm(root, { recursive: true, force: true })
  }
}
