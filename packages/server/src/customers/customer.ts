import type { CustomerId, Metadata } from '@keyturn/protocol'

export interface Customer {
  readonly id: CustomerId
  readonly email: string
  readonly name: string | null
  readonly metadata: Metadata
  /** No non-essential mail (mail/). */
  readonly mailOptOut: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}
