import type { SecondFactorStep } from '../totp.js'

/**
 * The answer to a correct password when a second step comes first: no cookie, no session; the
 * pending token goes back with the code (or the enrolment) within five minutes.
 */
export function secondStepBody(step: SecondFactorStep) {
  return {
    secondFactor: step.stage,
    pendingToken: step.pendingToken,
    expiresAt: step.expiresAt.toISOString(),
  }
}
