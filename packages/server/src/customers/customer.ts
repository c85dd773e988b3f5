import type { CustomerId, Metadata } from '@keyturn/protocol'

export interface Customer {
  readonly id: CustomerId
  readonly email: string
  readonly name: string | null
  readonly metadata: Metadata
  readonly createdAt: Date
  readonly updatedAt: Date
}
