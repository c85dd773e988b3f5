import type { PolicyId } from '@keyturn/protocol'

/** A policy's check-in fields (read live). */
export interface CheckInPolicy {
  /** Seconds; null: no check-in. */
  readonly checkInInterval: number | null
  /** Seconds; null: the application's own setting. */
  readonly gracePeriod: number | null
}

/** What answers, tokens and files say about the next check-in; empty when none is required. */
export interface CheckIn {
  /** ISO 8601: the moment the answer, token or file was made plus the policy's interval. */
  readonly checkInBy?: string
  /** Seconds of grace after `checkInBy`, when the policy sets one. */
  readonly gracePeriod?: number
}

/** Reads a policy's check-in fields (the policies service fits). */
export interface CheckInLookup {
  findCheckIn(id: PolicyId): Promise<CheckInPolicy | undefined>
}

/**
 * The check-in deadline of something made at `at` for a license of `policy` (docs/guides/offline.md):
 * `at` + the policy's `checkInInterval`, with its `gracePeriod`. Nothing (both fields absent) when
 * the license has no policy or the policy requires no check-in.
 */
export function checkInAt(policy: CheckInPolicy | undefined, at: Date): CheckIn {
  if (policy === undefined || policy.checkInInterval === null) {
    return {}
  }
  return {
    checkInBy: new Date(at.getTime() + policy.checkInInterval * 1000).toISOString(),
    ...(policy.gracePeriod === null ? {} : { gracePeriod: policy.gracePeriod }),
  }
}

/** `checkInAt` for a license's `policyId`: no read at all for a license without a policy. */
export async function checkInOf(
  lookup: CheckInLookup,
  policyId: PolicyId | null,
  at: Date,
): Promise<CheckIn> {
  return policyId === null ? {} : checkInAt(await lookup.findCheckIn(policyId), at)
}
