import type { EventType } from '@keyturn/protocol'

// Defined with the unit of work that records them (a storage port); the events feature reads them.
export type { Actor, Event } from '../core/unit-of-work.js'

/**
 * The license an event is about, for `GET /events?filter=licenseId:eq:…`: a license event's own id,
 * a validation's license, an activation's license; null for every other event (migration 81 reads
 * stored events the same way).
 */
export function licenseIdOf(type: EventType, data: Readonly<Record<string, unknown>>): string | null {
  if (type === 'license.validated' || type === 'license.validation_failed') {
    const license = data.license
    return typeof license === 'object' && license !== null && 'id' in license ? textOrNull(license.id) : null
  }
  if (type.startsWith('license.')) {
    return textOrNull(data.id)
  }
  return type.startsWith('activation.') ? textOrNull(data.licenseId) : null
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}
