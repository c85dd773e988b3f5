import type { OperatorResource } from '@keyturn/protocol'
import type { Operator } from './operator.js'

/** An operator as the API answers it and as its events record it: never a password hash. */
export function toOperatorResource(operator: Operator): OperatorResource {
  return {
    id: operator.id as OperatorResource['id'],
    object: 'Operator',
    email: operator.email,
    name: operator.name,
    role: operator.role,
    status: operator.status,
    createdAt: operator.createdAt.toISOString(),
    updatedAt: operator.updatedAt.toISOString(),
  }
}
