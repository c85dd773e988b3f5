import { IntegrationParamsSchema, IntegrationReceiptSchema } from '@keyturn/protocol'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { IntegrationReceiver } from '../integration-receiver.js'

/** Largest provider webhook body read; theirs are a few kilobytes. */
const maxBodyBytes = 256 * 1024

/**
 * `POST /api/v0/integrations/:id/webhook`, outside the API-key scope: the provider's signature over
 * the raw body authenticates it, so this scope reads every body as bytes, unparsed.
 */
export function registerReceiveWebhook(
  scope: App,
  receiver: IntegrationReceiver,
  /** The rate budget of the integration in the path (protection/), when rate limits are on. */
  limit: ((request: FastifyRequest, reply: FastifyReply, done: () => void) => void) | undefined,
): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_request, body, done) =>
    done(null, body),
  )
  scope.post(
    '/integrations/:id/webhook',
    {
      bodyLimit: maxBodyBytes,
      config: { providerReceiver: true },
      ...(limit === undefined ? {} : { onRequest: limit }),
      schema: {
        operationId: 'receiveIntegrationWebhook',
        summary: 'Receive a payment provider’s webhook',
        description:
          'Called by the provider, not with an API key: authenticated by the provider’s signature over the raw body (Stripe: `Stripe-Signature`, checked by the `stripe` SDK with a 5-minute tolerance; Lemon Squeezy: `X-Signature`, hex HMAC-SHA256 under the signing secret; Paddle: `Paddle-Signature`, HMAC-SHA256 of `ts:body`, 5-minute tolerance). Each event is recorded once and acted on in the same transaction (purchases, renewals, payment grace, plan changes, cancellations, refunds); one that cannot be acted on yet is kept `pending` and retried by a background job. A redelivery answers 200 with `duplicate: true`. A bad signature answers 400 and records nothing. Rate budget: per integration (600 a minute by default), not per address.',
        tags: ['integrations'],
        params: IntegrationParamsSchema,
        response: {
          200: IntegrationReceiptSchema,
          ...problemResponses(
            'bad_request',
            'provider_signature_invalid',
            'integration_not_found',
            'rate_limited',
          ),
        },
      },
    },
    async (request) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      const header = (name: string) => {
        const value = request.headers[name]
        return typeof value === 'string' ? value : undefined
      }
      return receiver.receive(request.params.id, body, {
        'x-signature': header('x-signature'),
        'stripe-signature': header('stripe-signature'),
        'paddle-signature': header('paddle-signature'),
      })
    },
  )
}
