import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Eta } from 'eta'

/** The mails Keyturn sends; each has a subject, a plain-text and an HTML template. */
export type MailTemplateName =
  | 'license-issued'
  | 'license-renewed'
  | 'license-expiring'
  | 'license-expired'
  | 'machine-deactivated'

/** What every template may use (`it.productName`, …); the per-mail fields come beside it. */
export interface MailVariables {
  readonly productName: string
  readonly supportEmail: string | null
  readonly portalUrl: string | null
  readonly [field: string]: unknown
}

interface Template {
  readonly subject: string
  readonly text: string
  readonly html: string
}

const footerText = `<% if (it.supportEmail) { %>
Questions? Write to <%= it.supportEmail %>.<% } %><% if (it.portalUrl) { %>
Manage your licenses: <%= it.portalUrl %><% } %>
`
const footerHtml = `<% if (it.supportEmail) { %><p>Questions? Write to <a href="mailto:<%= it.supportEmail %>"><%= it.supportEmail %></a>.</p><% } %>
<% if (it.portalUrl) { %><p><a href="<%= it.portalUrl %>">Manage your licenses</a></p><% } %>`

const builtIn: Record<MailTemplateName, Template> = {
  'license-issued': {
    subject: 'Your <%= it.productName %> license',
    text: `Your license for <%= it.productName %> is ready.

License key: <%= it.key %>
<% if (it.expiresAt) { %>Valid until: <%= it.expiresAt %>
<% } %>${footerText}`,
    html: `<p>Your license for <strong><%= it.productName %></strong> is ready.</p>
<p>License key: <code><%= it.key %></code></p>
<% if (it.expiresAt) { %><p>Valid until: <%= it.expiresAt %></p><% } %>
${footerHtml}`,
  },
  'license-renewed': {
    subject: 'Your <%= it.productName %> license was renewed',
    text: `Your license for <%= it.productName %> was renewed.
<% if (it.expiresAt) { %>It is now valid until <%= it.expiresAt %>.
<% } %>${footerText}`,
    html: `<p>Your license for <strong><%= it.productName %></strong> was renewed.</p>
<% if (it.expiresAt) { %><p>It is now valid until <%= it.expiresAt %>.</p><% } %>
${footerHtml}`,
  },
  'license-expiring': {
    subject: 'Your <%= it.productName %> license expires on <%= it.expiresAt %>',
    text: `Your license for <%= it.productName %> expires on <%= it.expiresAt %> (in <%= it.expiresInDays %> days).
Renew it to keep using <%= it.productName %>.
${footerText}`,
    html: `<p>Your license for <strong><%= it.productName %></strong> expires on <%= it.expiresAt %> (in <%= it.expiresInDays %> days).</p>
<p>Renew it to keep using <%= it.productName %>.</p>
${footerHtml}`,
  },
  'license-expired': {
    subject: 'Your <%= it.productName %> license has expired',
    text: `Your license for <%= it.productName %> expired on <%= it.expiresAt %>.
${footerText}`,
    html: `<p>Your license for <strong><%= it.productName %></strong> expired on <%= it.expiresAt %>.</p>
${footerHtml}`,
  },
  'machine-deactivated': {
    subject: 'A machine was removed from your <%= it.productName %> license',
    text: `The machine "<%= it.machineName %>" no longer uses your <%= it.productName %> license.
${footerText}`,
    html: `<p>The machine <strong><%= it.machineName %></strong> no longer uses your <strong><%= it.productName %></strong> license.</p>
${footerHtml}`,
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
