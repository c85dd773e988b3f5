import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import { clearedSessionCookie, isSecureRequest, readSessionCookie } from '../../http/session-cookie.js'
import { csrfHeader } from '../../sessions/session.js'
import { type OperatorService, operatorActor } from '../operator-service.js'
import { maxPasswordLength } from '../passwords.js'
import { operatorSignInScope } from './operator-scope.js'
import { toOperatorResource, toOperatorSession } from './operators-routes.js'
import { secondStepBody } from './second-step-body.js'

/** Where the dashboard signs operators in and out (outside /api/v0: these take no API key). */
export const operatorAuthPath = '/operator'

const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' })
const Password = Type.String({ minLength: 1, maxLength: maxPasswordLength * 4 })
const LinkToken = Type.String({ minLength: 1, maxLength: 100 })
const Name = Type.String({ minLength: 1, maxLength: 200 })

export const operatorBody = toOperatorResource

/**
 * Operator sign-in for the dashboard: the session cookie (httpOnly) is set here, and the CSRF token
 * the dashboard sends in `x-keyturn-csrf` with every write is in the answer's body.
 */
export function registerOperatorAuthRoutes(
  app: App,
  operators: OperatorService,
  publicUrl: string | undefined,
): void {
  const base = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`
  app.register(
    async (scope: App) => {
      const { settings, signedIn } = operatorSignInScope(scope, operators)

      scope.post(
        '/setup',
        { schema: { body: Type.Object({ token: LinkToken, email: Email, name: Name, password: Password }) } },
        async (request, reply) => {
          const { token, ...input } = request.body
          const owner = await operators.completeSetup(token, input, request.id)
          const outcome = await operators.signIn(owner.email, input.password, request.ip)
          if (outcome.kind === 'secondFactor') {
            reply.code(201)
            return secondStepBody(outcome)
          }
          if (outcome.kind !== 'signedIn') {
            throw new DomainError('unauthenticated', 'The owner was created; sign in with the new password.')
          }
          reply.code(201)
          return signedIn(request, reply, outcome.operator, outcome.started)
        },
      )

      scope.post(
        '/sign-in',
        { schema: { body: Type.Object({ email: Email, password: Password }) } },
        async (request, reply) => {
          const outcome = await operators.signIn(request.body.email, request.body.password, request.ip)
          if (outcome.kind === 'rate_limited') {
            reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)))
            return sendProblem(
              reply,
              problemFor('rate_limited', 'Too many failed sign-ins: wait before trying again.', request.id),
            )
          }
          if (outcome.kind === 'refused') {
            return sendProblem(reply, problemFor('unauthenticated', 'Wrong email or password.', request.id))
          }
          if (outcome.kind === 'secondFactor') {
            return secondStepBody(outcome)
          }
          return signedIn(request, reply, outcome.operator, outcome.started)
        },
      )

      scope.post(
        '/invitation',
        { schema: { body: Type.Object({ token: LinkToken, password: Password }) } },
        async (request, reply) => {
          const operator = await operators.acceptInvitation(
            request.body.token,
            request.body.password,
            request.id,
          )
          const outcome = await operators.signIn(operator.email, request.body.password, request.ip)
          if (outcome.kind === 'secondFactor') {
            return secondStepBody(outcome)
          }
          if (outcome.kind !== 'signedIn') {
            throw new DomainError('unauthenticated', 'The password was set; sign in with it.')
          }
          return signedIn(request, reply, outcome.operator, outcome.started)
        },
      )

      // "Forgot password": the same 202 for every address; a reset link is mailed to an active operator.
      scope.post(
        '/password-reset-request',
        { schema: { body: Type.Object({ email: Email }) } },
        async (request, reply) => {
          const outcome = await operators.requestPasswordReset(request.body.email, {
            ip: request.ip,
            requestId: request.id,
            linkBase: base(request),
          })
          if (outcome.kind === 'rate_limited') {
            reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)))
            return sendProblem(
              reply,
              problemFor('rate_limited', 'Too many reset requests: wait before asking again.', request.id),
            )
          }
          return reply.code(202).send()
        },
      )

      scope.post(
        '/password-reset',
        { schema: { body: Type.Object({ token: LinkToken, password: Password }) } },
        async (request, reply) => {
          await operators.resetPassword(request.body.token, request.body.password, request.id)
          return reply.code(204).send()
        },
      )

      // The CSRF token again (derived from the cookie): the dashboard keeps it in memory only.
      scope.get('/me', async (request, reply) => {
        const token = readSessionCookie(settings, request.headers.cookie)
        const who = await operators.authenticate(token)
        if (who === undefined || token === undefined) {
          return sendProblem(reply, problemFor('unauthenticated', 'Not signed in.', request.id))
        }
        return { operator: operatorBody(who.operator), csrfToken: operators.csrfTokenOf(token) }
      })

      /** The signed-in operator and its session, or a 401 sent; writes also need the CSRF header. */
      const signedInOperator = async (request: FastifyRequest, reply: FastifyReply, write: boolean) => {
        const token = readSessionCookie(settings, request.headers.cookie)
        const who = await operators.authenticate(token)
        const csrf = request.headers[csrfHeader]
        if (
          who === undefined ||
          token === undefined ||
          (write && !(await operators.csrfMatches(token, typeof csrf === 'string' ? csrf : undefined)))
        ) {
          await sendProblem(
            reply,
            problemFor('unauthenticated', 'Not signed in (or the CSRF header is missing).', request.id),
          )
          return undefined
        }
        return who
      }

      // Your own sessions: every operator lists its signed-in browsers and ends any of them.
      scope.get('/sessions', async (request, reply) => {
        const who = await signedInOperator(request, reply, false)
        if (who === undefined) {
          return reply
        }
        return {
          data: (await operators.sessionsOf(who.operator.id)).map((session) =>
            toOperatorSession(session, who.session.id),
          ),
        }
      })

      scope.delete(
        '/sessions/:sessionId',
        { schema: { params: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 64 }) }) } },
        async (request, reply) => {
          const who = await signedInOperator(request, reply, true)
          if (who === undefined) {
            return reply
          }
          await operators.revokeSession(
            operatorActor(who.operator, request.id),
            who.operator.id,
            request.params.sessionId,
          )
          return reply.code(204).send()
        },
      )

      scope.post('/sign-out', async (request, reply) => {
        const token = readSessionCookie(settings, request.headers.cookie)
        const who = await operators.authenticate(token)
        const csrf = request.headers[csrfHeader]
        if (
          who === undefined ||
          token === undefined ||
          !(await operators.csrfMatches(token, typeof csrf === 'string' ? csrf : undefined))
        ) {
          return sendProblem(
            reply,
            problemFor('unauthenticated', 'Not signed in (or the CSRF header is missing).', request.id),
          )
        }
        await operators.signOut(who.operator, who.session.id, request.id)
        reply.header('set-cookie', clearedSessionCookie(settings, isSecureRequest(request)))
        return reply.code(204).send()
      })
    },
    { prefix: operatorAuthPath },
  )
}
