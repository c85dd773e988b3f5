import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { startOidcTestProvider } from '../../testing/oidc-test-provider.js'
import { sqliteServerEnvironment } from '../../testing/server-environments.js'
import { startServerProcess } from '../../testing/server-process.js'

/** Where the provider sends the browser back; the test plays the browser and calls the real server instead. */
const publicUrl = 'http://keyturn.test'

it('keyturn serve signs an operator in with single sign-on from its KEYTURN_OIDC_* configuration, trusting the provider through NODE_EXTRA_CA_CERTS', async (t) => {
  const provider = await startOidcTestProvider(`${publicUrl}/operator/oidc/callback`)
  t.after(() => provider.close())
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-oidc-ca-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const caFile = join(dir, 'ca.pem')
  writeFileSync(caFile, provider.caCertificate)
  const server = await startServerProcess(t, {
    ...(await sqliteServerEnvironment().fresh(t)),
    KEYTURN_ADMIN_KEY: 'kt_admin_oidc-process-test-key-00000000001',
    KEYTURN_PUBLIC_URL: publicUrl,
    KEYTURN_OIDC_ISSUER: provider.issuer,
    KEYTURN_OIDC_CLIENT_ID: provider.clientId,
    KEYTURN_OIDC_CLIENT_SECRET: provider.clientSecret,
    KEYTURN_OIDC_DOMAINS: 'example.com',
    KEYTURN_OIDC_ROLE: 'support',
    NODE_EXTRA_CA_CERTS: caFile,
  })

  provider.signInAs({ sub: 'zoe-7', email: 'zoe@example.com', email_verified: true, name: 'Zoe' })
  const start = await fetch(`${server.url}/operator/oidc/start`, { redirect: 'manual' })
  assert.equal(start.status, 302)
  const requestCookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const backTo = new URL(await provider.authorize(String(start.headers.get('location'))))
  assert.equal(backTo.origin, publicUrl)
  const callback = await fetch(`${server.url}${backTo.pathname}${backTo.search}`, {
    redirect: 'manual',
    headers: { cookie: requestCookie },
  })
  assert.equal(callback.status, 303, await callback.text())
  const session = callback.headers.getSetCookie().find((line) => line.startsWith('keyturn_operator_session='))
  assert.ok(session !== undefined)
  const me = await fetch(`${server.url}/operator/me`, { headers: { cookie: session.split(';')[0] ?? '' } })
  assert.equal(me.status, 200)
  const { operator } = (await me.json()) as { operator: { email: string; role: string } }
  assert.deepEqual([operator.email, operator.role], ['zoe@example.com', 'support'])
})
