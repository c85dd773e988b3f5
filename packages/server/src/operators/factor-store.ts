/** An operator's TOTP seed, encrypted; unconfirmed until a first code proves the authenticator has it. */
export interface StoredTotp {
  readonly operatorId: string
  readonly secretEncrypted: string
  readonly confirmedAt: Date | undefined
  /** The time step of the last code accepted; a code of this step or an earlier one is refused. */
  readonly lastUsedStep: number | undefined
  readonly createdAt: Date
}

/** What a pending sign-in waits for: a code of an enrolled factor, or an enrolment the server requires. */
export type PendingStage = 'totp' | 'enrol'

export interface StoredPendingSignIn {
  readonly id: string
  readonly tokenDigest: string
  readonly operatorId: string
  readonly stage: PendingStage
  readonly createdAt: Date
  readonly expiresAt: Date
}

/** An OpenID Connect identity linked to an operator: the provider's issuer and its subject. */
export interface StoredIdentity {
  readonly id: string
  readonly operatorId: string
  readonly issuer: string
  readonly subject: string
  readonly email: string | undefined
  readonly createdAt: Date
}

/** Where operators' second factors, pending sign-ins, settings and linked identities live. */
export interface FactorStore {
  findTotp(operatorId: string): Promise<StoredTotp | undefined>
  /** Inserts or replaces the operator's seed (unconfirmed). */
  putTotp(totp: StoredTotp): Promise<void>
  /** Marks the seed confirmed with the step of its first code. */
  confirmTotp(operatorId: string, step: number, at: Date): Promise<void>
  /** Records `step` as used; false when it, or a later step, was used already (a replay). */
  useTotpStep(operatorId: string, step: number): Promise<boolean>
  /** Removes the seed and the recovery codes. */
  deleteFactors(operatorId: string): Promise<void>
  /** The operators with a confirmed seed. */
  confirmedOperatorIds(): Promise<ReadonlySet<string>>

  /** Replaces every recovery code of the operator. */
  replaceRecoveryCodes(operatorId: string, digests: readonly string[], at: Date): Promise<void>
  /** Marks an unused code used; false when no unused code of the operator has this digest. */
  useRecoveryCode(operatorId: string, digest: string, at: Date): Promise<boolean>
  countUnusedRecoveryCodes(operatorId: string): Promise<number>

  insertPending(pending: StoredPendingSignIn): Promise<void>
  findPending(tokenDigest: string): Promise<StoredPendingSignIn | undefined>
  deletePending(id: string): Promise<void>
  /** Deletes pending sign-ins that expired before `now`, and every one of `operatorId` when given. */
  deleteExpiredPending(now: Date, operatorId?: string): Promise<void>

  getSetting(name: string): Promise<string | undefined>
  putSetting(name: string, value: string, at: Date): Promise<void>

  findIdentity(issuer: string, subject: string): Promise<StoredIdentity | undefined>
  insertIdentity(identity: StoredIdentity): Promise<void>
}
