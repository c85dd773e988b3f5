import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { noBranding } from '@keyturn/protocol'
import { Eta } from 'eta'

/** The mails Keyturn sends; each has a subject, a plain-text and an HTML template. */
export type MailTemplateName =
  | 'portal-sign-in'
  | 'license-issued'
  | 'license-renewed'
  | 'license-expiring'
  | 'license-expired'
  | 'machine-deactivated'
  | 'operator-invitation'
  | 'operator-password-reset'

/** What every template may use (`it.productName`, …, from the product's branding); the per-mail fields come beside it. */
export interface MailVariables {
  readonly productName: string
  readonly supportEmail: string | null
  readonly supportUrl: string | null
  readonly portalUrl: string | null
  readonly logoUrl: string | null
  readonly accentColor: string | null
  readonly [field: string]: unknown
}

/** The shared variables from a product's name and stored branding (JSON, null when never set). */
export function brandingVariables(name: string, brandingJson: string | null): MailVariables {
  const branding = { ...noBranding, ...(brandingJson === null ? {} : (JSON.parse(brandingJson) as object)) }
  return {
    productName: branding.displayName ?? name,
    supportEmail: branding.supportEmail,
    supportUrl: branding.supportUrl,
    portalUrl: branding.portalUrl,
    logoUrl: branding.logoUrl,
    accentColor: branding.accentColor,
  }
}

interface Template {
  readonly subject: string
  readonly text: string
  readonly html: string
}

const footerText = `<% if (it.supportEmail) { %>
Questions? Write to <%= it.supportEmail %>.<% } %><% if (it.supportUrl) { %>
Help: <%= it.supportUrl %><% } %><% if (it.portalUrl) { %>
Manage your licenses: <%= it.portalUrl %><% } %>
`
/** The HTML mails start with the product's logo when it has one; links take its accent colour. */
const headerHtml = `<% if (it.logoUrl) { %><p><img src="<%= it.logoUrl %>" alt="<%= it.productName %>" height="40"></p>
<% } %>`
const footerHtml = `<% if (it.supportEmail) { %><p>Questions? Write to <a href="mailto:<%= it.supportEmail %>"<% if (it.accentColor) { %> style="color: <%= it.accentColor %>"<% } %>><%= it.supportEmail %></a>.</p><% } %>
<% if (it.supportUrl) { %><p><a href="<%= it.supportUrl %>"<% if (it.accentColor) { %> style="color: <%= it.accentColor %>"<% } %>>Help</a></p><% } %>
<% if (it.portalUrl) { %><p><a href="<%= it.portalUrl %>"<% if (it.accentColor) { %> style="color: <%= it.accentColor %>"<% } %>>Manage your licenses</a></p><% } %>`

const builtIn: Record<MailTemplateName, Template> = {
  // Essential: sent whatever the customer's mailOptOut says.
  'portal-sign-in': {
    subject: 'Your <%= it.productName %> sign-in code',
    text: `Your code to sign in to <%= it.productName %>: <%= it.code %>

It works once, for <%= it.minutes %> minutes. If you did not ask for it, ignore this mail.
${footerText}`,
    html: `${headerHtml}<p>Your code to sign in to <strong><%= it.productName %></strong>:</p>
<p style="font-size: 24px; letter-spacing: 4px"><strong><%= it.code %></strong></p>
<p>It works once, for <%= it.minutes %> minutes. If you did not ask for it, ignore this mail.</p>
${footerHtml}`,
  },
  'license-issued': {
    subject: 'Your <%= it.productName %> license',
    text: `Your license for <%= it.productName %> is ready.

License key: <%= it.key %>
<% if (it.expiresAt) { %>Valid until: <%= it.expiresAt %>
<% } %>${footerText}`,
    html: `${headerHtml}<p>Your license for <strong><%= it.productName %></strong> is ready.</p>
<p>License key: <code><%= it.key %></code></p>
<% if (it.expiresAt) { %><p>Valid until: <%= it.expiresAt %></p><% } %>
${footerHtml}`,
  },
  'license-renewed': {
    subject: 'Your <%= it.productName %> license was renewed',
    text: `Your license for <%= it.productName %> was renewed.
<% if (it.expiresAt) { %>It is now valid until <%= it.expiresAt %>.
<% } %>${footerText}`,
    html: `${headerHtml}<p>Your license for <strong><%= it.productName %></strong> was renewed.</p>
<% if (it.expiresAt) { %><p>It is now valid until <%= it.expiresAt %>.</p><% } %>
${footerHtml}`,
  },
  'license-expiring': {
    subject: 'Your <%= it.productName %> license expires on <%= it.expiresAt %>',
    text: `Your license for <%= it.productName %> expires on <%= it.expiresAt %> (in <%= it.expiresInDays %> days).
Renew it to keep using <%= it.productName %>.
${footerText}`,
    html: `${headerHtml}<p>Your license for <strong><%= it.productName %></strong> expires on <%= it.expiresAt %> (in <%= it.expiresInDays %> days).</p>
<p>Renew it to keep using <%= it.productName %>.</p>
${footerHtml}`,
  },
  'license-expired': {
    subject: 'Your <%= it.productName %> license has expired',
    text: `Your license for <%= it.productName %> expired on <%= it.expiresAt %>.
${footerText}`,
    html: `${headerHtml}<p>Your license for <strong><%= it.productName %></strong> expired on <%= it.expiresAt %>.</p>
${footerHtml}`,
  },
  'machine-deactivated': {
    subject: 'A machine was removed from your <%= it.productName %> license',
    text: `The machine "<%= it.machineName %>" no longer uses your <%= it.productName %> license.
${footerText}`,
    html: `${headerHtml}<p>The machine <strong><%= it.machineName %></strong> no longer uses your <strong><%= it.productName %></strong> license.</p>
${footerHtml}`,
  },
  // To operators (the dashboard's people), not customers: no product branding, essential.
  'operator-invitation': {
    subject: 'You are invited to the Keyturn dashboard',
    text: `<%= it.invitedBy %> invited you to the Keyturn dashboard as <%= it.role %>.

Choose your password here (the link works once, for <%= it.days %> days):
<%= it.link %>

If you did not expect this mail, ignore it.
`,
    html: `<p><%= it.invitedBy %> invited you to the Keyturn dashboard as <strong><%= it.role %></strong>.</p>
<p><a href="<%= it.link %>">Choose your password</a> (the link works once, for <%= it.days %> days).</p>
<p>If you did not expect this mail, ignore it.</p>
`,
  },
  'operator-password-reset': {
    subject: 'Reset your Keyturn dashboard password',
    text: `Someone asked to reset the password of your Keyturn dashboard account (<%= it.email %>).

Choose a new password here (the link works once, for <%= it.minutes %> minutes):
<%= it.link %>

Setting it signs you out everywhere. If you did not ask for it, ignore this mail: your password stays as it is.
`,
    html: `<p>Someone asked to reset the password of your Keyturn dashboard account (<%= it.email %>).</p>
<p><a href="<%= it.link %>">Choose a new password</a> (the link works once, for <%= it.minutes %> minutes).</p>
<p>Setting it signs you out everywhere. If you did not ask for it, ignore this mail: your password stays as it is.</p>
`,
  },
}

/**
 * Renders mails with Eta. HTML bodies escape every `<%= %>` variable; subjects and plain text are
 * not HTML and are left as they are. A folder (KEYTURN_MAIL_TEMPLATES) may replace any part of any
 * template: `<name>.subject.eta`, `<name>.txt.eta`, `<name>.html.eta` (e.g. `license-issued.html.eta`).
 */
export class MailTemplates {
  readonly #html = new Eta({ autoEscape: true, autoTrim: false })
  readonly #plain = new Eta({ autoEscape: false, autoTrim: false })
  readonly #templates: Record<MailTemplateName, Template>

  constructor(overrideFolder?: string) {
    const read = (name: string, part: string, fallback: string) => {
      const path = overrideFolder === undefined ? undefined : join(overrideFolder, `${name}.${part}.eta`)
      return path !== undefined && existsSync(path) ? readFileSync(path, 'utf8') : fallback
    }
    this.#templates = Object.fromEntries(
      Object.entries(builtIn).map(([name, template]) => [
        name,
        {
          subject: read(name, 'subject', template.subject),
          text: read(name, 'txt', template.text),
          html: read(name, 'html', template.html),
        },
      ]),
    ) as Record<MailTemplateName, Template>
  }

  render(name: MailTemplateName, variables: MailVariables): { subject: string; text: string; html: string } {
    const template = this.#templates[name]
    return {
      // One line: a line break in a subject would start a new mail header.
      subject: this.#plain.renderString(template.subject, variables).replace(/\s+/g, ' ').trim(),
      text: this.#plain.renderString(template.text, variables),
      html: this.#html.renderString(template.html, variables),
    }
  }
}
