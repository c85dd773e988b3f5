import assert from 'node:assert/strict'
import type { App } from '../http/app-types.js'
import type { ReceivedMail } from './smtp-server.js'

/**
 * A test's stand-in for a browser on the portal's pages: it keeps the cookies the server sets,
 * posts forms as a browser does (urlencoded) and reads the CSRF token out of the pages' forms.
 */
export class PortalVisitor {
  readonly #app: App
  readonly #ip: string
  #cookies = new Map<string, string>()
  /** The last page's CSRF token (the hidden `csrf` field of its forms). */
  csrf = ''

  constructor(app: App, ip = '198.51.100.1') {
    this.#app = app
    this.#ip = ip
  }

  get cookieHeader(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  async get(url: string) {
    const response = await this.#app.inject({
      method: 'GET',
      url,
      headers: { cookie: this.cookieHeader },
      remoteAddress: this.#ip,
    })
    this.#keep(response.headers['set-cookie'])
    const csrf = /name="csrf" value="([^"]*)"/.exec(response.body)?.[1]
    if (csrf !== undefined) {
      this.csrf = csrf
    }
    return response
  }

  async post(url: string, form: Record<string, string>) {
    const response = await this.#app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
      remoteAddress: this.#ip,
    })
    this.#keep(response.headers['set-cookie'])
    return response
  }

  /** Asks for a code, reads it from the mail the worker sent, and signs in with it. */
  async signIn(email: string, mailbox: { readonly received: ReceivedMail[] }, send: () => Promise<void>) {
    const asked = await this.post('/portal/sign-in', { email })
    assert.equal(asked.statusCode, 200, asked.body)
    await send()
    const code = codeIn(mailbox.received, email)
    const signedIn = await this.post('/portal/code', { email, code })
    assert.equal(signedIn.statusCode, 303, signedIn.body)
    assert.equal(signedIn.headers.location, '/portal/licenses')
    const page = await this.get('/portal/licenses')
    assert.equal(page.statusCode, 200, page.body)
    return page
  }

  #keep(setCookie: string | string[] | undefined): void {
    for (const line of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const [pair = ''] = line.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      if (/Max-Age=0/.test(line)) {
        this.#cookies.delete(name)
      } else {
        this.#cookies.set(name, value)
      }
    }
  }
}

/** The sign-in code of the newest sign-in mail to `email`. */
export function codeIn(received: readonly ReceivedMail[], email: string): string {
  const codes = received
    .filter((message) => message.to.includes(email.toLowerCase()))
    .map((message) => /sign in to [^\n]*?: (\d{6})\s/.exec(message.raw.replace(/=\r\n/g, ''))?.[1])
    .filter((code) => code !== undefined)
  const code = codes.at(-1)
  assert.ok(code !== undefined, `no sign-in code reached ${email}`)
  return code
}

/** Whether a received mail is a portal sign-in mail. */
export function isSignInMail(mail: ReceivedMail): boolean {
  return /sign in to [^\n]*?: \d{6}\s/.test(mail.raw.replace(/=\r\n/g, ''))
}
