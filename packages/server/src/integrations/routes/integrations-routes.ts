import {
  CreateIntegrationBodySchema,
  IntegrationEventListSchema,
  IntegrationListSchema,
  IntegrationParamsSchema,
  IntegrationResourceSchema,
  UpdateIntegrationBodySchema,
} from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toIntegrationResource } from '../integration.js'
import type { IntegrationService } from '../integration-service.js'

const adminOnly = 'Admin keys only.'
const shownEvents = 50

/** Every management route of the integrations feature, on the API scope (behind authentication). */
export function registerIntegrationsRoutes(api: App, integrations: IntegrationService): void {
  api.get(
    '/integrations',
    {
      schema: {
        operationId: 'listIntegrations',
        summary: 'List integrations',
        description: `Every integration, oldest first (at most 100 exist). ${adminOnly}`,
        tags: ['integrations'],
        response: { 200: IntegrationListSchema, ...problemResponses('forbidden') },
      },
    },
    async (request) => ({
      object: 'list' as const,
      data: (await integrations.list(request.principal)).map(toIntegrationResource),
    }),
  )
  api.post(
    '/integrations',
    {
      schema: {
        operationId: 'createIntegration',
        summary: 'Create an integration with a payment provider',
        description: `Paste the answer's \`webhookPath\`, after the server's public URL, into the provider's webhook settings. The signing secret is stored encrypted and never returned. ${adminOnly}`,
        tags: ['integrations'],
        body: CreateIntegrationBodySchema,
        response: {
          201: IntegrationResourceSchema,
          ...problemResponses('forbidden', 'policy_not_found'),
        },
      },
    },
    async (request, reply) => {
      const created = await integrations.create(request.principal, request.body)
      return reply.code(201).send(toIntegrationResource(created))
    },
  )
  api.get(
    '/integrations/:id',
    {
      schema: {
        operationId: 'getIntegration',
        summary: 'Retrieve an integration',
        description: `Never with its signing secret. ${adminOnly}`,
        tags: ['integrations'],
        params: IntegrationParamsSchema,
        response: {
          200: IntegrationResourceSchema,
          ...problemResponses('forbidden', 'integration_not_found'),
        },
      },
    },
    async (request) => toIntegrationResource(await integrations.get(request.principal, request.params.id)),
  )
  api.patch(
    '/integrations/:id',
    {
      schema: {
        operationId: 'updateIntegration',
        summary: 'Update an integration (mappings, refund rule, grace, signing secret)',
        description: `\`mappings\` replaces the whole list. A new \`signingSecret\` applies to the next delivery. ${adminOnly}`,
        tags: ['integrations'],
        params: IntegrationParamsSchema,
        body: UpdateIntegrationBodySchema,
        response: {
          200: IntegrationResourceSchema,
          ...problemResponses('forbidden', 'integration_not_found', 'policy_not_found'),
        },
      },
    },
    async (request) =>
      toIntegrationResource(await integrations.update(request.principal, request.params.id, request.body)),
  )
  api.delete(
    '/integrations/:id',
    {
      schema: {
        operationId: 'deleteIntegration',
        summary: 'Delete an integration, its provider links and its received events',
        description: `Licenses it created stay. The provider's next delivery is answered 404. ${adminOnly}`,
        tags: ['integrations'],
        params: IntegrationParamsSchema,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...problemResponses('forbidden', 'integration_not_found'),
        },
      },
    },
    async (request, reply) => {
      await integrations.delete(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
  api.get(
    '/integrations/:id/events',
    {
      schema: {
        operationId: 'listIntegrationEvents',
        summary: 'The latest provider events an integration received',
        description: `The ${shownEvents} most recent, newest first, each with what it did or why it did nothing. ${adminOnly}`,
        tags: ['integrations'],
        params: IntegrationParamsSchema,
        response: {
          200: IntegrationEventListSchema,
          ...problemResponses('forbidden', 'integration_not_found'),
        },
      },
    },
    async (request) => ({
      object: 'list' as const,
      data: (await integrations.recentEvents(request.principal, request.params.id, shownEvents)).map(
        (event) => ({
          object: 'IntegrationEvent' as const,
          dedupeKey: event.dedupeKey,
          eventType: event.eventType,
          status: event.status,
          outcome: event.outcome,
          attempts: event.attempts,
          nextAttemptAt: event.nextAttemptAt?.toISOString() ?? null,
          receivedAt: event.receivedAt.toISOString(),
          updatedAt: event.updatedAt.toISOString(),
        }),
      ),
    }),
  )
}
