import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import {
  createActivationRequest,
  createDeactivationCode,
  type LicenseResource,
  type ProductResource,
  verifyLicenseFile,
} from '@keyturn/client'
import { fingerprintFromMachineId } from '@keyturn/client/node'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn offline, keyturn licenses license-file', () => {
  it('activates a machine from its request file, writes its license file, and frees the seat by its code', async (t) => {
    const server = await startCliTestServer(t)
    const env = server.env
    const dir = mkdtempSync(join(tmpdir(), 'keyturn-offline-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const license: LicenseResource = JSON.parse(
      (await keyturn(['licenses', 'create', '--product', server.productId, '--json'], env)).stdout,
    )
    const product: ProductResource = JSON.parse(
      (await keyturn(['products', 'get', server.productId, '--json'], env)).stdout,
    )
    const fingerprint = 'lab-pc-4'
    const now = server.clock.now()
    const requestFile = join(dir, 'lab-pc-4.request')
    writeFileSync(
      requestFile,
      await createActivationRequest({
        licenseKey: license.key,
        productId: server.productId,
        fingerprint,
        now,
      }),
    )
    const out = join(dir, 'lab-pc-4.license')

    const activated = await keyturn(['offline', 'activate', requestFile, '--out', out], env)
    assert.equal(activated.code, 0, activated.stderr)
    assert.match(
      activated.stdout,
      new RegExp(
        `^Activated (act_\\w+) \\(license ${license.id}, machine lab-pc-4\\)\\.\\nLicense file written to .+; it expires 2031-`,
      ),
    )
    const file = await verifyLicenseFile(readFileSync(out, 'utf8'), {
      productId: server.productId,
      publicKey: product.publicKey,
      licenseKey: license.key,
      fingerprint,
      now,
    })
    const activationId = file.activationId ?? ''
    assert.ok(activated.stdout.includes(activationId))
    const printed = await keyturn(['offline', 'activate', requestFile], env)
    assert.equal(printed.stdout, readFileSync(out, 'utf8'), 'the same request prints the same file')

    const wrong = await keyturn(['offline', 'deactivate', activationId, 'AAAA-AAAA-AAAA-AAAA'], env)
    assert.equal(wrong.code, 1)
    assert.match(wrong.stderr, /^deactivation_code_invalid: .+4 more wrong codes/)
    const code = await createDeactivationCode({ activationId, secret: file.deactivationSecret ?? '', now })
    const freed = await keyturn(['offline', 'deactivate', activationId, code], env)
    assert.equal(freed.code, 0, freed.stderr)
    assert.equal(freed.stdout, `Deactivated ${activationId}: its seat is free.\n`)
    // `keyturn offline request` on a "machine" whose OS id is KEYTURN_MACHINE_ID.
    const cliRequest = join(dir, 'lab-pc-5.request')
    const requested = await keyturn(
      [
        'offline',
        'request',
        '--product',
        server.productId,
        '--salt',
        'my-app-salt',
        '--name',
        'Lab PC 5',
        '--out',
        cliRequest,
      ],
      { KEYTURN_LICENSE_KEY: license.key, KEYTURN_MACHINE_ID: 'lab-pc-5-machine-id' },
    )
    assert.equal(requested.code, 0, requested.stderr)
    const fromCli = await keyturn(['offline', 'activate', cliRequest, '--json'], env)
    assert.equal(fromCli.code, 0, fromCli.stderr)
    const { activation } = JSON.parse(fromCli.stdout)
    assert.equal(activation.name, 'Lab PC 5')
    assert.equal(activation.fingerprint, fingerprintFromMachineId('my-app-salt', 'lab-pc-5-machine-id'))
    const noKey = await keyturn(
      ['offline', 'request', '--product', server.productId, '--fingerprint', 'f'],
      {},
    )
    assert.equal(noKey.code, 2)
    assert.match(noKey.stderr, /no license key/)

    const missing = await keyturn(['offline', 'activate', join(dir, 'nothing.request')], env)
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /cannot read .+nothing\.request/)
  })

  it('issues license files: printed, never expiring, or for a machine as JSON', async (t) => {
    const server = await startCliTestServer(t)
    const env = server.env
    const license: LicenseResource = JSON.parse(
      (await keyturn(['licenses', 'create', '--product', server.productId, '--json'], env)).stdout,
    )
    const activated = await keyturn(
      ['activations', 'activate', license.id, '--fingerprint', 'machine-a', '--json'],
      env,
    )
    const activation = JSON.parse(activated.stdout)
    const [plain, forMachine, badTtl] = await Promise.all([
      keyturn(['licenses', 'license-file', license.id, '--ttl', 'never'], env),
      keyturn(
        ['licenses', 'license-file', license.id, '--activation', activation.id, '--encrypt', '--json'],
        env,
      ),
      keyturn(['licenses', 'license-file', license.id, '--ttl', '60'], env),
    ])
    assert.equal(plain.code, 0, plain.stderr)
    assert.match(
      plain.stdout,
      /^-----BEGIN KEYTURN LICENSE FILE-----\n[\s\S]+\n-----END KEYTURN LICENSE FILE-----\n$/,
    )
    assert.equal(forMachine.code, 0, forMachine.stderr)
    const issued = JSON.parse(forMachine.stdout)
    assert.equal(issued.license.id, license.id)
    assert.match(issued.licenseFile, /^-----BEGIN KEYTURN LICENSE FILE-----/)
    assert.equal(badTtl.code, 2)
    assert.match(badTtl.stderr, /--ttl/)
  })
})
