import {
  OperatorCodeBodySchema,
  OperatorRecoveryCodesSchema,
  OperatorSignedInSchema,
  OperatorTotpConfirmBodySchema,
  OperatorTotpConfirmedSchema,
  OperatorTotpDisableBodySchema,
  OperatorTotpEnrolBodySchema,
  OperatorTotpEnrolmentSchema,
  OperatorTwoFactorRequirementBodySchema,
  OperatorTwoFactorStatusSchema,
  OperatorTwoFactorVerifyBodySchema,
} from '@keyturn/protocol'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import { problemResponses } from '../../http/responses.js'
import type { Operator } from '../operator.js'
import type { OperatorService } from '../operator-service.js'
import type { TwoFactorService } from '../totp.js'
import { operatorAuthPath } from './operator-auth-routes.js'
import { operatorSignInScope, sendRateLimited } from './operator-scope.js'

const tags = ['operator-sign-in']
const session = { tags, security: [{ operatorSession: [] }] }
const noContent = (description: string) => Type.Null({ description })

function retryAfterOnLockout(reply: FastifyReply, error: unknown): never {
  if (error instanceof DomainError && error.code === 'rate_limited') {
    const seconds = error.extensions?.['retryAfter']
    if (typeof seconds === 'number') {
      reply.header('retry-after', String(seconds))
    }
  }
  throw error
}

/**
 * Two-factor routes under /operator/2fa: the second step of a sign-in, TOTP enrolment (with the
 * pending token when the server sends an operator to enrolment, else with the session cookie and the
 * CSRF header), recovery codes, disabling, and the owner's requirement.
 */
export function registerOperatorTwoFactorRoutes(
  app: App,
  operators: OperatorService,
  twoFactor: TwoFactorService,
): void {
  app.register(
    async (scope: App) => {
      const { signedIn, signedInOperator } = operatorSignInScope(scope, operators)
      /** The operator of the session cookie; for a write, the CSRF header must be the session's. */
      const sessionOperator = async (request: FastifyRequest, write: boolean): Promise<Operator> =>
        (await signedInOperator(request, write)).operator

      const enrollingOperator = async (request: FastifyRequest, pendingToken: string | undefined) => {
        if (pendingToken === undefined) {
          return sessionOperator(request, true)
        }
        const operator = await twoFactor.pendingOperator(pendingToken, 'enrol')
        if (operator === undefined) {
          throw new DomainError('unauthenticated', 'This sign-in is unknown or expired: sign in again.')
        }
        return operator
      }

      scope.post(
        '/verify',
        {
          schema: {
            tags,
            security: [],
            operationId: 'verifyOperatorSecondFactor',
            summary: 'Second step of a sign-in: a code',
            description:
              'With the pending token from the password step and a code of the authenticator app (each code works once) or a recovery code: sets the session cookie. Wrong codes lock the operator and the address for 15 minutes (429).',
            body: OperatorTwoFactorVerifyBodySchema,
            response: { 200: OperatorSignedInSchema, ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          const { pendingToken, code, recoveryCode } = request.body
          if ((code === undefined) === (recoveryCode === undefined)) {
            return sendProblem(
              reply,
              problemFor('validation_failed', 'Give either code or recoveryCode.', request.id),
            )
          }
          const outcome = await twoFactor.completeSignIn(pendingToken, { code, recoveryCode }, request.ip)
          if (outcome.kind === 'rate_limited') {
            return sendRateLimited(
              request,
              reply,
              outcome.retryAfterMs,
              'Too many wrong codes: wait before trying again.',
            )
          }
          if (outcome.kind === 'refused') {
            return sendProblem(
              reply,
              problemFor(
                'unauthenticated',
                'The code is wrong, expired or already used, or the sign-in expired.',
                request.id,
              ),
            )
          }
          return signedIn(request, reply, outcome.operator, outcome.started)
        },
      )

      scope.get(
        '/',
        {
          schema: {
            ...session,
            operationId: 'getOperatorTwoFactor',
            summary: 'Your second factor',
            description:
              'Whether TOTP is on, how many recovery codes are left, whether two factors are required.',
            response: { 200: OperatorTwoFactorStatusSchema, ...problemResponses('rate_limited') },
          },
        },
        async (request) => {
          const operator = await sessionOperator(request, false)
          return twoFactor.status(operator.id)
        },
      )

      scope.post(
        '/totp',
        {
          schema: {
            tags,
            security: [{ operatorSession: [] }, {}],
            operationId: 'enrolOperatorTotp',
            summary: 'Start TOTP enrolment',
            description:
              'A new seed, its `otpauth://` URI and QR code (shown only now), unconfirmed until a first code. With the session cookie and CSRF header, or with the pending token of a sign-in sent to enrolment. An operator with TOTP on disables it first (409).',
            body: OperatorTotpEnrolBodySchema,
            response: {
              201: OperatorTotpEnrolmentSchema,
              ...problemResponses('two_factor_enrolled', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const operator = await enrollingOperator(request, request.body.pendingToken)
          reply.code(201)
          return twoFactor.beginEnrolment(operator)
        },
      )

      scope.post(
        '/totp/confirm',
        {
          schema: {
            tags,
            security: [{ operatorSession: [] }, {}],
            operationId: 'confirmOperatorTotp',
            summary: 'Confirm TOTP enrolment with a first code',
            description:
              'Turns TOTP on and answers ten recovery codes (shown only now). With a pending token, the sign-in is finished too: the session cookie is set and the CSRF token answered.',
            body: OperatorTotpConfirmBodySchema,
            response: {
              200: OperatorTotpConfirmedSchema,
              ...problemResponses('two_factor_not_enrolled', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const { code, pendingToken } = request.body
          try {
            if (pendingToken !== undefined) {
              const done = await twoFactor.confirmPendingEnrolment(pendingToken, code, request.ip)
              return {
                recoveryCodes: [...done.recoveryCodes],
                ...signedIn(request, reply, done.operator, done.started),
              }
            }
            const operator = await sessionOperator(request, true)
            return { recoveryCodes: [...(await twoFactor.confirmEnrolment(operator.id, code, request.ip))] }
          } catch (error) {
            retryAfterOnLockout(reply, error)
          }
        },
      )

      scope.post(
        '/totp/disable',
        {
          schema: {
            ...session,
            operationId: 'disableOperatorTotp',
            summary: 'Turn your second factor off',
            description:
              'Proven by a code or a recovery code. While two factors are required, your sessions end too: the next sign-in goes through enrolment.',
            body: OperatorTotpDisableBodySchema,
            response: { 204: noContent('Turned off.'), ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          const { code, recoveryCode } = request.body
          if ((code === undefined) === (recoveryCode === undefined)) {
            return sendProblem(
              reply,
              problemFor('validation_failed', 'Give either code or recoveryCode.', request.id),
            )
          }
          const operator = await sessionOperator(request, true)
          try {
            await twoFactor.disable(operator.id, { code, recoveryCode }, request.ip)
          } catch (error) {
            retryAfterOnLockout(reply, error)
          }
          return reply.code(204).send(null)
        },
      )

      scope.post(
        '/recovery-codes',
        {
          schema: {
            ...session,
            operationId: 'regenerateOperatorRecoveryCodes',
            summary: 'New recovery codes',
            description:
              'Ten new recovery codes for a code of the authenticator app (shown only now); earlier ones stop working.',
            body: OperatorCodeBodySchema,
            response: { 200: OperatorRecoveryCodesSchema, ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          const operator = await sessionOperator(request, true)
          try {
            return {
              recoveryCodes: [
                ...(await twoFactor.regenerateRecoveryCodes(operator.id, request.body.code, request.ip)),
              ],
            }
          } catch (error) {
            retryAfterOnLockout(reply, error)
          }
        },
      )

      scope.post(
        '/operators/:id/reset',
        {
          schema: {
            ...session,
            operationId: 'resetOperatorSecondFactor',
            summary: 'Reset another operator’s second factor (owners)',
            description:
              'For a lost authenticator without recovery codes: removes the operator’s TOTP and recovery codes and ends its sessions. Operators: owner only.',
            params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
            response: {
              204: noContent('Reset.'),
              ...problemResponses('forbidden', 'operator_not_found', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const operator = await sessionOperator(request, true)
          await twoFactor.resetFor(operator, request.params.id)
          return reply.code(204).send(null)
        },
      )

      scope.put(
        '/requirement',
        {
          schema: {
            ...session,
            operationId: 'setOperatorTwoFactorRequirement',
            summary: 'Require two factors of everyone (owners)',
            description:
              'To require them the owner must have one; every session of an operator without one ends, and its next sign-in goes through enrolment. Operators: owner only.',
            body: OperatorTwoFactorRequirementBodySchema,
            response: {
              200: OperatorTwoFactorStatusSchema,
              ...problemResponses('forbidden', 'two_factor_not_enrolled', 'rate_limited'),
            },
          },
        },
        async (request) => {
          const operator = await sessionOperator(request, true)
          await twoFactor.setRequired(operator, request.body.required)
          return twoFactor.status(operator.id)
        },
      )
    },
    { prefix: `${operatorAuthPath}/2fa` },
  )
}
