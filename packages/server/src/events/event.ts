// Defined with the unit of work that records them (a storage port); the events feature reads them.
export type { Actor, Event } from '../core/unit-of-work.js'
