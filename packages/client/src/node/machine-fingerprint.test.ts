import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MachineFingerprintError, machineFingerprint } from '@keyturn/client/node'

const salt = 'keyturn-test-salt'
const machineId = '4c4c4544004d3010804bb4c04f4d3332'
/** HMAC-SHA256(salt, machine id) in lowercase hex: the value every SDK must reproduce. */
const expected = 'fe0216ad36d366f8472fa3de61960f805daf3dbf182a3a3d5d7177dabf8b3b6e'

const noFiles = () => undefined
const noCommands = () => undefined

describe('machineFingerprint (@keyturn/client/node)', () => {
  it('hashes the OS id with the salt on each platform, never returning the raw id', () => {
    const linux = machineFingerprint({
      salt,
      env: {},
      platform: 'linux',
      readFile: (path) => (path === '/var/lib/dbus/machine-id' ? `${machineId}\n` : undefined),
    })
    const mac = machineFingerprint({
      salt,
      env: {},
      platform: 'darwin',
      run: () => `| "IOPlatformUUID" = "${machineId}"\n`,
    })
    const windows = machineFingerprint({
      salt,
      env: {},
      platform: 'win32',
      run: () => `    MachineGuid    REG_SZ    ${machineId}\r\n`,
    })
    assert.deepEqual([linux, mac, windows], [expected, expected, expected])
    assert.notEqual(
      machineFingerprint({ salt: 'another-product', env: { KEYTURN_MACHINE_ID: machineId } }),
      expected,
    )
  })

  it('takes KEYTURN_MACHINE_ID over the OS id', () => {
    const fingerprint = machineFingerprint({
      salt,
      env: { KEYTURN_MACHINE_ID: ` ${machineId} ` },
      platform: 'linux',
      readFile: () => 'something-else',
    })
    assert.equal(fingerprint, expected)
  })

  it('says so with a typed error when there is no stable id, instead of a random one', () => {
    for (const readFile of [noFiles, () => '\n']) {
      assert.throws(
        () => machineFingerprint({ salt, env: {}, platform: 'linux', readFile, run: noCommands }),
        (error) => error instanceof MachineFingerprintError && error.code === 'no_machine_id',
      )
    }
    assert.throws(
      () => machineFingerprint({ salt: 'short', env: { KEYTURN_MACHINE_ID: machineId } }),
      (error) => error instanceof MachineFingerprintError && error.code === 'invalid_salt',
    )
  })
})
