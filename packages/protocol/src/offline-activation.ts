/**
 * @module Offline activation (docs/guides/offline.md, "Air-gapped machines"): the activation
 * request file an application writes, the deactivation code it prints, and the bodies and answers
 * of `POST /licenses/activate-offline` and `POST /activations/:id/deactivate-offline`. The layouts
 * are declared once here; `@keyturn/client` writes them and the server reads them.
 */
import { type Static, Type } from 'typebox'
import { ActivationNameSchema, ActivationResourceSchema, FingerprintSchema } from './activations.js'
import { TimestampSchema } from './common.js'
import { licenseFileBegin, licenseFileEnd } from './license-file.js'

/** The first line of every activation request file. */
export const activationRequestBegin = '-----BEGIN KEYTURN ACTIVATION REQUEST-----'
/** The last line of every activation request file. */
export const activationRequestEnd = '-----END KEYTURN ACTIVATION REQUEST-----'
/** The payload's `format`: the version of the layout below. */
export const activationRequestFormat = 'keyturn-activation-request/1'
/** Longer request files are refused unparsed: a real one is well under 2 KiB. */
export const maxActivationRequestLength = 8 * 1024
/** How far in the future a request's `created` may be (seconds): clocks of air-gapped machines drift. */
export const activationRequestClockTolerance = 24 * 60 * 60
/** Bytes of SHA-256(license key) a request names its license by (`keyHint`, base64url). */
export const activationRequestKeyHintBytes = 12

/** What a request file says: everything is covered by the HMAC keyed by the license key. */
export const ActivationRequestPayloadSchema = Type.Object(
  {
    format: Type.Literal(activationRequestFormat),
    productId: Type.String({ minLength: 1, maxLength: 64 }),
    /** base64url of the first 12 bytes of SHA-256 of the license key as stored: which license, without the key. */
    keyHint: Type.String({ minLength: 16, maxLength: 16, pattern: '^[A-Za-z0-9_-]{16}$' }),
    fingerprint: FingerprintSchema,
    name: Type.Optional(ActivationNameSchema),
    platform: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    /** base64url of 16 random bytes: the same nonce again is the same request. */
    nonce: Type.String({ minLength: 22, maxLength: 22, pattern: '^[A-Za-z0-9_-]{22}$' }),
    /** When the request was made (ISO 8601, UTC). */
    created: Type.String({ minLength: 20, maxLength: 32 }),
  },
  { additionalProperties: false },
)
export type ActivationRequestPayload = Static<typeof ActivationRequestPayloadSchema>

/** The per-activation secret's HMAC context on the server and the deactivation code's message prefix. */
export const deactivationCodeContext = 'keyturn-deactivation-code/1'
/** Bytes of the code's HMAC-SHA256 that it carries. */
export const deactivationCodeMacBytes = 6
/** Characters per group of a printed deactivation code. */
export const deactivationCodeGroupLength = 4
/** Wrong codes in a row that lock an activation's offline deactivation. */
export const maxDeactivationCodeFailures = 5
/** How long the lock lasts (seconds): an hour. */
export const deactivationLockSeconds = 60 * 60
/** How far in the future a code's time may be (seconds), for a machine whose clock runs fast. */
export const deactivationCodeClockTolerance = 24 * 60 * 60

const requestExample = `${activationRequestBegin}\neyJmb3JtYXQiOiJrZXl0dXJuLWFjdGl2YXRpb24tcmVxdWVzdC8xIiwicHJvZHVjdElk…\n${activationRequestEnd}\n`

export const ActivateOfflineBodySchema = Type.Object(
  {
    request: Type.String({
      minLength: 1,
      maxLength: maxActivationRequestLength,
      description: `The activation request file's text, between \`${activationRequestBegin}\` and \`${activationRequestEnd}\` (\`@keyturn/client\` \`createActivationRequest\`).`,
    }),
  },
  { additionalProperties: false, examples: [{ request: requestExample }] },
)
export type ActivateOfflineBody = Static<typeof ActivateOfflineBodySchema>

export const OfflineActivationResourceSchema = Type.Object(
  {
    activation: ActivationResourceSchema,
    licenseFile: Type.String({
      description: `The machine's license file (between \`${licenseFileBegin}\` and \`${licenseFileEnd}\`), always encrypted for the license key and the machine's fingerprint; it carries the machine's deactivation secret.`,
    }),
    expiresAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When the file expires; `null`: never.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        activation: {
          id: 'act_9pLm3xQv7TbN2cRw5KsYdA',
          object: 'Activation',
          licenseId: 'lic_7fQx2mNc4RtYp9LkWv3bHs',
          productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
          fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
          name: 'Lab PC 4',
          metadata: { platform: 'linux-x64' },
          createdAt: '2030-01-01T00:00:00.000Z',
          lastSeenAt: '2030-01-01T00:00:00.000Z',
          lastHeartbeatAt: '2030-01-01T00:00:00.000Z',
          expiresAt: null,
        },
        licenseFile: `${licenseFileBegin}\neyJmb3JtYXQiOiJrZXl0dXJuLWxpY2Vuc2UtZmlsZS8xIiwiYWxnIjoiRWREU0Ei…\n${licenseFileEnd}\n`,
        expiresAt: '2031-01-01T00:00:00.000Z',
      },
    ],
  },
)
export type OfflineActivationResource = Static<typeof OfflineActivationResourceSchema>

export const DeactivateOfflineBodySchema = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'The deactivation code the machine printed (`@keyturn/client` `createDeactivationCode`): 16 Crockford base32 characters, in any case, dashes and spaces ignored.',
    }),
  },
  { additionalProperties: false, examples: [{ code: 'Q2M4-7XKD-3H9P-T6WB' }] },
)
export type DeactivateOfflineBody = Static<typeof DeactivateOfflineBodySchema>
