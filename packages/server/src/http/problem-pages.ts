/**
 * @module The pages a problem's `type` points at: `GET /problems/<code>` describes one error code
 * and `GET /problems` lists them all, both generated from the protocol's one error catalogue.
 */
import { type ErrorCode, type ErrorDescription, errorCatalogue, problemType } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from './app-types.js'
import { problemFor, sendProblem } from './error-handler.js'

const codes = Object.keys(errorCatalogue) as ErrorCode[] // the catalogue's keys are exactly the codes

/** Registers both pages on `app` (outside the API prefix: a problem `type` resolves against the host). */
export function registerProblemPages(app: App): void {
  app.get('/problems', async (_request, reply) => reply.type('text/html; charset=utf-8').send(indexPage()))
  app.get(
    '/problems/:code',
    { schema: { params: Type.Object({ code: Type.String({ maxLength: 64 }) }) } },
    async (request, reply) => {
      const { code } = request.params
      if (!isErrorCode(code)) {
        const detail = `No error code ${code}; GET /problems lists them.`
        return sendProblem(reply, problemFor('route_not_found', detail, request.id))
      }
      return reply.type('text/html; charset=utf-8').send(codePage(code, errorCatalogue[code]))
    },
  )
}

/**
 * The catalogue as the Markdown table of docs/errors.md, which `npm run openapi` rewrites between
 * its `catalogue` markers (a test fails when it is out of date).
 */
export function errorCatalogueMarkdown(): string {
  const header = ['code', 'status', 'meaning', 'what the client should do']
  const rows = codes.map((code) => {
    const { status, meaning, action } = errorCatalogue[code]
    return [`\`${code}\``, String(status), meaning, action].map((text) => text.replaceAll('|', '\\|'))
  })
  // Padded as Biome formats Markdown tables, so `biome ci` accepts the generated file.
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => [...(row[column] ?? '')].length)),
  )
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell + ' '.repeat((widths[column] ?? 0) - [...cell].length)).join(' | ')} |`
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(errorCatalogue, code)
}

function indexPage(): string {
  const rows = codes
    .map((code) => {
      const { status, title } = errorCatalogue[code]
      return `<tr><td><a href="${problemType(code)}"><code>${code}</code></a></td><td>${status}</td><td>${escapeHtml(title)}</td></tr>`
    })
    .join('\n')
  return page(
    'Keyturn error codes',
    `<p>Every Keyturn error is an <a href="https://www.rfc-editor.org/rfc/rfc9457">RFC 9457</a> problem
(<code>application/problem+json</code>) whose <code>type</code> is one of these pages and whose
<code>code</code> is the one to switch on. Codes are never renamed or reused; treat an unknown code by
its HTTP status.</p>
<table>
<thead><tr><th>code</th><th>status</th><th>title</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`,
  )
}

function codePage(code: ErrorCode, { status, title, meaning, action }: ErrorDescription): string {
  return page(
    `${code}: ${title}`,
    `<dl>
<dt>code</dt><dd><code>${code}</code></dd>
<dt>HTTP status</dt><dd>${status}</dd>
<dt>title</dt><dd>${escapeHtml(title)}</dd>
</dl>
<h2>What it means</h2>
<p>${inlineMarkdown(meaning)}</p>
<h2>What to do</h2>
<p>${inlineMarkdown(action)}</p>
<p>The problem's <code>detail</code> explains the occurrence and <code>requestId</code> names it in the
server's log. <a href="/problems">All error codes</a> · <a href="/docs">API reference</a></p>`,
  )
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Keyturn</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
code { font-family: ui-monospace, monospace; background: #f2f2f2; padding: 0 .2em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; }
dt { font-weight: bold; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`
}

/** The catalogue's Markdown is text with `code` spans only. */
function inlineMarkdown(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
