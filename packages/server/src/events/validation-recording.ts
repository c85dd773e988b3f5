/**
 * Whether validation outcomes (`license.validated`, `license.validation_failed`) are recorded: when
 * KEYTURN_RECORD_VALIDATIONS=true, or while an enabled webhook endpoint subscribes to them. The
 * subscription flag is refreshed from the database by the delivery worker on every tick, so every
 * process sharing the database follows within one tick; validation itself only reads a boolean.
 */
export class ValidationRecording {
  readonly #configured: boolean
  #subscribed = false

  constructor(configured: boolean) {
    this.#configured = configured
  }

  isWanted(): boolean {
    return this.#configured || this.#subscribed
  }

  setSubscribed(subscribed: boolean): void {
    this.#subscribed = subscribed
  }
}
