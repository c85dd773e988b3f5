import type { EventType } from '@keyturn/protocol'
import type { ChangeActor } from '../core/unit-of-work.js'
import type { MailMessage } from '../mail/kysely-mail-outbox.js'
import type { Operator, OperatorRole, OperatorStatus, OperatorTokenPurpose } from './operator.js'

export interface StoredOperator extends Operator {
  readonly passwordHash: string | undefined
}

/** The operator without its password hash: what the operator services hand out. */
export function publicOperator(stored: StoredOperator): Operator {
  return {
    id: stored.id,
    email: stored.email,
    name: stored.name,
    role: stored.role,
    status: stored.status,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  }
}

export interface StoredOperatorToken {
  readonly id: string
  readonly tokenDigest: string
  readonly purpose: OperatorTokenPurpose
  /** The operator the link acts for; undefined for the first owner's setup link. */
  readonly operatorId: string | undefined
  readonly createdAt: Date
  readonly expiresAt: Date
}

/** Where operators and their one-time links live. */
export interface OperatorStore {
  count(): Promise<number>
  insert(operator: StoredOperator): Promise<void>
  findById(id: string): Promise<StoredOperator | undefined>
  findByEmail(email: string): Promise<StoredOperator | undefined>
  list(): Promise<readonly StoredOperator[]>
  update(
    id: string,
    changes: {
      readonly role?: OperatorRole
      readonly status?: OperatorStatus
      readonly name?: string
      readonly passwordHash?: string
      readonly updatedAt: Date
    },
  ): Promise<void>
  insertToken(token: StoredOperatorToken): Promise<void>
  /** Deletes and returns the token (a link works once); undefined if there was none. */
  takeToken(tokenDigest: string): Promise<StoredOperatorToken | undefined>
  /** Deletes every token of a purpose (of an operator, or the setup tokens when undefined). */
  deleteTokens(purpose: OperatorTokenPurpose, operatorId: string | undefined): Promise<void>
}

/** Queues a mail in the change's transaction (the one-time link and its mail commit together). */
export interface OperatorMailQueue {
  queue(mail: { readonly template: string; readonly message: MailMessage }, now: Date): Promise<void>
}

/** What an operator change writes in one transaction: the accounts and links, the mail outbox, its events. */
export interface OperatorStores {
  readonly operators: OperatorStore
  readonly mail: OperatorMailQueue
}

/** Records an operator event that goes with a change made outside a transaction of these stores (factors, sessions, sign-on). */
export interface OperatorEventLog {
  recordAlone(by: ChangeActor, type: EventType, productId: null, data: object): Promise<void>
}
