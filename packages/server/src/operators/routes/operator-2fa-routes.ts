import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import { readSessionCookie } from '../../http/session-cookie.js'
import { csrfHeader } from '../../sessions/session.js'
import type { Operator } from '../operator.js'
import type { OperatorService } from '../operator-service.js'
import type { TwoFactorService } from '../totp.js'
import { operatorAuthPath } from './operator-auth-routes.js'
import { operatorSignInScope } from './operator-scope.js'

const PendingToken = Type.String({ minLength: 1, maxLength: 100 })
const Code = Type.String({ minLength: 1, maxLength: 32, examples: ['492039'] })
const RecoveryCode = Type.String({ minLength: 1, maxLength: 32, examples: ['7k2qd-9xm4a'] })

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
      const { settings, signedIn } = operatorSignInScope(scope, operators)

      /** The operator of the session cookie; for a write, the CSRF header must be the session's. */
      const sessionOperator = async (request: FastifyRequest, write: boolean): Promise<Operator> => {
        const token = readSessionCookie(settings, request.headers.cookie)
        const who = await operators.authenticate(token)
        const csrf = request.headers[csrfHeader]
        if (
          who === undefined ||
          token === undefined ||
          (write && !(await operators.csrfMatches(token, typeof csrf === 'string' ? csrf : undefined)))
        ) {
          throw new DomainError('unauthenticated', 'Not signed in (or the CSRF header is missing).')
        }
        return who.operator
      }

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
            body: Type.Object({
              pendingToken: PendingToken,
              code: Type.Optional(Code),
              recoveryCode: Type.Optional(RecoveryCode),
            }),
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
            reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)))
            return sendProblem(
              reply,
              problemFor('rate_limited', 'Too many wrong codes: wait before trying again.', request.id),
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

      scope.get('/', async (request) => {
        const operator = await sessionOperator(request, false)
        return twoFactor.status(operator.id)
      })

      scope.post(
        '/totp',
        { schema: { body: Type.Object({ pendingToken: Type.Optional(PendingToken) }) } },
        async (request, reply) => {
          const operator = await enrollingOperator(request, request.body.pendingToken)
          reply.code(201)
          return twoFactor.beginEnrolment(operator)
        },
      )

      scope.post(
        '/totp/confirm',
        { schema: { body: Type.Object({ code: Code, pendingToken: Type.Optional(PendingToken) }) } },
        async (request, reply) => {
          const { code, pendingToken } = request.body
          try {
            if (pendingToken !== undefined) {
              const done = await twoFactor.confirmPendingEnrolment(pendingToken, code, request.ip)
              return {
                recoveryCodes: done.recoveryCodes,
                ...signedIn(request, reply, done.operator, done.started),
              }
            }
            const operator = await sessionOperator(request, true)
            return { recoveryCodes: await twoFactor.confirmEnrolment(operator.id, code, request.ip) }
          } catch (error) {
            retryAfterOnLockout(reply, error)
          }
        },
      )

      scope.post(
        '/totp/disable',
        {
          schema: {
            body: Type.Object({ code: Type.Optional(Code), recoveryCode: Type.Optional(RecoveryCode) }),
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
          return reply.code(204).send()
        },
      )

      scope.post(
        '/recovery-codes',
        { schema: { body: Type.Object({ code: Code }) } },
        async (request, reply) => {
          const operator = await sessionOperator(request, true)
          try {
            return {
              recoveryCodes: await twoFactor.regenerateRecoveryCodes(
                operator.id,
                request.body.code,
                request.ip,
              ),
            }
          } catch (error) {
            retryAfterOnLockout(reply, error)
          }
        },
      )

      scope.post(
        '/operators/:id/reset',
        { schema: { params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }) } },
        async (request, reply) => {
          const operator = await sessionOperator(request, true)
          await twoFactor.resetFor(operator, request.params.id)
          return reply.code(204).send()
        },
      )

      scope.put(
        '/requirement',
        { schema: { body: Type.Object({ required: Type.Boolean() }) } },
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
