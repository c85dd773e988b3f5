import type { OperatorRole } from './operator.js'

/**
 * The least operator role a route needs, or `none` when no operator may call it: the by-key
 * application routes made for programs holding a client key (activate, deactivate, heartbeat,
 * usage, tokens and license files by key; validation is a read the dashboard offers, so it is
 * `viewer`), and the route about the caller's own API key.
 */
export type RequiredOperatorRole = OperatorRole | 'none'

const rank: Readonly<Record<OperatorRole, number>> = { viewer: 0, support: 1, admin: 2, owner: 3 }

/** Whether an operator of `role` may call a route that needs `required`. */
export function operatorMay(role: OperatorRole, required: RequiredOperatorRole): boolean {
  return required !== 'none' && rank[role] >= rank[required]
}

/**
 * What each API route needs of a signed-in operator, by `METHOD /path` as registered under
 * `/api/v0`: the one table the authentication hook enforces (http/authenticate.ts) and the OpenAPI
 * document states. `viewer` reads everything; `support` also revokes and reinstates licenses,
 * deactivates machines and sends customers their portal links; `admin` does everything else but
 * operator accounts (creates, changes, deletes, API keys, webhooks); `owner` manages operators.
 * A route missing here is refused when it is registered: every new route states its role
 * (docs/decisions/0050-operators-at-the-api.md).
 */
export const requiredOperatorRoles: Readonly<Record<string, RequiredOperatorRole>> = {
  // Licenses
  'GET /licenses': 'viewer',
  'POST /licenses': 'admin',
  'POST /licenses/validate': 'viewer',
  'GET /licenses/:id': 'viewer',
  'PATCH /licenses/:id': 'admin',
  'POST /licenses/:id/tokens': 'admin',
  'POST /licenses/tokens': 'none',
  'POST /licenses/:id/license-file': 'admin',
  'POST /activations/:id/license-file': 'admin',
  'POST /licenses/license-file': 'none',
  'POST /licenses/:id/revoke': 'support',
  'POST /licenses/:id/reinstate': 'support',
  'POST /licenses/:id/renew': 'admin',
  'POST /licenses/import': 'admin',
  // Machines and usage
  'POST /licenses/activate': 'none',
  'POST /licenses/deactivate': 'none',
  'POST /licenses/heartbeat': 'none',
  'POST /licenses/usage': 'none',
  'POST /licenses/:id/usage': 'admin',
  'POST /licenses/:id/usage/reset': 'admin',
  'POST /licenses/:id/activations': 'admin',
  'GET /licenses/:id/activations': 'viewer',
  'GET /activations': 'viewer',
  'GET /activations/:id': 'viewer',
  'POST /activations/:id/heartbeat': 'admin',
  'DELETE /activations/:id': 'support',
  // Products
  'GET /products': 'viewer',
  'POST /products': 'admin',
  'GET /products/:id': 'viewer',
  'PATCH /products/:id': 'admin',
  'POST /products/:id/suspend': 'admin',
  'POST /products/:id/resume': 'admin',
  'GET /products/:id/keys': 'viewer',
  'POST /products/:id/keys/rotate': 'admin',
  // Customers and the portal
  'GET /customers': 'viewer',
  'GET /search': 'viewer',
  'POST /customers': 'admin',
  'GET /customers/:id': 'viewer',
  'PATCH /customers/:id': 'admin',
  'DELETE /customers/:id': 'admin',
  'POST /customers/:id/portal-link': 'support',
  'GET /customers/:id/portal-sessions': 'viewer',
  'DELETE /customers/:id/portal-sessions/:sessionId': 'support',
  // Policies and entitlements
  'GET /policies': 'viewer',
  'POST /policies': 'admin',
  'GET /policies/:id': 'viewer',
  'PATCH /policies/:id': 'admin',
  'DELETE /policies/:id': 'admin',
  'GET /entitlements': 'viewer',
  'POST /entitlements': 'admin',
  'GET /entitlements/:id': 'viewer',
  'PATCH /entitlements/:id': 'admin',
  'DELETE /entitlements/:id': 'admin',
  // API keys
  'GET /api-keys': 'viewer',
  'POST /api-keys': 'admin',
  'GET /api-keys/current': 'none',
  'GET /api-keys/:id': 'viewer',
  'DELETE /api-keys/:id': 'admin',
  // Events and mail
  'GET /events': 'viewer',
  'GET /events/:id': 'viewer',
  'GET /emails': 'viewer',
  // Webhooks
  'GET /webhook-endpoints': 'viewer',
  'POST /webhook-endpoints': 'admin',
  'GET /webhook-endpoints/:id': 'viewer',
  'PATCH /webhook-endpoints/:id': 'admin',
  'POST /webhook-endpoints/:id/rotate-secret': 'admin',
  'POST /webhook-endpoints/:id/test': 'admin',
  'GET /webhook-endpoints/:id/deliveries': 'viewer',
  'POST /webhook-deliveries/:id/retry': 'admin',
  'DELETE /webhook-endpoints/:id': 'admin',
  // Payment-provider integrations (they hold signing secrets: admins change them)
  'GET /integrations': 'viewer',
  'POST /integrations': 'admin',
  'GET /integrations/:id': 'viewer',
  'PATCH /integrations/:id': 'admin',
  'GET /integrations/:id/events': 'viewer',
  'DELETE /integrations/:id': 'admin',
  'GET /licenses/:id/provider-links': 'viewer',
  // Daily statistics
  'GET /stats': 'viewer',
  'GET /stats/failures': 'viewer',
  // Offline activation (air-gapped machines): activating is an admin's, freeing a seat support's too
  'POST /licenses/activate-offline': 'admin',
  'POST /activations/:id/deactivate-offline': 'support',
  // Operator accounts (operators only: API keys get 403)
  'GET /operators': 'viewer',
  'POST /operators': 'owner',
  'GET /operators/:id': 'viewer',
  'PATCH /operators/:id': 'owner',
  'POST /operators/:id/password-reset': 'owner',
  'GET /operators/:id/sessions': 'owner',
  'DELETE /operators/:id/sessions/:sessionId': 'owner',
  'DELETE /operators/:id/sessions': 'owner',
}

/** The role a route needs, by its method and its path under `/api/v0`; undefined when the table lacks it. */
export function requiredOperatorRole(method: string, path: string): RequiredOperatorRole | undefined {
  return requiredOperatorRoles[`${method} ${path}`]
}

/** How the OpenAPI document states a route's operator role. */
export function describeOperatorRole(required: RequiredOperatorRole): string {
  return required === 'none'
    ? 'Operators: none (API keys only).'
    : required === 'owner'
      ? 'Operators: owner.'
      : `Operators: ${required} or above.`
}
