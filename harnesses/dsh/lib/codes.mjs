// The error table of spec/session/errors.md: for each dshkit code, the requirement it violates
// (null where the table says none) and the lowest level whose checks report it ("decode":
// the input could not be read, which fails every level from append). DSH's messages carry
// neither; the harness derives both from the code. tests/test_dsh_harness_codes.py keeps this
// table equal to the specification's.

export const CODES = {
  IO_ERROR: [null, 'decode'],
  INPUT_FORMAT_UNKNOWN: [null, 'decode'],
  LOG_EMPTY: ['SES-FILE-017', 'decode'],
  JSON_ARRAY_NOT_ARRAY: [null, 'decode'],
  JSON_SYNTAX: ['SES-JSON-004', 'decode'],
  JSON_INVALID_UTF8: ['SES-JSON-004', 'decode'],
  JSON_BOM: ['SES-JSON-004', 'decode'],
  JSON_TOO_DEEP: ['SES-JSON-004', 'decode'],
  FILE_LINE_TOO_LONG: ['SES-FILE-014', 'decode'],
  CHUNK_ROW_MALFORMED: ['SES-FILE-005', 'decode'],
  ZSTD_CORRUPT: ['SES-FILE-007', 'decode'],
  ZSTD_FRAME_MID_RECORD: ['SES-FILE-007', 'decode'],
  ZSTD_FRAME_TOO_LARGE: ['SES-FILE-014', 'decode'],
  ZSTD_CONTENT_TOO_LARGE: ['SES-FILE-014', 'decode'],
  JSON_NOT_LOSSLESS: ['SES-JSON-001', 'append'],
  JSON_NEGATIVE_ZERO: ['SES-JSON-002', 'append'],
  JSON_NON_FINITE: ['SES-JSON-003', 'append'],
  ENVELOPE_NOT_OBJECT: ['SES-ENV-001', 'append'],
  SEQ_NOT_CONTIGUOUS: ['SES-ENV-005', 'append'],
  SURFACE_NOT_ELIGIBLE: ['SES-ENV-010', 'append'],
  SURFACE_OP_MISSING: ['SES-ENV-011', 'append'],
  SURFACE_OP_INVALID: ['SES-SURF-001', 'append'],
  SURFACE_REPLACE_INVALID: ['SES-SURF-002', 'append'],
  SURFACE_REPLACE_START_NOT_FOUND: ['SES-SURF-004', 'append'],
  SURFACE_REPLACE_END_NOT_FOUND: ['SES-SURF-005', 'append'],
  SURFACE_REPLACE_REVERSED: ['SES-SURF-006', 'append'],
  PROVENANCE_NOT_ARRAY: ['SES-PROV-001', 'append'],
  PROVENANCE_EMPTY: ['SES-PROV-002', 'append'],
  PROVENANCE_ELEMENT: ['SES-PROV-003', 'append'],
  PROVENANCE_DUPLICATE: ['SES-PROV-004', 'append'],
  PROVENANCE_NOT_EARLIER: ['SES-PROV-005', 'append'],
  PROVENANCE_MISSING_SHADOWED: ['SES-PROV-006', 'append'],
  TOOL_REWRITE_SPAN: ['SES-TRW-001', 'append'],
  TOOL_REWRITE_TARGET: ['SES-TRW-002', 'append'],
  TOOL_REWRITE_CHANGED: ['SES-TRW-003', 'append'],
  LEGACY_REQUEST_HEADER_FALLBACK: ['SES-RQH-004', 'append'],
  LEGACY_REQUEST_HEADER_DELTA: ['SES-RQH-005', 'append'],
  ENVELOPE_UNKNOWN_KEY: ['SES-ENV-002', 'seed'],
  ENVELOPE_TYPE: ['SES-ENV-003', 'seed'],
  ENVELOPE_SEQ: ['SES-ENV-004', 'seed'],
  ENVELOPE_TIME: ['SES-ENV-006', 'seed'],
  ENVELOPE_DATA_MISSING: ['SES-ENV-008', 'seed'],
  ENVELOPE_IGNORABLE: ['SES-ENV-009', 'seed'],
  MESSAGE_UNIDENTIFIED: ['SES-MSG-001', 'seed'],
  MESSAGE_ROLE: ['SES-MSG-002', 'seed'],
  MESSAGE_SOURCE: ['SES-MSG-003', 'seed'],
  MESSAGE_CONTENT: ['SES-MSG-004', 'seed'],
  MESSAGE_MODEL_SOURCE: ['SES-MSG-005', 'seed'],
  MESSAGE_TOOL_SOURCE: ['SES-MSG-006', 'seed'],
  MESSAGE_TOOL_RESULT_BLOCK: ['SES-MSG-007', 'seed'],
  MESSAGE_TOOL_CALL_ID_MISMATCH: ['SES-MSG-008', 'seed'],
  REQUEST_HEADER_CONFIG: ['SES-RQH-001', 'seed'],
  REQUEST_HEADER_REASONING_EFFORT: ['SES-RQH-002', 'seed'],
  REQUEST_HEADER_ADAPTER_DEFAULTS: ['SES-RQH-003', 'seed'],
  INVARIANT_TURN_NUMBER: ['SES-ENC-001', 'invariants'],
  INVARIANT_TURN_ALREADY_OPEN: ['SES-ENC-002', 'invariants'],
  INVARIANT_TURN_END_MISMATCH: ['SES-ENC-003', 'invariants'],
  INVARIANT_STEP_STILL_OPEN: ['SES-ENC-004', 'invariants'],
  INVARIANT_STEP_TURN_MISMATCH: ['SES-ENC-005', 'invariants'],
  INVARIANT_STEP_ALREADY_OPEN: ['SES-ENC-006', 'invariants'],
  INVARIANT_STEP_NUMBER: ['SES-ENC-007', 'invariants'],
  INVARIANT_STEP_SCOPE: ['SES-ENC-008', 'invariants'],
  INVARIANT_TOOL_RESULT_UNPAIRED: ['SES-ENC-009', 'invariants'],
  INVARIANT_REPLACE_OUTSIDE_TURN: ['SES-ENC-010', 'invariants'],
  INVARIANT_OUTSIDE_TURN: ['SES-ENC-011', 'invariants'],
  FILE_HEADER_MISSING: ['SES-FILE-001', 'decode'],
  FILE_HEADER_NOT_JSON: ['SES-FILE-001', 'decode'],
  FILE_HEADER_NOT_SESSION: ['SES-FILE-001', 'decode'],
  FILE_HEADER_INVALID: ['SES-FILE-002', 'load'],
  FILE_HEADER_RETIRED_FIELDS: ['SES-FILE-003', 'load'],
  FORMAT_VERSION_NEWER: ['SES-VER-002', 'load'],
  FORMAT_VERSION_OLDER: ['SES-VER-003', 'load'],
  FILE_COMMITTED_UNPARSABLE: ['SES-FILE-009', 'load'],
  FILE_COMMITTED_SEQ_GAP: ['SES-FILE-009', 'load'],
  LEGACY_MODE_SET: ['SES-LEG-001', 'load'],
  LEGACY_TURN_START_MALFORMED: ['SES-LEG-002', 'load'],
  LEGACY_TURN_END_MALFORMED: ['SES-LEG-003', 'load'],
  LEGACY_STEERING_MALFORMED: ['SES-LEG-004', 'load'],
  UNKNOWN_EVENT_TYPE: ['SES-UNK-002', 'load'],
  TYPED_MODEL_DISAGREES: ['SES-VOC-005', 'typed'],
}

/** The requirement id of a code, or null. */
export function requirementOf(code) {
  return CODES[code]?.[0] ?? null
}

/** The failing level of a problem with this code (a decoding problem fails level append). */
export function levelOf(code) {
  const level = CODES[code]?.[1]
  if (level === undefined) return null
  return level === 'decode' ? 'append' : level
}
