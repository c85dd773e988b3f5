import { Eta } from 'eta'
import type { MailVariables } from '../mail/mail-templates.js'
import type { PortalLicense, PortalOverview } from './portal-service.js'

/**
 * The portal's pages: server-rendered HTML, every `<%= %>` HTML-escaped by Eta. No inline script
 * or style (the pages run under a CSP that forbids both): the look is /portal/assets/portal.css,
 * the product's accent colour a stylesheet of its own, and the one script (copying a key) is an
 * enhancement the pages work without.
 */
const eta = new Eta({ autoEscape: true, autoTrim: false })

/** The branding of pages that are not about one product (a customer with licenses of several). */
export const neutralBranding: MailVariables = {
  productName: 'Your licenses',
  supportEmail: null,
  supportUrl: null,
  portalUrl: null,
  logoUrl: null,
  accentColor: null,
}

interface Layout {
  readonly title: string
  readonly brand: MailVariables
  /** The product whose accent colour the page takes; null: none. */
  readonly accentProductId: string | null
  /** Set on pages of a signed-in customer: the sign-out forms carry it. */
  readonly csrf: string | null
  readonly body: string
}

const layout = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title><%= it.title %> · <%= it.brand.productName %></title>
<link rel="stylesheet" href="/portal/assets/portal.css">
<% if (it.accentProductId && it.brand.accentColor) { %><link rel="stylesheet" href="/portal/assets/accent/<%= encodeURIComponent(it.accentProductId) %>.css">
<% } %><script src="/portal/assets/portal.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="bar">
<div class="brand"><% if (it.brand.logoUrl) { %><img src="<%= it.brand.logoUrl %>" alt="" height="32" width="32"><% } %><span><%= it.brand.productName %></span></div>
<% if (it.csrf) { %><form method="post" action="/portal/sign-out" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><button type="submit" class="secondary">Sign out</button></form><% } %>
</header>
<main id="main">
<%~ it.body %>
</main>
<footer>
<% if (it.brand.supportEmail) { %><p>Questions? Write to <a href="mailto:<%= it.brand.supportEmail %>"><%= it.brand.supportEmail %></a>.</p><% } %>
<% if (it.brand.supportUrl) { %><p><a href="<%= it.brand.supportUrl %>">Help and support</a></p><% } %>
</footer>
</body>
</html>
`

function page(input: Layout): string {
  return eta.renderString(layout, input)
}

const message = `<% if (it.error) { %><p class="error" role="alert"><%= it.error %></p><% } %><% if (it.notice) { %><p class="notice" role="status"><%= it.notice %></p><% } %>`

const signIn = `<h1>Sign in</h1>
${message}
<p>Enter the email address your license was issued to. We will mail you a 6-digit code.</p>
<form method="post" action="/portal/sign-in">
<% if (it.productId) { %><input type="hidden" name="product" value="<%= it.productId %>"><% } %>
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="320" value="<%= it.email %>">
<button type="submit">Mail me a code</button>
</form>
<% if (!it.canSendCodes) { %><p class="error" role="alert">Sign-in is not available: this server sends no mail.</p><% } %>`

export function signInPage(input: {
  readonly brand: MailVariables
  readonly productId: string | null
  readonly email: string
  readonly error: string | null
  readonly canSendCodes: boolean
}): string {
  return page({
    title: 'Sign in',
    brand: input.brand,
    accentProductId: input.productId,
    csrf: null,
    body: eta.renderString(signIn, { ...input, notice: null }),
  })
}

const codeEntry = `<h1>Enter your code</h1>
${message}
<p>If <strong><%= it.email %></strong> has licenses here, a 6-digit code is on its way to it. It works once, for 10 minutes.</p>
<form method="post" action="/portal/code">
<input type="hidden" name="email" value="<%= it.email %>">
<% if (it.productId) { %><input type="hidden" name="product" value="<%= it.productId %>"><% } %>
<label for="code">Code</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Sign in</button>
</form>
<p><a href="/portal<% if (it.productId) { %>?product=<%= encodeURIComponent(it.productId) %><% } %>">Use another address or ask for a new code</a></p>`

export function codePage(input: {
  readonly brand: MailVariables
  readonly productId: string | null
  readonly email: string
  readonly error: string | null
}): string {
  return page({
    title: 'Enter your code',
    brand: input.brand,
    accentProductId: input.productId,
    csrf: null,
    body: eta.renderString(codeEntry, { ...input, notice: null }),
  })
}

const licenses = `<h1>Your licenses</h1>
${message}
<p class="muted">Signed in as <%= it.email %>.</p>
<% if (it.licenses.length === 0) { %><p>No license is issued to this address.</p><% } %>
<% for (const item of it.licenses) { %>
<section class="license" aria-labelledby="<%= item.id %>-title">
<h2 id="<%= item.id %>-title"><%= item.productName %></h2>
<dl>
<dt>License key</dt>
<dd><code id="<%= item.id %>-key" class="key"><%= item.key %></code> <button type="button" class="secondary copy" data-copy="<%= item.id %>-key" hidden>Copy</button></dd>
<dt>Status</dt><dd><span class="status status-<%= item.status %>"><%= item.status %></span></dd>
<dt>Expires</dt><dd><%= item.expires %></dd>
<% if (item.entitlements.length > 0) { %><dt>Includes</dt><dd><%= item.entitlements.join(', ') %></dd><% } %>
<% if (item.usage) { %><dt>Usage</dt><dd><%= item.usage %></dd><% } %>
<dt>Machines</dt><dd><%= item.seats %></dd>
</dl>
<form method="post" action="/portal/licenses/<%= encodeURIComponent(item.id) %>/resend-key" class="inline">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<button type="submit" class="secondary">Mail me this key</button>
</form>
<p><a href="/portal/licenses/<%= encodeURIComponent(item.id) %>/offline">Machines without internet</a>: activate one with its request file, or free one with its deactivation code.</p>
<h3>Machines</h3>
<p class="muted"><%= item.transfers %></p>
<% if (item.machines.length === 0) { %><p>No machine uses this license.</p><% } else { %>
<ul class="machines">
<% for (const machine of item.machines) { %>
<li>
<div><strong><%= machine.name %></strong><% if (machine.platform) { %> · <%= machine.platform %><% } %><% if (machine.offline) { %> · activated offline<% } %><br><span class="muted">Last seen <%= machine.lastSeen %></span></div>
<div class="actions">
<form method="post" action="/portal/machines/<%= encodeURIComponent(machine.id) %>/license-file" class="inline">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<button type="submit" class="secondary" aria-label="Download a license file for <%= machine.name %>">License file</button>
</form>
<% if (machine.offline) { %><a href="/portal/licenses/<%= encodeURIComponent(item.id) %>/offline" aria-label="Free <%= machine.name %> with its deactivation code">Free with code</a><% } else { %><form method="post" action="/portal/machines/<%= encodeURIComponent(machine.id) %>/deactivate" class="inline">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<button type="submit" class="danger" aria-label="Deactivate <%= machine.name %>">Deactivate</button>
</form><% } %>
</div>
</li>
<% } %>
</ul>
<% } %>
</section>
<% } %>
<form method="post" action="/portal/sign-out-everywhere" class="inline">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<button type="submit" class="secondary">Sign out on every device</button>
</form>`

function day(date: Date): string {
  return date.toISOString().slice(0, 10)
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

export function licensesPage(input: {
  readonly brand: MailVariables
  readonly accentProductId: string | null
  readonly csrf: string
  readonly overview: PortalOverview
  readonly error: string | null
  readonly notice: string | null
}): string {
  const items = licenseItems(input.overview.licenses)
  return page({
    title: 'Your licenses',
    brand: input.brand,
    accentProductId: input.accentProductId,
    csrf: input.csrf,
    body: eta.renderString(licenses, {
      email: input.overview.customer.email,
      licenses: items,
      csrf: input.csrf,
      error: input.error,
      notice: input.notice,
    }),
  })
}

/** What the pages show of each license. */
function licenseItems(licenses: readonly PortalLicense[]) {
  return licenses.map(({ view, owned, machines, transfersLeft }) => {
    const { license, state } = view
    const periodDays = Math.round(owned.transferPeriod / 86_400)
    return {
      id: license.id,
      productName: owned.branding.productName,
      key: license.key,
      status: state.status,
      expires: license.expirationDate === null ? 'Never' : day(license.expirationDate),
      entitlements: license.entitlements,
      usage: license.maxUses === null ? null : `${license.uses} of ${license.maxUses} uses`,
      seats:
        license.maxActivations === null
          ? `${license.activationCount} (no limit)`
          : `${license.activationCount} of ${license.maxActivations}`,
      transfers:
        transfersLeft === null || owned.maxTransfers === null
          ? 'You may deactivate machines to move the license to another.'
          : `You may deactivate ${plural(transfersLeft, 'more machine')} now (at most ${owned.maxTransfers} in any ${plural(periodDays, 'day')}).`,
      machines: machines.map((machine) => ({
        id: machine.id,
        name: machine.name ?? machine.fingerprint,
        platform: machine.platform,
        lastSeen: day(machine.lastSeenAt),
        offline: machine.offline,
      })),
    }
  })
}

const offline = `<p><a href="/portal/licenses">← Your licenses</a></p>
<h1>Machines without internet</h1>
<p class="muted"><%= it.productName %> · <code class="key"><%= it.key %></code> · Machines: <%= it.seats %></p>
${message}
<section class="license" aria-labelledby="activate-title">
<h2 id="activate-title">Activate a machine offline</h2>
<p>On the machine, let the application save an activation request file. Bring it here (on a USB stick, say), upload it or paste its text, and take the license file you get back to the machine. The machine takes a seat of this license like any other.</p>
<form method="post" action="/portal/licenses/<%= encodeURIComponent(it.id) %>/offline/activate">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<div class="file-pick" hidden>
<label for="request-file">Request file</label>
<input id="request-file" type="file" accept=".req,.txt,text/plain" data-into="request" data-max="<%= it.maxRequest %>">
</div>
<label for="request">Request file's text</label>
<textarea id="request" name="request" rows="6" maxlength="<%= it.maxRequest %>" required spellcheck="false" placeholder="-----BEGIN KEYTURN ACTIVATION REQUEST-----"><%= it.request %></textarea>
<button type="submit">Get the license file</button>
</form>
</section>
<section class="license" aria-labelledby="free-title">
<h2 id="free-title">Free an offline machine</h2>
<% if (it.machines.length === 0) { %><p>No machine of this license was activated offline.</p><% } else { %>
<p>On the machine, let the application deactivate itself: it deletes its license file and shows a deactivation code. Enter the code here to free the machine's seat. <%= it.transfers %></p>
<form method="post" action="/portal/licenses/<%= encodeURIComponent(it.id) %>/offline/deactivate">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<label for="machine">Machine</label>
<select id="machine" name="machine" required>
<% for (const machine of it.machines) { %><option value="<%= machine.id %>"<% if (machine.id === it.machine) { %> selected<% } %>><%= machine.name %><% if (machine.platform) { %> (<%= machine.platform %>)<% } %></option>
<% } %></select>
<label for="code">Deactivation code</label>
<input id="code" name="code" maxlength="64" autocomplete="off" spellcheck="false" required placeholder="XXXX-XXXX-XXXX-XXXX" value="<%= it.code %>">
<button type="submit" class="danger">Free the machine</button>
</form>
<% } %>
</section>`

/** The page of one license for machines that never reach the server: a request file in, a code in. */
export function offlinePage(input: {
  readonly brand: MailVariables
  readonly accentProductId: string | null
  readonly csrf: string
  readonly item: PortalLicense
  readonly maxRequest: number
  readonly request: string
  readonly machine: string
  readonly code: string
  readonly error: string | null
  readonly notice: string | null
}): string {
  const { view, owned } = input.item
  const [summary] = licenseItems([input.item])
  return page({
    title: 'Machines without internet',
    brand: input.brand,
    accentProductId: input.accentProductId,
    csrf: input.csrf,
    body: eta.renderString(offline, {
      id: view.license.id,
      productName: owned.branding.productName,
      key: view.license.key,
      seats: summary?.seats,
      transfers: summary?.transfers,
      machines: (summary?.machines ?? []).filter((machine) => machine.offline),
      csrf: input.csrf,
      maxRequest: input.maxRequest,
      request: input.request,
      machine: input.machine,
      code: input.code,
      error: input.error,
      notice: input.notice,
    }),
  })
}

const offlineFile = `<p><a href="/portal/licenses/<%= encodeURIComponent(it.id) %>/offline">← Machines without internet</a></p>
<h1>License file for <%= it.machineName %></h1>
<p class="notice" role="status">The machine is activated. Take this license file to it: download it, or copy its text into a file there.</p>
<form method="post" action="/portal/licenses/<%= encodeURIComponent(it.id) %>/offline/activate" class="inline">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<input type="hidden" name="request" value="<%= it.request %>">
<input type="hidden" name="download" value="1">
<button type="submit">Download <%= it.fileName %></button>
</form>
<button type="button" class="secondary copy" data-copy="license-file" hidden>Copy</button>
<pre id="license-file" class="file" tabindex="0" aria-label="License file"><%= it.licenseFile %></pre>`

/** The answer to a request file: the machine's license file, to download or copy. */
export function offlineFilePage(input: {
  readonly brand: MailVariables
  readonly accentProductId: string | null
  readonly csrf: string
  readonly licenseId: string
  readonly request: string
  readonly machineName: string
  readonly fileName: string
  readonly licenseFile: string
}): string {
  return page({
    title: 'License file',
    brand: input.brand,
    accentProductId: input.accentProductId,
    csrf: input.csrf,
    body: eta.renderString(offlineFile, { ...input, id: input.licenseId }),
  })
}

const plain = `<h1><%= it.heading %></h1>
<p><%= it.text %></p>
<p><a href="<%= it.link %>"><%= it.linkText %></a></p>`

/** A page that says one thing (not found, session ended, refused) with a way on. */
export function messagePage(input: {
  readonly heading: string
  readonly text: string
  readonly link: string
  readonly linkText: string
}): string {
  return page({
    title: input.heading,
    brand: neutralBranding,
    accentProductId: null,
    csrf: null,
    body: eta.renderString(plain, input),
  })
}
