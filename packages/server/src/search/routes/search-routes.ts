import { SearchQuerySchema, SearchResultSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { SearchService } from '../search-service.js'

/** Every route of the search feature, on the API scope (under /api/v0, behind authentication). */
export function registerSearchRoutes(api: App, search: SearchService): void {
  api.get(
    '/search',
    {
      schema: {
        operationId: 'search',
        summary: 'Find licenses, customers and machines from one box',
        description:
          "Roles: `admin` (everything) and `product` (its product's licenses and machines, and the customers owning one of its licenses); a `client` key is refused (403). What `q` matches depends on its shape: text with `@` looks up a customer email (exact, case-insensitive); `lic_…`, `cus_…` and `act_…` that id; anything else a license key (exact as given, and canonicalised when shaped like a Keyturn key: any case, with or without dashes; never a prefix), a machine fingerprint (exact), and customer and machine names (prefix, case-insensitive). At most 20 hits, licenses first; each lookup is one index probe. No match: an empty list.",
        tags: ['search'],
        querystring: SearchQuerySchema,
        response: { 200: SearchResultSchema, ...problemResponses('forbidden') },
      },
    },
    async (request) => ({
      object: 'List' as const,
      data: await search.search(request.principal, request.query.q),
    }),
  )
}
