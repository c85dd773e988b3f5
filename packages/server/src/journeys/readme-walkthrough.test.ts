/**
 * @module The walkthroughs, run as written: every `curl` of the "Walkthrough" section of README.md
 * (the short one) and of docs/getting-started.md (every field shown) is sent to a real app in order,
 * and each answer must have the shape the page shows after it (the same fields, a `"…"` member
 * standing for the rest; values equal except ids, keys, timestamps and key material, which differ
 * on every run).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { it, type TestContext } from 'node:test'
import { buildApp } from '../app.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { FixedClock } from '../testing/fixed-clock.js'

/** The pages with a walkthrough, from the repository's root. */
const pages = ['README.md', 'docs/getting-started.md']

interface Step {
  readonly command: string
  readonly documented: unknown
}

/** The `sh` blocks of the walkthrough that run `curl`, each with the `json` block that follows it. */
function walkthroughSteps(page: string): { variables: string; steps: Step[] } {
  const text = readFileSync(new URL(`../../../../${page}`, import.meta.url), 'utf8')
  const start = text.indexOf('## Walkthrough')
  assert.ok(start >= 0, `${page} has a "## Walkthrough" section`)
  const section = text.slice(start, text.indexOf('\n## ', start + 1))
  const blocks = [...section.matchAll(/```(sh|json)\n([\s\S]*?)```/g)].map(([, kind, text]) => ({
    kind,
    text: text ?? '',
  }))
  const steps: Step[] = []
  blocks.forEach((block, index) => {
    const next = blocks[index + 1]
    if (block.kind === 'sh' && block.text.trimStart().startsWith('curl') && next?.kind === 'json') {
      steps.push({ command: block.text, documented: JSON.parse(next.text) })
    }
  })
  return { variables: blocks[0]?.text ?? '', steps }
}

/** Splits a shell command into words: quotes, `\` line continuations and `$VARIABLES`. */
function shellWords(command: string, variables: Record<string, string>): string[] {
  const text = command.replace(/\\\n/g, ' ')
  const words: string[] = []
  let word: string | undefined
  const expand = (name: string) => {
    const value = variables[name]
    assert.ok(value !== undefined, `the walkthrough uses $${name} before setting it`)
    return value
  }
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? ''
    if (/\s/.test(char)) {
      if (word !== undefined) {
        words.push(word)
      }
      word = undefined
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1)
      word = (word ?? '') + text.slice(i + 1, end)
      i = end
    } else if (char === '"') {
      let value = ''
      for (i++; text[i] !== '"'; i++) {
        if (text[i] === '\\') {
          value += text[++i]
        } else if (text[i] === '$') {
          const name = /^[A-Z_]+/.exec(text.slice(i + 1))?.[0] ?? ''
          value += expand(name)
          i += name.length
        } else {
          value += text[i]
        }
      }
      word = (word ?? '') + value
    } else if (char === '$') {
      const name = /^[A-Z_]+/.exec(text.slice(i + 1))?.[0] ?? ''
      word = (word ?? '') + expand(name)
      i += name.length
    } else {
      word = (word ?? '') + char
    }
  }
  if (word !== undefined) {
    words.push(word)
  }
  return words
}

function toRequest(words: string[]) {
  let method: string | undefined
  let url = ''
  let payload: string | undefined
  const headers: Record<string, string> = {}
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? ''
    if (word === '-s') {
      continue
    }
    const value = words[++i] ?? ''
    if (word === '-X') {
      method = value
    } else if (word === '-H') {
      const colon = value.indexOf(':')
      headers[value.slice(0, colon).toLowerCase()] = value.slice(colon + 1).trim()
    } else if (word === '-d') {
      payload = value
    } else {
      url = word
      i--
    }
  }
  const { pathname, search } = new URL(url)
  return {
    method: (method ?? (payload === undefined ? 'GET' : 'POST')) as 'GET' | 'POST',
    url: `${pathname}${search}`,
    headers,
    ...(payload === undefined ? {} : { payload }),
  }
}

/** The kind of a value that differs on every run (compared by kind only), or undefined. */
function runSpecificKind(value: string): string | undefined {
  const id = /^(prd|lic|key|act|req)_[0-9A-Za-z]{22}$/.exec(value)
  if (id) {
    return `${id[1]} id`
  }
  if (/^[0-9A-Z]{5}(-[0-9A-Z]{5}){4}$/.test(value)) {
    return 'license key'
  }
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value)) {
    return 'timestamp'
  }
  if (value.startsWith('-----BEGIN PUBLIC KEY-----')) {
    return 'PEM key'
  }
  return /^[\w-]{43}$/.test(value) ? 'base64url key or thumbprint' : undefined
}

/** Every difference between what the page shows and what the server answered, as JSON paths. */
function differences(documented: unknown, actual: unknown, path = '$'): string[] {
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual) || actual.length !== documented.length) {
      return [
        `${path}: the page shows ${documented.length} items, the server answered ${JSON.stringify(actual)}`,
      ]
    }
    return documented.flatMap((item, index) => differences(item, actual[index], `${path}[${index}]`))
  }
  if (typeof documented === 'object' && documented !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
      return [`${path}: the page shows an object, the server answered ${JSON.stringify(actual)}`]
    }
    const shown = Object.keys(documented).filter((key) => key !== '…')
    const answered = Object.keys(actual)
    const found = shown.flatMap((key) =>
      key in actual
        ? differences(
            (documented as Record<string, unknown>)[key],
            (actual as Record<string, unknown>)[key],
            `${path}.${key}`,
          )
        : [`${path}.${key}: shown on the page, not in the answer`],
    )
    if (!('…' in documented)) {
      found.push(
        ...answered
          .filter((key) => !shown.includes(key))
          .map((key) => `${path}.${key}: missing from the page`),
      )
    }
    return found
  }
  const kind = typeof documented === 'string' ? runSpecificKind(documented) : undefined
  if (kind !== undefined && typeof actual === 'string') {
    return runSpecificKind(actual) === kind
      ? []
      : [`${path}: the page shows ${documented}, the server answered ${actual}`]
  }
  return documented === actual
    ? []
    : [`${path}: the page shows ${JSON.stringify(documented)}, the server answered ${JSON.stringify(actual)}`]
}

describeEachDatabase('the walkthroughs of README.md and docs/getting-started.md', (database) => {
  for (const page of pages) {
    it(`answers every curl of ${page}'s walkthrough with the JSON it shows`, (t) => runWalkthrough(t, page))
  }

  async function runWalkthrough(t: TestContext, page: string) {
    const { variables: preamble, steps } = walkthroughSteps(page)
    const variables: Record<string, string> = {}
    for (const [, name, value] of preamble.matchAll(/^(\w+)="?(.*?)"?$/gm)) {
      variables[name ?? ''] = value ?? ''
    }
    const adminKey = /Bearer (kt_admin_\w+)/.exec(variables.AUTH ?? '')?.[1]
    assert.ok(adminKey, 'the walkthrough sets AUTH to an admin key')
    const connection = await database.open()
    const { app, services } = buildApp({
      db: connection.db,
      clock: new FixedClock('2026-11-21T18:21:34.471Z'), // the pages' time: their 2030 expiration is in the future
      secretKeys: deriveSecretKeys('test-master-secret-with-at-least-32-characters'),
      logger: false,
    })
    t.after(async () => {
      await app.close()
      await connection.close()
    })
    await services.apiKeys.bootstrapAdmin(adminKey)

    assert.ok(steps.length >= 8, `found ${steps.length} curl examples`)
    for (const { command, documented } of steps) {
      const request = toRequest(shellWords(command, variables))
      if (request.method === 'GET' && request.url.startsWith('/api/v0/licenses?filter')) {
        // "here after creating two more licenses, one of them unlimited and never expiring, and revoking the other"
        const create = (payload: object) =>
          app.inject({ method: 'POST', url: '/api/v0/licenses', headers: request.headers, payload })
        await create({ productId: variables.PRODUCT, maxActivations: null, expirationDate: null })
        const other = await create({ productId: variables.PRODUCT })
        await app.inject({
          method: 'POST',
          url: `/api/v0/licenses/${other.json().id}/revoke`,
          headers: request.headers,
        })
      }

      const res = await app.inject(request)

      assert.ok(res.statusCode < 500, res.body)
      assert.deepEqual(differences(documented, res.json()), [], `${request.method} ${request.url}`)
      // Later commands use what earlier ones created, as the page tells the reader to copy it.
      const answer = res.json()
      if (answer.object === 'Product' && variables.PRODUCT === undefined) {
        variables.PRODUCT = answer.id
      }
      if (answer.object === 'License' && variables.LICENSE === undefined) {
        variables.LICENSE = answer.id
        variables.LICENSE_KEY = answer.key
      }
    }
  }
})
