import type { App } from '../../http/app-types.js'
import type { PortalService } from '../portal-service.js'
import { registerListPortalSessions } from './list-portal-sessions.js'
import { registerRevokePortalSession } from './revoke-portal-session.js'
import { registerSendPortalLink } from './send-portal-link.js'

/**
 * The portal's routes of the management API (under /api/v0, admin keys): the customer's pages
 * themselves are `portal-site.ts`, outside the API.
 */
export function registerPortalRoutes(api: App, portal: PortalService, portalEnabled: boolean): void {
  registerSendPortalLink(api, portal, portalEnabled)
  registerListPortalSessions(api, portal)
  registerRevokePortalSession(api, portal)
}
