/**
 * @module The dashboard's sign-in routes under `/operator` (outside `/api/v0`: they take no API
 * key): password sign-in, the first owner's setup, invitations, password resets, the second factor
 * and single sign-on. A session is an httpOnly cookie; the CSRF token that every write sends in the
 * `X-Keyturn-Csrf` header comes in the answer's body.
 */
import { type Static, Type } from 'typebox'
import { exampleOperator, OperatorResourceSchema } from './operators.js'

const exampleTime = '2030-01-01T00:05:00.000Z'
const exampleCsrf = 'mQ8xV2kL7pR4tN9bW3cY6dF1hJ5sG0aZ'
const examplePending = 'pt_Yk3Lm8Qx2Vb7Rn4Tc9Wd5Hs1'

const EmailSchema = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^\\s@]+@[^\\s@]+$',
  examples: ['grace@example.com'],
})
const PasswordSchema = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'At least 12 characters, not a common password.',
  examples: ['correct horse battery staple'],
})
const LinkTokenSchema = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'The part of the one-time link after `#`.',
  examples: ['Zr4Qw8xT2mLp9VnB6cKd3HsYf7Jg5RtA1eWq0uPz-iO'],
})
const CodeSchema = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'The 6 digits the authenticator app shows.',
  examples: ['492039'],
})
const RecoveryCodeSchema = Type.String({ minLength: 1, maxLength: 32, examples: ['7k2qd-9xm4a'] })
const PendingTokenSchema = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'From the answer to a correct password: the sign-in waiting for its second step.',
  examples: [examplePending],
})

export const OperatorSignInBodySchema = Type.Object(
  { email: EmailSchema, password: PasswordSchema },
  { examples: [{ email: 'grace@example.com', password: 'correct horse battery staple' }] },
)

export const OperatorSetupBodySchema = Type.Object(
  {
    token: LinkTokenSchema,
    email: EmailSchema,
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Grace Hopper'] }),
    password: PasswordSchema,
  },
  {
    examples: [
      {
        token: 'Zr4Qw8xT2mLp9VnB6cKd3HsYf7Jg5RtA1eWq0uPz-iO',
        email: 'grace@example.com',
        name: 'Grace Hopper',
        password: 'correct horse battery staple',
      },
    ],
  },
)

/** Accepting an invitation, or using a reset link: the link's secret and the new password. */
export const OperatorLinkPasswordBodySchema = Type.Object(
  { token: LinkTokenSchema, password: PasswordSchema },
  {
    examples: [
      { token: 'Zr4Qw8xT2mLp9VnB6cKd3HsYf7Jg5RtA1eWq0uPz-iO', password: 'correct horse battery staple' },
    ],
  },
)

export const OperatorPasswordResetRequestBodySchema = Type.Object(
  { email: EmailSchema },
  { examples: [{ email: 'grace@example.com' }] },
)

/** Signed in: the session cookie is set; the body holds the operator and the CSRF token. */
export const OperatorSignedInSchema = Type.Object(
  {
    operator: OperatorResourceSchema,
    csrfToken: Type.String({
      description:
        'Send it in the `X-Keyturn-Csrf` header with every write. Kept in memory only; `GET /operator/me` gives it again.',
    }),
  },
  { additionalProperties: false, examples: [{ operator: exampleOperator, csrfToken: exampleCsrf }] },
)
export type OperatorSignedIn = Static<typeof OperatorSignedInSchema>

/** The password was right, and a second step comes before any session: no cookie yet. */
export const OperatorSecondStepSchema = Type.Object(
  {
    secondFactor: Type.Enum(['totp', 'enrol'], {
      description:
        '`totp`: send a code to `POST /operator/2fa/verify`; `enrol`: two factors are required and the operator has none yet: enrol through `POST /operator/2fa/totp` with the pending token.',
    }),
    pendingToken: Type.String({ description: 'Goes back with the code or the enrolment.' }),
    expiresAt: Type.String({ format: 'date-time', description: 'Five minutes after the password.' }),
  },
  {
    additionalProperties: false,
    examples: [{ secondFactor: 'totp', pendingToken: examplePending, expiresAt: exampleTime }],
  },
)

export const OperatorSignInOutcomeSchema = Type.Union([OperatorSignedInSchema, OperatorSecondStepSchema], {
  examples: [
    { operator: exampleOperator, csrfToken: exampleCsrf },
    { secondFactor: 'totp', pendingToken: examplePending, expiresAt: exampleTime },
  ],
})

export const OperatorTwoFactorVerifyBodySchema = Type.Object(
  {
    pendingToken: PendingTokenSchema,
    code: Type.Optional(CodeSchema),
    recoveryCode: Type.Optional(RecoveryCodeSchema),
  },
  {
    description: 'Either `code` or `recoveryCode`.',
    examples: [{ pendingToken: examplePending, code: '492039' }],
  },
)

export const OperatorTwoFactorStatusSchema = Type.Object(
  {
    totp: Type.Boolean({ description: 'An authenticator app is enrolled and confirmed.' }),
    recoveryCodesLeft: Type.Integer({ minimum: 0 }),
    required: Type.Boolean({ description: 'An owner requires two factors of every operator.' }),
  },
  { additionalProperties: false, examples: [{ totp: true, recoveryCodesLeft: 9, required: false }] },
)

export const OperatorTotpEnrolBodySchema = Type.Object(
  { pendingToken: Type.Optional(PendingTokenSchema) },
  {
    description:
      'With the session cookie and CSRF header, or with the pending token of a sign-in sent to enrolment.',
    examples: [{}],
  },
)

export const OperatorTotpEnrolmentSchema = Type.Object(
  {
    secret: Type.String({
      description: 'The seed in Base32, for typing into an authenticator app. Shown only now.',
    }),
    uri: Type.String({ description: 'The `otpauth://` URI the QR code holds.' }),
    qrCode: Type.String({ description: 'The QR code as an SVG `data:` URL.' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        uri: 'otpauth://totp/Keyturn:grace%40example.com?issuer=Keyturn&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30',
        qrCode: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=',
      },
    ],
  },
)

export const OperatorTotpConfirmBodySchema = Type.Object(
  { code: CodeSchema, pendingToken: Type.Optional(PendingTokenSchema) },
  { examples: [{ code: '492039' }] },
)

const RecoveryCodesProperty = Type.Array(Type.String(), {
  description: 'Ten one-time codes, shown only now; earlier ones stop working.',
})
const exampleRecoveryCodes = ['7k2qd-9xm4a', 'p3rt8-2wq6z']

export const OperatorRecoveryCodesSchema = Type.Object(
  { recoveryCodes: RecoveryCodesProperty },
  { additionalProperties: false, examples: [{ recoveryCodes: exampleRecoveryCodes }] },
)

/** The enrolment confirmed: recovery codes and, when it finished a pending sign-in, the session too. */
export const OperatorTotpConfirmedSchema = Type.Object(
  {
    recoveryCodes: RecoveryCodesProperty,
    operator: Type.Optional(OperatorResourceSchema),
    csrfToken: Type.Optional(
      Type.String({ description: 'With a pending token: the new session’s CSRF token.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { recoveryCodes: exampleRecoveryCodes },
      { recoveryCodes: exampleRecoveryCodes, operator: exampleOperator, csrfToken: exampleCsrf },
    ],
  },
)

export const OperatorTotpDisableBodySchema = Type.Object(
  { code: Type.Optional(CodeSchema), recoveryCode: Type.Optional(RecoveryCodeSchema) },
  { description: 'Either `code` or `recoveryCode`.', examples: [{ code: '492039' }] },
)

export const OperatorCodeBodySchema = Type.Object({ code: CodeSchema }, { examples: [{ code: '492039' }] })

export const OperatorTwoFactorRequirementBodySchema = Type.Object(
  { required: Type.Boolean() },
  { examples: [{ required: true }] },
)

export const OperatorSsoAvailableSchema = Type.Object(
  { enabled: Type.Literal(true) },
  { additionalProperties: false, examples: [{ enabled: true }] },
)
