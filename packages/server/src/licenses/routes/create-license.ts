import { CreateLicenseBodySchema, LicenseResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerCreateLicense(api: App, licenses: LicenseService): void {
  api.post(
    '/licenses',
    {
      config: { confirmsApiKey: true },
      schema: {
        operationId: 'createLicense',
        summary: 'Create a license for a product',
        description:
          'Generates the key, unless `key` gives one of your own; `externalId` is your id for it (unique per product). `maxActivations` defaults to 1 (`null`: unlimited); `expirationDate` must be in the future (`null` or absent: never expires).',
        tags: ['licenses'],
        body: CreateLicenseBodySchema,
        response: {
          201: LicenseResourceSchema,
          ...problemResponses(
            'forbidden',
            'product_not_found',
            'product_suspended',
            'license_key_taken',
            'external_id_taken',
          ),
        },
      },
    },
    async (request, reply) => {
      const view = await licenses.create(request.principal, request.body)
      return reply.code(201).send(toLicenseResource(view))
    },
  )
}
