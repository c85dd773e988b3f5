import {
  IdParamsSchema,
  InvitedOperatorSchema,
  InviteOperatorBodySchema,
  OperatorIdSchema,
  OperatorListSchema,
  OperatorResourceSchema,
  type OperatorSession,
  OperatorSessionListSchema,
  OperatorSessionParamsSchema,
  PasswordResetLinkSchema,
  UpdateOperatorBodySchema,
} from '@keyturn/protocol'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { Session } from '../../sessions/session.js'
import { toOperatorResource } from '../operator-resource.js'
import type { OperatorService } from '../operator-service.js'

export { toOperatorResource }

export function toOperatorSession(session: Session, currentId: string | undefined): OperatorSession {
  return {
    id: session.id,
    object: 'OperatorSession',
    createdAt: session.createdAt.toISOString(),
    lastSeenAt: session.lastSeenAt.toISOString(),
    idleExpiresAt: session.idleExpiresAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    current: session.id === currentId,
  }
}

/** Only signed-in operators call these; API keys get 403 (a key could otherwise make its own owner). */
const config = { operatorsOnly: true }

/**
 * Operator accounts, on the API scope: everyone signed in reads them (events name operators);
 * only owners invite, change roles and disable. The last active owner can be neither demoted nor
 * disabled.
 */
export function registerOperatorsRoutes(
  api: App,
  operators: OperatorService,
  publicUrl: string | undefined,
): void {
  const base = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`

  api.get(
    '/operators',
    {
      config,
      schema: {
        operationId: 'listOperators',
        summary: 'List operator accounts',
        description:
          'Every operator account (a team is small: one answer, no pages). Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        response: { 200: OperatorListSchema, ...problemResponses('forbidden') },
      },
    },
    async () => ({ data: (await operators.list()).map(toOperatorResource) }),
  )

  api.post(
    '/operators',
    {
      config: { ...config, responseHoldsSecret: true, idempotencyRecovery: 'refuse' as const },
      schema: {
        operationId: 'inviteOperator',
        summary: 'Invite an operator',
        description:
          'Creates an invited operator account and answers its one-time invitation link (shown only now): the person opens it, chooses a password and is signed in. When mail is configured the link is also mailed to them (`mailed: true`). Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        body: InviteOperatorBodySchema,
        response: { 201: InvitedOperatorSchema, ...problemResponses('forbidden', 'operator_email_taken') },
      },
    },
    async (request, reply) => {
      const { operator, invitation } = await operators.create(request.principal, request.body, base(request))
      reply.code(201)
      return {
        operator: toOperatorResource(operator),
        invitationUrl: invitation?.url ?? '',
        mailed: invitation?.mailed ?? false,
      }
    },
  )

  api.get(
    '/operators/:id',
    {
      config,
      schema: {
        operationId: 'getOperator',
        summary: 'Retrieve an operator account',
        description: 'Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        params: IdParamsSchema(OperatorIdSchema),
        response: { 200: OperatorResourceSchema, ...problemResponses('forbidden', 'operator_not_found') },
      },
    },
    async (request) => toOperatorResource(await operators.get(request.params.id)),
  )

  api.patch(
    '/operators/:id',
    {
      config,
      schema: {
        operationId: 'updateOperator',
        summary: 'Change an operator’s role, disable or enable it',
        description:
          'A new role or disabling ends the operator’s sessions. The last active owner can be neither demoted nor disabled (403): make another operator owner first. Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        params: IdParamsSchema(OperatorIdSchema),
        body: UpdateOperatorBodySchema,
        response: { 200: OperatorResourceSchema, ...problemResponses('forbidden', 'operator_not_found') },
      },
    },
    async (request) =>
      toOperatorResource(await operators.update(request.principal, request.params.id, request.body)),
  )

  api.post(
    '/operators/:id/password-reset',
    {
      config: { ...config, responseHoldsSecret: true, idempotencyRecovery: 'refuse' as const },
      schema: {
        operationId: 'createOperatorPasswordReset',
        summary: 'Make a password-reset link for an operator',
        description:
          'For an operator who forgot their password: a one-time link (one hour, shown only now) to hand to them; when mail is configured it is also mailed to them (`mailed: true`). Earlier reset links of the operator stop working. Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        params: IdParamsSchema(OperatorIdSchema),
        response: { 201: PasswordResetLinkSchema, ...problemResponses('forbidden', 'operator_not_found') },
      },
    },
    async (request, reply) => {
      const reset = await operators.passwordResetFor(request.principal, request.params.id, base(request))
      reply.code(201)
      return { resetUrl: reset.url, mailed: reset.mailed }
    },
  )

  api.get(
    '/operators/:id/sessions',
    {
      config,
      schema: {
        operationId: 'listOperatorSessions',
        summary: 'List an operator’s sessions',
        description:
          'The operator’s signed-in browsers (never a cookie’s value). Owners see anyone’s; every operator lists its own at `GET /operator/sessions`. Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        params: IdParamsSchema(OperatorIdSchema),
        response: { 200: OperatorSessionListSchema, ...problemResponses('forbidden', 'operator_not_found') },
      },
    },
    async (request) => ({
      data: (await operators.sessionsOf(request.params.id)).map((session) =>
        toOperatorSession(session, undefined),
      ),
    }),
  )

  api.delete(
    '/operators/:id/sessions/:sessionId',
    {
      config,
      schema: {
        operationId: 'revokeOperatorSession',
        summary: 'End one of an operator’s sessions',
        description:
          'That browser is signed out at its next request. Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        params: OperatorSessionParamsSchema,
        response: {
          204: Type.Null({ description: 'Ended.' }),
          ...problemResponses('forbidden', 'operator_not_found', 'operator_session_not_found'),
        },
      },
    },
    async (request, reply) => {
      await operators.revokeSession(request.principal, request.params.id, request.params.sessionId)
      return reply.code(204).send(null)
    },
  )

  api.delete(
    '/operators/:id/sessions',
    {
      config,
      schema: {
        operationId: 'revokeOperatorSessions',
        summary: 'Sign an operator out everywhere',
        description: 'Ends every session of the operator. Only for signed-in operators: API keys get 403.',
        tags: ['operators'],
        security: [{ operatorSession: [] }],
        params: IdParamsSchema(OperatorIdSchema),
        response: {
          204: Type.Null({ description: 'Ended.' }),
          ...problemResponses('forbidden', 'operator_not_found'),
        },
      },
    },
    async (request, reply) => {
      await operators.revokeAllSessions(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
