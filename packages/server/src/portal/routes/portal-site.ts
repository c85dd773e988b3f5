import {
  type ActivationId,
  type CustomerId,
  type LicenseId,
  maxActivationRequestLength,
  type ProductId,
} from '@keyturn/protocol'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../http/app-types.js'
import { registerSecurityHeaders } from '../../http/security-headers.js'
import {
  clearedSessionCookie,
  isSecureRequest,
  readSessionCookie,
  sessionCookie,
} from '../../http/session-cookie.js'
import type { Session } from '../../sessions/session.js'
import { accentCss, portalCss, portalJs } from '../portal-assets.js'
import {
  codePage,
  licensesPage,
  messagePage,
  neutralBranding,
  offlineFilePage,
  offlinePage,
  signInPage,
} from '../portal-pages.js'
import type { Caller, OfflineRefusal, PortalService } from '../portal-service.js'

export const portalPath = '/portal'

/**
 * The pages' CSP: the dashboard's (files of this origin only, no inline script or style, never in a
 * frame), plus images over HTTPS for the product's logo (`branding.logoUrl`); no fetches at all.
 */
export const portalCsp = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'https:'],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
}

/**
 * The CSRF token of the session, kept in a cookie of its own that only /portal reads (httpOnly,
 * SameSite=Strict) so each page can put it into its forms; a write is accepted only when the form's
 * token is the session's (checked against the session's stored digest, in constant time).
 */
const csrfCookie = {
  cookieName: 'keyturn_portal_csrf',
  cookiePath: portalPath,
  idleTimeoutMs: 0,
  absoluteTimeoutMs: 0,
}

const html = 'text/html; charset=utf-8'
const maxEmailLength = 320

type Form = Record<string, string | undefined>

function field(body: unknown, name: string, maxLength: number): string {
  if (typeof body !== 'object' || body === null) {
    return ''
  }
  const value = (body as Form)[name]
  return typeof value === 'string' && value.length <= maxLength ? value : ''
}

function productIdOf(value: string): ProductId | null {
  return /^prd_[0-9A-Za-z]{1,60}$/.test(value) ? (value as ProductId) : null
}

function caller(request: FastifyRequest): Caller {
  return { ip: request.ip, requestId: request.id }
}

function minutes(ms: number): number {
  return Math.max(1, Math.ceil(ms / 60_000))
}

/** Fixed texts for `?done=` after a redirect (never text taken from the URL). */
const notices: Record<string, string> = {
  deactivated: 'The machine was deactivated. Its seat is free for another machine.',
  key_sent: 'The license key is on its way to your mailbox.',
  freed: 'The machine was freed. Its seat is free for another machine.',
}

/** A request file's text in a form: up to the request's limit, URL-encoded (3 bytes a character at worst), and the token. */
const offlineBodyLimit = 3 * maxActivationRequestLength + 1024

/** What the customer reads when the offline service refuses a request file or a code. */
function offlineMessage(refusal: OfflineRefusal): string {
  switch (refusal.code) {
    case 'activation_request_invalid':
      return `That is not a usable activation request file. ${refusal.detail}`
    case 'license_not_found':
      return "That request was not made with this license's key. Check that the application on the machine was given the key shown here, then make a new request there."
    case 'license_floating':
      return 'This license keeps its machines online (each holds a seat only while it checks in), so a machine without internet cannot use it. Contact support.'
    case 'activation_limit_reached':
      return 'Every machine this license allows is in use. Free one first (deactivate it, or enter its deactivation code below), then try again.'
    case 'license_not_active':
      return `This license cannot take a new machine now. ${refusal.detail}`
    case 'deactivation_code_invalid':
      return refusal.triesLeft === 0
        ? 'That is not the code this machine showed. Too many wrong codes: freeing this machine by code is locked for an hour.'
        : `That is not the code this machine showed. Check it (it is read in groups of four) and try again; ${refusal.triesLeft ?? 0} more wrong codes lock freeing this machine by code for an hour.`
    case 'deactivation_locked':
      return `Too many wrong codes were entered for this machine. Try again in ${minutes((refusal.retryAfter ?? 60) * 1000)} minutes.`
    default:
      return refusal.detail
  }
}

/**
 * The customer portal at /portal (KEYTURN_PORTAL=true): sign-in by mailed code, the customer's
 * licenses and machines, deactivation within the transfer limit, the key re-sent. Pages are
 * HTML; every form POST of a signed-in customer carries the session's CSRF token.
 */
export function registerPortalSite(app: App, portal: PortalService): void {
  const settings = portal.sessions.settings('customer')
  app.register(
    async (scope: App) => {
      scope.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true }
      })
      registerSecurityHeaders(
        scope,
        {
          contentSecurityPolicy: { useDefaults: false, directives: portalCsp },
          frameguard: { action: 'deny' },
          referrerPolicy: { policy: 'no-referrer' },
          strictTransportSecurity: false,
        },
        { 'cache-control': 'no-store' },
      )
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 8192 },
        (_request, body, done) => {
          done(null, Object.fromEntries(new URLSearchParams(body as string)))
        },
      )

      const send = (reply: FastifyReply, status: number, page: string) =>
        reply.code(status).type(html).send(page)

      const sessionOf = async (request: FastifyRequest): Promise<Session | undefined> =>
        portal.sessions.authenticate('customer', readSessionCookie(settings, request.headers.cookie))

      const csrfOf = (request: FastifyRequest): string =>
        readSessionCookie(csrfCookie, request.headers.cookie) ?? ''

      const sessionEnded = (reply: FastifyReply) =>
        send(
          reply,
          401,
          messagePage({
            heading: 'Please sign in',
            text: 'Your session has ended.',
            link: portalPath,
            linkText: 'Sign in',
          }),
        )

      /** A signed-in customer's form POST: the session and its CSRF token, or an answer already sent. */
      const writer = async (request: FastifyRequest, reply: FastifyReply): Promise<Session | undefined> => {
        const session = await sessionOf(request)
        if (session === undefined) {
          sessionEnded(reply)
          return undefined
        }
        const token = readSessionCookie(settings, request.headers.cookie) ?? ''
        if (!(await portal.sessions.csrfMatches(token, field(request.body, 'csrf', 200)))) {
          send(
            reply,
            403,
            messagePage({
              heading: 'Refused',
              text: 'This form did not come from your portal page. Open the page again and retry.',
              link: `${portalPath}/licenses`,
              linkText: 'Your licenses',
            }),
          )
          return undefined
        }
        return session
      }

      const notFound = (reply: FastifyReply) =>
        send(
          reply,
          404,
          messagePage({
            heading: 'Not found',
            text: 'There is no such license or machine among yours.',
            link: `${portalPath}/licenses`,
            linkText: 'Your licenses',
          }),
        )

      const renderLicenses = async (
        reply: FastifyReply,
        request: FastifyRequest,
        session: Session,
        status: number,
        messages: { error: string | null; notice: string | null },
      ) => {
        const overview = await portal.overview(session.subjectId as CustomerId)
        if (overview === undefined) {
          return sessionEnded(reply)
        }
        const products = new Set(overview.licenses.map((item) => item.owned.productId))
        const single = products.size === 1 ? overview.licenses[0]?.owned : undefined
        return send(
          reply,
          status,
          licensesPage({
            brand: single?.branding ?? neutralBranding,
            accentProductId: single?.productId ?? null,
            csrf: csrfOf(request),
            overview,
            ...messages,
          }),
        )
      }

      /** The licenses page again, answering 409 with why the customer's action was refused. */
      const refused = (reply: FastifyReply, request: FastifyRequest, session: Session, error: string) =>
        renderLicenses(reply, request, session, 409, { error, notice: null })

      scope.get('/assets/portal.css', (_request, reply) =>
        reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(portalCss),
      )
      scope.get('/assets/portal.js', (_request, reply) =>
        reply
          .header('cache-control', 'public, max-age=3600')
          .type('text/javascript; charset=utf-8')
          .send(portalJs),
      )
      scope.get<{ Params: { file: string } }>('/assets/accent/:file', async (request, reply) => {
        const productId = productIdOf(request.params.file.replace(/\.css$/, ''))
        const brand = productId === null ? undefined : await portal.branding(productId)
        return reply
          .header('cache-control', 'public, max-age=300')
          .type('text/css; charset=utf-8')
          .send(accentCss(brand?.accentColor ?? null))
      })

      scope.get<{ Querystring: { product?: string } }>('/', async (request, reply) => {
        if ((await sessionOf(request)) !== undefined) {
          return reply.redirect(`${portalPath}/licenses`, 303)
        }
        const productId = productIdOf(String(request.query.product ?? ''))
        const brand = productId === null ? undefined : await portal.branding(productId)
        return send(
          reply,
          200,
          signInPage({
            brand: brand ?? neutralBranding,
            productId: brand === undefined ? null : productId,
            email: '',
            error: null,
            canSendCodes: portal.canSendCodes,
          }),
        )
      })

      scope.post('/sign-in', async (request, reply) => {
        const email = field(request.body, 'email', maxEmailLength).trim()
        const productId = productIdOf(field(request.body, 'product', 100))
        const brand = (productId === null ? undefined : await portal.branding(productId)) ?? neutralBranding
        const again = (status: number, error: string) =>
          send(
            reply,
            status,
            signInPage({ brand, productId, email, error, canSendCodes: portal.canSendCodes }),
          )
        if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
          return again(400, 'Enter an email address such as ada@example.com (at most 320 characters).')
        }
        if (!portal.canSendCodes) {
          return again(409, 'Sign-in is not available: this server sends no mail.')
        }
        const outcome = await portal.requestCode(email, caller(request), {
          productId: productId ?? undefined,
        })
        if (outcome.kind === 'rate_limited') {
          reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)))
          return again(
            429,
            `Too many codes were asked for. Try again in ${minutes(outcome.retryAfterMs)} minutes.`,
          )
        }
        return send(reply, 200, codePage({ brand, productId, email, error: null }))
      })

      scope.get<{ Querystring: { email?: string; product?: string } }>('/code', async (request, reply) => {
        const email = String(request.query.email ?? '').slice(0, maxEmailLength)
        const productId = productIdOf(String(request.query.product ?? ''))
        const brand = (productId === null ? undefined : await portal.branding(productId)) ?? neutralBranding
        return send(reply, 200, codePage({ brand, productId, email, error: null }))
      })

      scope.post('/code', async (request, reply) => {
        const email = field(request.body, 'email', maxEmailLength).trim()
        const code = field(request.body, 'code', 20)
        const productId = productIdOf(field(request.body, 'product', 100))
        const brand = (productId === null ? undefined : await portal.branding(productId)) ?? neutralBranding
        const again = (status: number, error: string) =>
          send(reply, status, codePage({ brand, productId, email, error }))
        if (email === '' || !/^\s*\d{6}\s*$/.test(code)) {
          return again(400, 'Enter the 6-digit code from the mail.')
        }
        const outcome = await portal.signIn(email, code, caller(request))
        if (outcome.kind === 'rate_limited') {
          reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)))
          return again(429, `Too many wrong codes. Try again in ${minutes(outcome.retryAfterMs)} minutes.`)
        }
        if (outcome.kind === 'refused') {
          return again(
            400,
            outcome.reason === 'wrong_code'
              ? 'That code is not right. Check the mail and try again.'
              : 'That code no longer works (used, expired or tried too often). Ask for a new one.',
          )
        }
        const secure = isSecureRequest(request)
        reply.header('set-cookie', [
          sessionCookie(settings, outcome.started.token, secure),
          `${csrfCookie.cookieName}=${outcome.started.csrfToken}; Path=${portalPath}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
        ])
        return reply.redirect(`${portalPath}/licenses`, 303)
      })

      scope.get<{ Querystring: { done?: string } }>('/licenses', async (request, reply) => {
        const session = await sessionOf(request)
        if (session === undefined) {
          return reply.redirect(portalPath, 303)
        }
        return renderLicenses(reply, request, session, 200, {
          error: null,
          notice: notices[String(request.query.done ?? '')] ?? null,
        })
      })

      scope.post<{ Params: { id: string } }>('/machines/:id/deactivate', async (request, reply) => {
        const session = await writer(request, reply)
        if (session === undefined) {
          return reply
        }
        const outcome = await portal.deactivate(
          session.subjectId as CustomerId,
          request.params.id as ActivationId,
          caller(request),
        )
        if (outcome.kind === 'not_found') {
          return notFound(reply)
        }
        if (outcome.kind === 'code_required') {
          return refused(
            reply,
            request,
            session,
            `${outcome.machine.name ?? outcome.machine.fingerprint} was activated offline: deactivate it on the machine, then enter the code it shows under “Machines without internet”.`,
          )
        }
        if (outcome.kind === 'transfer_limit_reached') {
          const days = Math.round(outcome.transferPeriod / 86_400)
          return refused(
            reply,
            request,
            session,
            `No deactivations are left on this license: at most ${outcome.maxTransfers} in ${days} day${days === 1 ? '' : 's'}. Try again later or contact support.`,
          )
        }
        return reply.redirect(`${portalPath}/licenses?done=deactivated`, 303)
      })

      scope.post<{ Params: { id: string } }>('/machines/:id/license-file', async (request, reply) => {
        const session = await writer(request, reply)
        if (session === undefined) {
          return reply
        }
        const outcome = await portal.licenseFile(
          session.subjectId as CustomerId,
          request.params.id as ActivationId,
          caller(request),
        )
        if (outcome.kind === 'not_found') {
          return notFound(reply)
        }
        if (outcome.kind === 'license_not_active') {
          return refused(reply, request, session, 'A license file is issued only for an active license.')
        }
        return reply
          .header('content-disposition', `attachment; filename="${outcome.fileName}"`)
          .type('text/plain; charset=utf-8')
          .send(outcome.licenseFile)
      })

      /** The offline page of one of the customer's licenses, with what the last form asked and its answer. */
      const renderOffline = async (
        reply: FastifyReply,
        request: FastifyRequest,
        session: Session,
        licenseId: LicenseId,
        status: number,
        state: {
          request?: string
          machine?: string
          code?: string
          error: string | null
          notice: string | null
        },
      ) => {
        const overview = await portal.license(session.subjectId as CustomerId, licenseId)
        const item = overview?.licenses[0]
        if (item === undefined) {
          return notFound(reply)
        }
        return send(
          reply,
          status,
          offlinePage({
            brand: item.owned.branding,
            accentProductId: item.owned.productId,
            csrf: csrfOf(request),
            item,
            maxRequest: maxActivationRequestLength,
            request: state.request ?? '',
            machine: state.machine ?? '',
            code: state.code ?? '',
            error: state.error,
            notice: state.notice,
          }),
        )
      }

      scope.get<{ Params: { id: string }; Querystring: { done?: string } }>(
        '/licenses/:id/offline',
        async (request, reply) => {
          const session = await sessionOf(request)
          if (session === undefined) {
            return reply.redirect(portalPath, 303)
          }
          return renderOffline(reply, request, session, request.params.id as LicenseId, 200, {
            error: null,
            notice: notices[String(request.query.done ?? '')] ?? null,
          })
        },
      )

      scope.post<{ Params: { id: string } }>(
        '/licenses/:id/offline/activate',
        { bodyLimit: offlineBodyLimit },
        async (request, reply) => {
          const session = await writer(request, reply)
          if (session === undefined) {
            return reply
          }
          const licenseId = request.params.id as LicenseId
          const text = field(request.body, 'request', offlineBodyLimit)
          const again = (status: number, error: string) =>
            renderOffline(reply, request, session, licenseId, status, {
              request: text.slice(0, maxActivationRequestLength),
              error,
              notice: null,
            })
          if (text.trim() === '') {
            return again(400, 'Upload the request file or paste its text.')
          }
          if (text.length > maxActivationRequestLength) {
            return again(
              400,
              `That is not an activation request file: one is at most ${maxActivationRequestLength} characters.`,
            )
          }
          const customerId = session.subjectId as CustomerId
          const outcome = await portal.activateOffline(customerId, licenseId, text, caller(request))
          if (outcome.kind === 'refused') {
            // On a license that is not the customer's, the page itself is not found (renderOffline).
            return again(outcome.code === 'license_not_found' ? 400 : outcome.status, offlineMessage(outcome))
          }
          if (field(request.body, 'download', 1) === '1') {
            return reply
              .header('content-disposition', `attachment; filename="${outcome.fileName}"`)
              .type('text/plain; charset=utf-8')
              .send(outcome.licenseFile)
          }
          const overview = await portal.license(customerId, licenseId)
          const owned = overview?.licenses[0]?.owned
          return send(
            reply,
            201,
            offlineFilePage({
              brand: owned?.branding ?? neutralBranding,
              accentProductId: owned?.productId ?? null,
              csrf: csrfOf(request),
              licenseId,
              request: text,
              machineName: outcome.machineName,
              fileName: outcome.fileName,
              licenseFile: outcome.licenseFile,
            }),
          )
        },
      )

      scope.post<{ Params: { id: string } }>('/licenses/:id/offline/deactivate', async (request, reply) => {
        const session = await writer(request, reply)
        if (session === undefined) {
          return reply
        }
        const licenseId = request.params.id as LicenseId
        const machine = field(request.body, 'machine', 100)
        const code = field(request.body, 'code', 64)
        const again = (status: number, error: string) =>
          renderOffline(reply, request, session, licenseId, status, { machine, code, error, notice: null })
        if (machine === '') {
          return again(400, 'Choose the machine to free.')
        }
        if (code.replace(/[\s-]/g, '') === '') {
          return again(400, 'Enter the deactivation code the machine showed (at most 64 characters).')
        }
        const outcome = await portal.deactivateOffline(
          session.subjectId as CustomerId,
          machine as ActivationId,
          code,
          caller(request),
        )
        if (outcome.kind === 'not_found' || outcome.kind === 'code_required') {
          return notFound(reply)
        }
        if (outcome.kind === 'transfer_limit_reached') {
          const days = Math.round(outcome.transferPeriod / 86_400)
          return again(
            409,
            `No deactivations are left on this license: at most ${outcome.maxTransfers} in ${days} day${days === 1 ? '' : 's'}. Try again later or contact support.`,
          )
        }
        if (outcome.kind === 'refused') {
          if (outcome.code === 'deactivation_locked' && outcome.retryAfter !== undefined) {
            reply.header('retry-after', String(outcome.retryAfter))
          }
          return again(outcome.status, offlineMessage(outcome))
        }
        return reply.redirect(
          `${portalPath}/licenses/${encodeURIComponent(licenseId)}/offline?done=freed`,
          303,
        )
      })

      scope.post<{ Params: { id: string } }>('/licenses/:id/resend-key', async (request, reply) => {
        const session = await writer(request, reply)
        if (session === undefined) {
          return reply
        }
        const outcome = await portal.resendKey(
          session.subjectId as CustomerId,
          request.params.id as LicenseId,
          caller(request),
        )
        if (outcome === 'not_found') {
          return notFound(reply)
        }
        if (outcome === 'no_mail') {
          return refused(reply, request, session, 'This server sends no mail, so the key cannot be mailed.')
        }
        return reply.redirect(`${portalPath}/licenses?done=key_sent`, 303)
      })

      for (const [path, everywhere] of [
        ['/sign-out', false],
        ['/sign-out-everywhere', true],
      ] as const) {
        scope.post(path, async (request, reply) => {
          const session = await writer(request, reply)
          if (session === undefined) {
            return reply
          }
          await portal.signOut(session, caller(request), everywhere)
          const secure = isSecureRequest(request)
          reply.header('set-cookie', [
            clearedSessionCookie(settings, secure),
            `${csrfCookie.cookieName}=; Max-Age=0; Path=${portalPath}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
          ])
          return reply.redirect(portalPath, 303)
        })
      }
    },
    { prefix: portalPath },
  )
}
