import {
  ActivationIdSchema,
  CreateLicenseFileBodySchema,
  CreateLicenseFileByKeyBodySchema,
  IdParamsSchema,
  LicenseFileResourceSchema,
  LicenseIdSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../../licenses/license-resource.js'
import type { IssuedLicenseFile, LicenseFileService } from '../license-file-service.js'

const lifetime =
  'It expires after `ttl` seconds (default a year; `null`: never), or at the license expiration date, whichever is first. With `encrypt: true` its payload is encrypted for the license key (docs/guides/offline.md, "The file format"). A revoked or expired license, or one of a suspended product, answers 409 `license_not_active`.'

function answer(issued: IssuedLicenseFile) {
  return {
    licenseFile: issued.licenseFile,
    expiresAt: issued.expiresAt?.toISOString() ?? null,
    license: toLicenseResource(issued.view),
  }
}

/** Every route of the license-files feature, on the API scope (under /api/v0, behind authentication). */
export function registerLicenseFilesRoutes(api: App, files: LicenseFileService): void {
  // A file is never stored: a retry after a crash gets a new one.
  const config = { idempotencyRecovery: 'rerun', responseHoldsSecret: true, confirmsApiKey: true } as const
  api.post(
    '/licenses/:id/license-file',
    {
      config,
      schema: {
        operationId: 'createLicenseFile',
        summary: 'Issue a signed license file for offline use',
        description: `Roles: admin, product (its own products). A license file signed with the product key, verifiable offline with the product public key (\`@keyturn/client\` \`verifyLicenseFile\`). ${lifetime}`,
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        body: CreateLicenseFileBodySchema,
        response: {
          201: LicenseFileResourceSchema,
          ...problemResponses('forbidden', 'license_not_found', 'license_not_active'),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(answer(await files.issue(request.principal, request.params.id, request.body))),
  )
  api.post(
    '/activations/:id/license-file',
    {
      config,
      schema: {
        operationId: 'createActivationLicenseFile',
        summary: 'Issue a machine license file for an activation',
        description: `Roles: admin, product (its own products). As \`createLicenseFile\`, bound to the activation's machine (its fingerprint); encrypted, it also needs that fingerprint to be read. ${lifetime}`,
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        body: CreateLicenseFileBodySchema,
        response: {
          201: LicenseFileResourceSchema,
          ...problemResponses('forbidden', 'activation_not_found', 'license_not_active'),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(answer(await files.issueForActivation(request.principal, request.params.id, request.body))),
  )
  api.post(
    '/licenses/license-file',
    {
      config: { ...config, applicationFacing: true },
      schema: {
        operationId: 'createLicenseFileByKey',
        summary: 'Issue a license file for the license whose key is presented (for applications)',
        description: `Roles: admin, product, client. As \`createLicenseFile\`, with the license found by \`key\` and \`productId\`; with \`fingerprint\` (an activated machine) a machine file for it. With a client key the lifetime is at most the product's \`clientTokenTtl\` (a longer or \`null\` \`ttl\` is shortened to it). ${lifetime}`,
        tags: ['licenses'],
        body: CreateLicenseFileByKeyBodySchema,
        response: {
          201: LicenseFileResourceSchema,
          ...problemResponses('forbidden', 'license_not_found', 'license_not_active', 'activation_not_found'),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(answer(await files.issueByKey(request.principal, request.body))),
  )
}
