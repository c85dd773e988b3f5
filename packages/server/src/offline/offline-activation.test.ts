import assert from 'node:assert/strict'
import { it } from 'node:test'
import { createActivationRequest, createDeactivationCode, verifyLicenseFile } from '@keyturn/client'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, createProduct, productKeyHeaders, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { listEvents } from '../testing/events.js'
import { createLicense } from '../testing/licenses.js'
import { assertProblem } from '../testing/problems.js'

function activateOffline(test: TestApp, request: string, headers = test.headers) {
  return test.app.inject({
    method: 'POST',
    url: '/api/v0/licenses/activate-offline',
    headers,
    payload: { request },
  })
}

function deactivateOffline(test: TestApp, activationId: string, code: string) {
  return test.app.inject({
    method: 'POST',
    url: `/api/v0/activations/${activationId}/deactivate-offline`,
    headers: test.headers,
    payload: { code },
  })
}

async function publicKeyOf(test: TestApp, productId: string): Promise<string> {
  const res = await test.app.inject({
    method: 'GET',
    url: `/api/v0/products/${productId}`,
    headers: test.headers,
  })
  return res.json().publicKey
}

function created(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The request with its payload edited and its HMAC kept: what an alteration in transit looks like. */
function tamper(request: string, edit: (payload: Record<string, unknown>) => void): string {
  const lines = request.trim().split('\n')
  const [payloadPart, mac] = lines.slice(1, -1).join('').split('.')
  const payload = JSON.parse(Buffer.from(payloadPart ?? '', 'base64url').toString('utf8'))
  edit(payload)
  const body = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`
  return `${lines[0]}\n${body}\n${lines.at(-1)}\n`
}

describeEachDatabase(
  'offline activation: POST /licenses/activate-offline, /activations/:id/deactivate-offline',
  (database) => {
    it('round trip: request → encrypted machine file → verified on the machine; the same request again, the same file; a code frees the seat', async (t) => {
      const test = await buildTestApp(t, database)
      const { productId, clock } = test
      const license = await createLicense(test.app, test.headers, { productId, maxActivations: 2 })
      const publicKey = await publicKeyOf(test, productId)
      const fingerprint = 'air-gapped-lab-pc-4'
      const request = await createActivationRequest({
        licenseKey: license.key.toLowerCase().replaceAll('-', ''), // as a user may type it
        productId,
        fingerprint,
        name: 'Lab PC 4',
        platform: 'linux-x64',
        now: clock.now(),
      })
      assert.ok(!request.includes(license.key), 'a request file never holds the license key')

      const first = created(
        await activateOffline(test, request, await productKeyHeaders(test.app, test.headers, productId)),
      )
      assert.equal(first.activation.licenseId, license.id)
      assert.equal(first.activation.fingerprint, fingerprint)
      assert.equal(first.activation.name, 'Lab PC 4')
      assert.deepEqual(first.activation.metadata, { platform: 'linux-x64' })
      const file = await verifyLicenseFile(first.licenseFile, {
        productId,
        publicKey,
        licenseKey: license.key,
        fingerprint,
        now: clock.now(),
      })
      assert.equal(file.encrypted, true)
      assert.equal(file.activationId, first.activation.id)
      assert.equal(first.expiresAt, file.expiresAt)
      const secret = file.deactivationSecret
      assert.ok(secret !== undefined && secret.length === 43)
      await assert.rejects(
        verifyLicenseFile(first.licenseFile, {
          productId,
          publicKey,
          licenseKey: license.key,
          fingerprint: 'another-pc',
          now: clock.now(),
        }),
        { code: 'decryption_failed' },
      )

      clock.advance(60_000)
      const again = created(await activateOffline(test, request))
      assert.equal(again.activation.id, first.activation.id)
      assert.equal(again.licenseFile, first.licenseFile, 'the same request answers the same file')
      const count = (
        await test.app.inject({ method: 'GET', url: `/api/v0/licenses/${license.id}`, headers: test.headers })
      ).json()
      assert.equal(count.activationCount, 1, 'a repeated request takes no second seat')
      const createdEvents = await listEvents(test.app, test.headers, 'filter=type:eq:activation.created')
      assert.equal(createdEvents.length, 1)
      assert.equal(createdEvents[0]?.data.mode, 'offline')

      clock.advance(3_600_000)
      const code = await createDeactivationCode({
        activationId: first.activation.id,
        secret,
        now: clock.now(),
      })
      assert.match(code, /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/)
      const freed = await deactivateOffline(test, first.activation.id, code.toLowerCase())
      assert.equal(freed.statusCode, 204, freed.body)
      const deleted = await listEvents(test.app, test.headers, 'filter=type:eq:activation.deleted')
      assert.equal(deleted[0]?.data.id, first.activation.id)
      const after = (
        await test.app.inject({ method: 'GET', url: `/api/v0/licenses/${license.id}`, headers: test.headers })
      ).json()
      assert.equal(after.activationCount, 0)
      assertProblem(await activateOffline(test, request), 404, 'activation_not_found')
    })

    it('refuses altered requests, another key, another product, the future, floating and full licenses; custom keys get PBKDF2', async (t) => {
      const test = await buildTestApp(t, database)
      const { productId, clock } = test
      const license = await createLicense(test.app, test.headers, { productId, maxActivations: 1 })
      const now = clock.now()
      const base = { licenseKey: license.key, productId, now }
      const request = await createActivationRequest({ ...base, fingerprint: 'machine-a' })

      const altered = tamper(request, (payload) => {
        payload.fingerprint = 'machine-b'
      })
      assertProblem(await activateOffline(test, altered), 400, 'activation_request_invalid')
      assertProblem(await activateOffline(test, 'not a request'), 400, 'activation_request_invalid')
      const otherKey = await createActivationRequest({
        ...base,
        licenseKey: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
        fingerprint: 'machine-a',
      })
      assertProblem(await activateOffline(test, otherKey), 404, 'license_not_found')
      const otherProduct = await createProduct(test.app, test.headers)
      const moved = tamper(request, (payload) => {
        payload.productId = otherProduct
      })
      assertProblem(await activateOffline(test, moved), 404, 'license_not_found')
      const foreign = await productKeyHeaders(test.app, test.headers, otherProduct)
      assertProblem(await activateOffline(test, request, foreign), 404, 'license_not_found')
      const future = await createActivationRequest({
        ...base,
        fingerprint: 'machine-a',
        now: new Date(now.getTime() + 2 * 86_400_000),
      })
      assertProblem(await activateOffline(test, future), 400, 'activation_request_invalid')

      const floating = await createLicense(test.app, test.headers, { productId, heartbeatTtl: 600 })
      const floatingRequest = await createActivationRequest({
        ...base,
        licenseKey: floating.key,
        fingerprint: 'machine-a',
      })
      assertProblem(await activateOffline(test, floatingRequest), 409, 'license_floating')

      created(await activateOffline(test, request))
      const second = await createActivationRequest({ ...base, fingerprint: 'machine-b' })
      assertProblem(await activateOffline(test, second), 409, 'activation_limit_reached')

      const custom = await createLicense(test.app, test.headers, { productId, key: 'ACME-PRO-2024-000183' })
      const customRequest = await createActivationRequest({
        ...base,
        licenseKey: custom.key,
        fingerprint: 'machine-c',
      })
      const answer = created(await activateOffline(test, customRequest))
      const body = answer.licenseFile.trim().split('\n').slice(1, -1).join('')
      const header = JSON.parse(Buffer.from(body.split('.')[0], 'base64url').toString())
      assert.equal(header.encryption.kdf, 'PBKDF2-SHA256')
    })

    it('refuses wrong deactivation codes without freeing the seat, and locks after five for an hour', async (t) => {
      const test = await buildTestApp(t, database)
      const { productId, clock } = test
      const license = await createLicense(test.app, test.headers, { productId })
      const fingerprint = 'machine-a'
      const request = await createActivationRequest({
        licenseKey: license.key,
        productId,
        fingerprint,
        now: clock.now(),
      })
      const answer = created(await activateOffline(test, request))
      const id = answer.activation.id
      const file = await verifyLicenseFile(answer.licenseFile, {
        productId,
        publicKey: await publicKeyOf(test, productId),
        licenseKey: license.key,
        fingerprint,
        now: clock.now(),
      })
      const secret = file.deactivationSecret ?? ''
      const right = await createDeactivationCode({ activationId: id, secret, now: clock.now() })
      const wrong = [
        'AAAA-AAAA-AAAA-AAAA',
        right.slice(0, -1) + (right.endsWith('0') ? '1' : '0'), // one character off
        await createDeactivationCode({
          activationId: id,
          secret,
          now: new Date(clock.now().getTime() - 2 * 86_400_000),
        }), // two days before the activation: a broken clock
        await createDeactivationCode({ activationId: 'act_someone-else', secret, now: clock.now() }),
      ]
      for (const [index, code] of wrong.entries()) {
        const problem = assertProblem(
          await deactivateOffline(test, id, code),
          422,
          'deactivation_code_invalid',
        )
        assert.equal((problem as { triesLeft?: number }).triesLeft, 4 - index)
      }
      const fifth = assertProblem(
        await deactivateOffline(test, id, 'not-a-code'),
        422,
        'deactivation_code_invalid',
      )
      assert.equal((fifth as { triesLeft?: number }).triesLeft, 0)
      const locked = await deactivateOffline(test, id, right)
      assertProblem(locked, 409, 'deactivation_locked')
      assert.equal(locked.headers['retry-after'], '3600')
      const held = await test.app.inject({
        method: 'GET',
        url: `/api/v0/activations/${id}`,
        headers: test.headers,
      })
      assert.equal(held.statusCode, 200, 'no wrong code freed the seat')

      clock.advance(3_600_000)
      const freed = await deactivateOffline(test, id, right)
      assert.equal(freed.statusCode, 204, freed.body)
      assertProblem(await deactivateOffline(test, id, right), 404, 'activation_not_found')
    })

    it('keeps the seat count exact when 30 online and offline activations race for 3 seats', async (t) => {
      const test = await buildTestApp(t, database)
      const { productId, clock } = test
      for (let round = 0; round < 3; round++) {
        const license = await createLicense(test.app, test.headers, { productId, maxActivations: 3 })
        const answers = await Promise.all(
          Array.from({ length: 30 }, async (_, machine) => {
            const fingerprint = `round-${round}-machine-${machine}`
            if (machine % 2 === 0) {
              return test.app.inject({
                method: 'POST',
                url: '/api/v0/licenses/activate',
                headers: test.headers,
                payload: { key: license.key, productId, fingerprint },
              })
            }
            const request = await createActivationRequest({
              licenseKey: license.key,
              productId,
              fingerprint,
              now: clock.now(),
            })
            return activateOffline(test, request)
          }),
        )
        const statuses = answers.map((res) => res.statusCode)
        assert.equal(statuses.filter((status) => status === 201).length, 3, statuses.join(','))
        assert.equal(statuses.filter((status) => status === 409).length, 27, statuses.join(','))
        const list = await test.app.inject({
          method: 'GET',
          url: `/api/v0/licenses/${license.id}/activations`,
          headers: test.headers,
        })
        assert.equal(list.json().totalCount, 3)
      }
    })
  },
)
