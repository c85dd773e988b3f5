import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { ValidationResult } from '@keyturn/protocol'
import { normalizeLicenseKey } from '../core/ids.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { createLicense } from '../testing/licenses.js'
import { assertProblem } from '../testing/problems.js'

describeEachDatabase('a license key as a person types it', (database) => {
  it('is found in lower case, without its dashes, and with O, I or L for 0 and 1', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId })
    const lookAlike = license.key.replaceAll('0', 'o').replaceAll('1', 'l')

    for (const typed of [
      license.key.toLowerCase(),
      license.key.replaceAll('-', ''),
      license.key.replaceAll('-', '').toLowerCase(),
      ` ${lookAlike} `,
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: typed, productId },
      })
      assert.equal(res.statusCode, 200, `${typed}: ${res.body}`)
      const result = res.json<ValidationResult>()
      assert.equal(result.isValid, true, `${typed}: ${res.body}`)
      assert.equal(result.license.id, license.id, typed)
    }
  })

  it('still answers license_not_found for text not shaped like a key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId })

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers,
      payload: { key: `${license.key}-EXTRA`, productId },
    })

    assertProblem(res, 404, 'license_not_found')
  })
})

it('normalizeLicenseKey rewrites only input shaped like a Keyturn key', () => {
  assert.equal(normalizeLicenseKey('7k3qdm9xtb2vhcr8pnwf4zj6a'), '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A')
  assert.equal(normalizeLicenseKey('oilo0-IIIII-LLLLL-ooooo-00000'), '01100-11111-11111-00000-00000')
  assert.equal(normalizeLicenseKey('vendor-key-lowercase'), 'vendor-key-lowercase')
  assert.equal(
    normalizeLicenseKey('7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6U'),
    '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6U',
    'U is no Crockford letter',
  )
})
