import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { answerSignatureBase } from '@keyturn/protocol'
import { buildTestApp, testAdminSecret } from '../testing/build-test-app.js'
import { sqliteTestDatabase } from '../testing/each-database.js'
import { createLicense } from '../testing/licenses.js'
import { conformanceVectors, conformanceVectorsJson } from './vectors.js'

const committedPath = new URL('../../../../conformance/vectors.json', import.meta.url)
const sdksPage = new URL('../../../../docs/sdks.md', import.meta.url)

const decodePart = (part: string | undefined) =>
  JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>

describe('the conformance vectors', () => {
  it('match the committed conformance/vectors.json', async () => {
    const generated = await conformanceVectorsJson()
    assert.ok(
      readFileSync(committedPath, 'utf8') === generated,
      'conformance/vectors.json is out of date: run `npm run conformance` and commit the result.',
    )
  })

  it('are the same on every run (fixed keys, ids and times)', async () => {
    assert.equal(await conformanceVectorsJson(), await conformanceVectorsJson())
  })

  it('hold tokens shaped like the ones the server issues: the same header and claims, in order', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, sqliteTestDatabase())
    const license = await createLicense(app, headers, { productId, maxActivations: 1 })
    await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/activations`,
      headers,
      payload: { fingerprint: 'machine-1' },
    })
    const issued = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: { authorization: `Bearer ${testAdminSecret}` },
      payload: { customPayload: { plan: 'pro' }, fingerprint: 'machine-1' },
    })
    assert.equal(issued.statusCode, 201, issued.body)
    const [realHeader, realClaims] = (issued.json().token as string).split('.').slice(0, 2).map(decodePart)
    const vectors = (await conformanceVectors()) as { tokens: { name: string; token: string }[] }
    const rich = vectors.tokens.find((vector) => vector.name === 'valid-custom-fields-entitlements')
    const [vectorHeader, vectorClaims] = (rich?.token ?? '').split('.').slice(0, 2).map(decodePart)
    assert.deepEqual(Object.keys(vectorHeader ?? {}), Object.keys(realHeader ?? {}))
    // The server writes `fingerprint` after `customFields` when bound; the rich vector is unbound.
    assert.deepEqual(
      Object.keys(vectorClaims ?? {}),
      Object.keys(realClaims ?? {}).filter((name) => name !== 'fingerprint'),
    )
  })

  it("match docs/sdks.md's example of a signature base (the valid answer's)", async () => {
    const vectors = (await conformanceVectors()) as {
      signedAnswers: {
        name: string
        answer: { status: number; method: string; path: string; headers: Record<string, string> }
      }[]
    }
    const valid = vectors.signedAnswers.find((vector) => vector.name === 'valid')?.answer
    assert.ok(valid !== undefined)
    const base = answerSignatureBase({
      status: valid.status,
      contentDigest: valid.headers['content-digest'] ?? '',
      date: valid.headers.date ?? '',
      method: valid.method,
      path: valid.path,
      signatureParams: (valid.headers['signature-input'] ?? '').replace(/^keyturn=/, ''),
    })
    const documented = /```text\n([^`]*?"@signature-params"[^`]*?)\n\s*```/.exec(
      readFileSync(sdksPage, 'utf8'),
    )?.[1]
    assert.equal(
      documented
        ?.split('\n')
        .map((line) => line.trim())
        .join('\n'),
      base,
    )
  })
})
