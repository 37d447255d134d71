// One case in, one protocol answer out: {result}, {skipped, message} or {errored, context}.

import * as sessionLog from './session-log.mjs'
import * as derived from './derived.mjs'
import * as sessionOps from './session-ops.mjs'

const SUITES = {
  'session-log': {
    capabilities: sessionLog.CAPABILITIES,
    run: (operation, input, params) => {
      const run = sessionLog.OPERATIONS[operation]
      return run === undefined ? undefined : run(input, params)
    },
  },
  'session-ops': {
    capabilities: sessionOps.CAPABILITIES,
    run: (operation, input, params) => sessionOps.OPERATIONS[operation]?.(input, params ?? {}),
  },
  ...derived.SUITES,
}

export function capabilities() {
  return Object.values(SUITES).flatMap(suite => suite.capabilities)
}

export async function runCase(testCase) {
  const suite = SUITES[testCase.suite]
  if (suite === undefined) {
    return { skipped: true, message: `the DSH harness has no suite ${testCase.suite}` }
  }
  try {
    const result = await suite.run(testCase.operation, testCase.input, testCase.params ?? {})
    if (result === undefined) {
      return { skipped: true, message: derived.skipReason(testCase.suite, testCase.operation) }
    }
    return { result }
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    return { errored: true, context: { message, traceback: error?.stack ?? '' } }
  }
}
