import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import { type ErrorCode, errorCatalogue, problemType } from '@keyturn/protocol'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { assertProblem } from '../testing/problems.js'
import { errorCatalogueMarkdown } from './problem-pages.js'

const codes = Object.keys(errorCatalogue) as ErrorCode[]

describeEachDatabase('GET /problems and /problems/<code>', (database) => {
  it('serves an HTML page at every problem type, with its status, title, meaning and action', async (t) => {
    const { app } = await buildTestApp(t, database)

    for (const code of codes) {
      const res = await app.inject({ method: 'GET', url: problemType(code) })

      assert.equal(res.statusCode, 200, `${code}: ${res.body}`)
      assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/)
      const { status, title } = errorCatalogue[code]
      assert.ok(res.body.includes(`<h1>${code}: ${title.replaceAll("'", '&#39;')}</h1>`), res.body)
      assert.ok(res.body.includes(`<dd>${status}</dd>`), res.body)
      assert.ok(res.body.includes('<h2>What it means</h2>') && res.body.includes('<h2>What to do</h2>'))
    }
  })

  it('renders the catalogue text escaped, with code spans as <code>', async (t) => {
    const { app } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/problems/unauthenticated' })

    assert.ok(res.body.includes('No <code>Authorization: Bearer &#60;key&#62;</code> header'), res.body)
  })

  it('lists every code on the index page, linked to its page', async (t) => {
    const { app } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/problems' })

    assert.equal(res.statusCode, 200, res.body)
    for (const code of codes) {
      assert.ok(res.body.includes(`<a href="${problemType(code)}"><code>${code}</code></a>`), code)
    }
  })

  it('answers 404 route_not_found for a code that does not exist', async (t) => {
    const { app } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/problems/no_such_code' })

    assertProblem(res, 404, 'route_not_found')
  })

  it('is resolvable from a problem answer: its type is a path on the same server', async (t) => {
    const { app } = await buildTestApp(t, database)
    const problem = await app.inject({ method: 'GET', url: '/api/v0/licenses' })

    const page = await app.inject({
      method: 'GET',
      url: new URL(problem.json().type, 'http://keyturn.test/api/v0/licenses').pathname,
    })

    assert.equal(page.statusCode, 200)
    assert.ok(page.body.includes('unauthenticated: Authentication required'))
  })

  it('is the catalogue docs/errors.md shows', () => {
    const errorsMd = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8')

    assert.ok(
      errorsMd.includes(`<!-- catalogue:start -->\n${errorCatalogueMarkdown()}\n<!-- catalogue:end -->`),
      'docs/errors.md is out of date: run `npm run openapi` and commit the result.',
    )
  })
})
