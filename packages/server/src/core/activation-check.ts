import type { LicenseId } from '@keyturn/protocol'

/** Whether a machine holds a seat of a license; app.ts wires the activations store in (STYLE.md §3). */
export interface ActivationCheck {
  isActivated(licenseId: LicenseId, fingerprint: string): Promise<boolean>
}
