import type { OperatorResource } from '@keyturn/protocol'
import type { OperatorPrincipal } from '../core/principal.js'
import type { Operator, OperatorRole } from './operator.js'

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

/** An operator acting on its own account (a one-time link, its own factors or sessions), as events name it. */
export function operatorActor(
  operator: { readonly id: string; readonly role: OperatorRole },
  requestId?: string,
): OperatorPrincipal {
  return {
    role: 'admin',
    operator: { id: operator.id, role: operator.role },
    ...(requestId === undefined ? {} : { requestId }),
  }
}
