import type { LicenseId } from '@keyturn/protocol'

/** What licenses and tokens need of activations; app.ts wires the activations store in (CONTRIBUTING.md, "Module boundaries"). */
export interface ActivationCheck {
  /**
   * The machine's activation of the license if it holds a seat at `now` (its lease, if any, has not
   * lapsed); undefined otherwise.
   */
  findAlive(
    licenseId: LicenseId,
    fingerprint: string,
    now: Date,
  ): Promise<{ readonly expiresAt: Date | null } | undefined>
  /** Lapsed activations not swept yet, per license (a license without any is absent). */
  countLapsed(licenseIds: readonly LicenseId[], now: Date): Promise<ReadonlyMap<LicenseId, number>>
}
