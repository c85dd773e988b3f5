/**
 * What an operator may do, from most to least: `owner` everything (operators and settings too),
 * `admin` everything but operators, `support` reads everything and does the reversible support
 * actions, `viewer` reads only.
 */
export type OperatorRole = 'owner' | 'admin' | 'support' | 'viewer'

export const operatorRoles: readonly OperatorRole[] = ['owner', 'admin', 'support', 'viewer']

/** `invited`: has not chosen a password yet; `active`: may sign in; `disabled`: may not. */
export type OperatorStatus = 'invited' | 'active' | 'disabled'

export interface Operator {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly role: OperatorRole
  readonly status: OperatorStatus
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** What a one-time link is for: the first owner's setup, an invitation, a password reset. */
export type OperatorTokenPurpose = 'setup' | 'invitation' | 'reset'
