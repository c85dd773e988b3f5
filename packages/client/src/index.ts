/**
 * @keyturn/client: the online API client and offline license-token validation (issue #3 fills it).
 */
export type { LicenseResource, Paginated, ValidationResult } from '@keyturn/protocol'
