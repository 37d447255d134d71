// Reading a log given as file text or bytes, for the levels below `load`.
//
// DSH has no reader below its persistence load, so the harness reads a file the way DSH's
// JSONL backend reads its lines: split on line feeds, a final fragment without a line feed
// is not a record, each line is decoded as UTF-8 and parsed with JSON.parse, and storage
// records are expanded with DSH's own `decodeStorageRecord` (packed chunk rows). A first
// record that is a session header ({"type":"session"}) is set aside.

import * as zlib from 'node:zlib'
import { decodeStorageRecord } from '@deepseek-ai/dsh-session'

export const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])

/** The bytes of a log input: {text} as UTF-8, {base64} decoded. */
export function inputBytes(log) {
  if ('base64' in log) return Buffer.from(String(log.base64), 'base64')
  return Buffer.from(String(log.text), 'utf8')
}

export function isZstd(bytes) {
  return bytes.length >= 4 && bytes.subarray(0, 4).equals(ZSTD_MAGIC)
}

/**
 * The plain text of a log: zstd frames are decompressed with Node's decoder (the one DSH's
 * backend uses), keeping what a damaged final frame yields; plain bytes pass through.
 */
export function plainBytes(bytes) {
  if (!isZstd(bytes) || typeof zlib.createZstdDecompress !== 'function') return Promise.resolve(bytes)
  return new Promise(resolve => {
    const chunks = []
    const decoder = zlib.createZstdDecompress()
    decoder.on('data', chunk => chunks.push(chunk))
    decoder.on('error', () => resolve(Buffer.concat(chunks)))
    decoder.on('end', () => resolve(Buffer.concat(chunks)))
    decoder.end(bytes)
  })
}

/** A reading problem (code, 1-based physical line, DSH or reader message). */
export class ReadProblem extends Error {
  constructor(code, line, message) {
    super(message)
    this.code = code
    this.line = line
  }
}

/**
 * Events of a log file with the physical line of each: {header, events, lines}.
 * Throws ReadProblem for a line that is not JSON or a malformed chunk row.
 */
export function readLog(plain) {
  const events = []
  const lines = []
  let header = null
  let start = 0
  let lineNo = 0
  for (let newline = plain.indexOf(0x0a); newline !== -1; newline = plain.indexOf(0x0a, start)) {
    lineNo += 1
    const text = plain.subarray(start, newline).toString('utf8')
    start = newline + 1
    let record
    try {
      record = JSON.parse(text)
    } catch (error) {
      throw new ReadProblem('JSON_SYNTAX', lineNo, error.message)
    }
    if (lineNo === 1 && record !== null && typeof record === 'object' && !Array.isArray(record)
        && record.type === 'session') {
      header = record
      continue
    }
    let decoded
    try {
      decoded = decodeStorageRecord(record)
    } catch (error) {
      throw new ReadProblem('CHUNK_ROW_MALFORMED', lineNo, error.message)
    }
    for (const event of decoded) {
      events.push(event)
      lines.push(lineNo)
    }
  }
  return { header, events, lines }
}
