import {
  OperatorLinkPasswordBodySchema,
  OperatorPasswordResetRequestBodySchema,
  OperatorSessionListSchema,
  OperatorSetupBodySchema,
  OperatorSignedInSchema,
  OperatorSignInBodySchema,
  OperatorSignInOutcomeSchema,
} from '@keyturn/protocol'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import { problemResponses } from '../../http/responses.js'
import { clearedSessionCookie, isSecureRequest, readSessionCookie } from '../../http/session-cookie.js'
import { type OperatorService, operatorActor } from '../operator-service.js'
import { operatorSignInScope, sendRateLimited } from './operator-scope.js'
import { toOperatorResource, toOperatorSession } from './operators-routes.js'
import { secondStepBody } from './second-step-body.js'

/** Where the dashboard signs operators in and out (outside /api/v0: these take no API key). */
export const operatorAuthPath = '/operator'

const tags = ['operator-sign-in']
/** Open routes: no cookie, no key (a sign-in, a one-time link). */
const open = { tags, security: [] }
/** Routes of the signed-in operator: the session cookie, and on writes the CSRF header. */
const session = { tags, security: [{ operatorSession: [] }] }
const noContent = (description: string) => Type.Null({ description })

export const operatorBody = toOperatorResource

/** `http://<the server's own address>:<port>` of the connection (IPv6 in brackets). */
function socketAddress(request: FastifyRequest): string {
  const address = (request.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '')
  const host = address.includes(':') ? `[${address}]` : address
  const port = request.socket.localPort
  return `${request.protocol}://${host}${port === undefined ? '' : `:${port}`}`
}

/**
 * Operator sign-in for the dashboard: the session cookie (httpOnly) is set here, and the CSRF token
 * the dashboard sends in `x-keyturn-csrf` with every write is in the answer's body.
 */
export function registerOperatorAuthRoutes(
  app: App,
  operators: OperatorService,
  publicUrl: string | undefined,
): void {
  /**
   * Where a mailed link asked for by anyone points: KEYTURN_PUBLIC_URL, else the address this
   * request reached (its socket), never its Host header: anyone may set that, and a reset link
   * mailed with another site's address would hand the link's secret to that site.
   */
  const base = (request: FastifyRequest) => publicUrl ?? socketAddress(request)
  app.register(
    async (scope: App) => {
      const { settings, signedIn, signedInOperator } = operatorSignInScope(scope, operators)

      scope.post(
        '/setup',
        {
          schema: {
            ...open,
            operationId: 'completeOperatorSetup',
            summary: 'Create the first owner with the setup link',
            description:
              'The link the first start prints (`/dashboard/setup#<token>`) works once, for 24 hours, while no operator exists. Creates the owner and signs it in (the session cookie is set), or answers the second step when two factors are required.',
            body: OperatorSetupBodySchema,
            response: {
              201: OperatorSignInOutcomeSchema,
              ...problemResponses('forbidden', 'rate_limited'),
            },
          },
        },
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
        {
          schema: {
            ...open,
            operationId: 'signInOperator',
            summary: 'Sign in with email and password',
            description:
              'Sets the httpOnly session cookie and answers the CSRF token, or (when the operator has a second factor, or two factors are required) answers the second step with no cookie. A wrong email or password is one 401 for both. Failed sign-ins lock the account and the address for 15 minutes (429 with `Retry-After`).',
            body: OperatorSignInBodySchema,
            response: { 200: OperatorSignInOutcomeSchema, ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          const outcome = await operators.signIn(request.body.email, request.body.password, request.ip)
          if (outcome.kind === 'rate_limited') {
            return sendRateLimited(
              request,
              reply,
              outcome.retryAfterMs,
              'Too many failed sign-ins: wait before trying again.',
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
        {
          schema: {
            ...open,
            operationId: 'acceptOperatorInvitation',
            summary: 'Accept an invitation: choose a password',
            description:
              'The invitation link (`/dashboard/invitation#<token>`, mailed or handed over) works once, for 7 days. The operator becomes active and is signed in, or gets the second step when two factors are required.',
            body: OperatorLinkPasswordBodySchema,
            response: { 200: OperatorSignInOutcomeSchema, ...problemResponses('rate_limited') },
          },
        },
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
        {
          schema: {
            ...open,
            operationId: 'requestOperatorPasswordReset',
            summary: 'Forgot password: mail a reset link',
            description:
              'Answers 202 for every address. An active operator’s address gets a reset link by mail (when mail is configured; without mail, an owner makes the link instead); any other gets nothing. Three requests per address and 30 per IP address in 15 minutes (429 with `Retry-After`).',
            body: OperatorPasswordResetRequestBodySchema,
            response: {
              202: noContent('Accepted (whether or not the address is an operator’s).'),
              ...problemResponses('rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const outcome = await operators.requestPasswordReset(request.body.email, {
            ip: request.ip,
            requestId: request.id,
            linkBase: base(request),
          })
          if (outcome.kind === 'rate_limited') {
            return sendRateLimited(
              request,
              reply,
              outcome.retryAfterMs,
              'Too many reset requests: wait before asking again.',
            )
          }
          return reply.code(202).send(undefined as unknown as null) // no body at all, not `null`
        },
      )

      scope.post(
        '/password-reset',
        {
          schema: {
            ...open,
            operationId: 'resetOperatorPassword',
            summary: 'Set a new password with a reset link',
            description:
              'The reset link (`/dashboard/password-reset#<token>`) works once, for one hour. Every session of the operator ends; sign in with the new password.',
            body: OperatorLinkPasswordBodySchema,
            response: { 204: noContent('The password is changed.'), ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          await operators.resetPassword(request.body.token, request.body.password, request.id)
          return reply.code(204).send(null)
        },
      )

      // The CSRF token again (derived from the cookie): the dashboard keeps it in memory only.
      scope.get(
        '/me',
        {
          schema: {
            ...session,
            operationId: 'getSignedInOperator',
            summary: 'The signed-in operator and its CSRF token',
            description: 'For the dashboard after a reload: it keeps the CSRF token in memory only.',
            response: { 200: OperatorSignedInSchema, ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          const token = readSessionCookie(settings, request.headers.cookie)
          const who = await operators.authenticate(token)
          if (who === undefined || token === undefined) {
            return sendProblem(reply, problemFor('unauthenticated', 'Not signed in.', request.id))
          }
          return { operator: operatorBody(who.operator), csrfToken: operators.csrfTokenOf(token) }
        },
      )

      // Your own sessions: every operator lists its signed-in browsers and ends any of them.
      scope.get(
        '/sessions',
        {
          schema: {
            ...session,
            operationId: 'listOwnOperatorSessions',
            summary: 'List your own sessions',
            description: 'Your signed-in browsers; `current` is the one asking.',
            response: { 200: OperatorSessionListSchema, ...problemResponses('rate_limited') },
          },
        },
        async (request) => {
          const who = await signedInOperator(request, false)
          return {
            data: (await operators.sessionsOf(who.operator.id)).map((session) =>
              toOperatorSession(session, who.session.id),
            ),
          }
        },
      )

      scope.delete(
        '/sessions/:sessionId',
        {
          schema: {
            ...session,
            operationId: 'revokeOwnOperatorSession',
            summary: 'End one of your sessions',
            description: 'That browser is signed out at its next request.',
            params: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 64 }) }),
            response: {
              204: noContent('Ended.'),
              ...problemResponses('operator_session_not_found', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const who = await signedInOperator(request, true)
          await operators.revokeSession(
            operatorActor(who.operator, request.id),
            who.operator.id,
            request.params.sessionId,
          )
          return reply.code(204).send(null)
        },
      )

      scope.post(
        '/sign-out',
        {
          schema: {
            ...session,
            operationId: 'signOutOperator',
            summary: 'Sign out',
            description: 'Ends the session of the cookie and clears the cookie.',
            response: { 204: noContent('Signed out.'), ...problemResponses('rate_limited') },
          },
        },
        async (request, reply) => {
          const who = await signedInOperator(request, true)
          await operators.signOut(who.operator, who.session.id, request.id)
          reply.header('set-cookie', clearedSessionCookie(settings, isSecureRequest(request)))
          return reply.code(204).send(null)
        },
      )
    },
    { prefix: operatorAuthPath },
  )
}
