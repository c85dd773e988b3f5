import assert from 'node:assert/strict'
import { it } from 'node:test'
import { setTimeout as wait } from 'node:timers/promises'
import { describeEachServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'
import { startSmtpServer } from '../testing/smtp-server.js'

const adminKey = 'kt_admin_mail-across-processes-0000000001'
const licenseCount = 40

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text)
}

/** Waits (bounded) for work the server processes do in the background. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`)
    }
    await wait(50)
  }
}

/** A process's keyturn_mail_sent_total. */
async function sentBy(base: string): Promise<number> {
  const text = await (await fetch(`${base.replace(/\/$/, '')}/metrics`)).text()
  const line = text.split('\n').find((row) => row.startsWith('keyturn_mail_sent_total '))
  return Number(line?.split(' ')[1])
}

describeEachServerEnvironment('Mail across two server processes', (environment) => {
  it('sends each license mail once, with both processes sending from one queue', async (t) => {
    const smtp = await startSmtpServer(t)
    const env = {
      ...(await environment.fresh(t)),
      KEYTURN_ADMIN_KEY: adminKey,
      KEYTURN_SMTP_URL: smtp.url,
      KEYTURN_MAIL_FROM: 'licensing@acme.example',
    }
    const a = await startServerProcess(t, env)
    const b = await startServerProcess(t, env)
    const product = await call(a.url, 'POST', '/products', { name: 'Shared' })
    await Promise.all(
      Array.from({ length: licenseCount }, async (_, n) => {
        const base = n % 2 === 0 ? a.url : b.url
        const customer = await call(base, 'POST', '/customers', { email: `buyer${n}@example.com` })
        await call(base, 'POST', '/licenses', { productId: product.id, customerId: customer.id })
      }),
    )

    await until('every mail sent', async () => {
      const page = await call(b.url, 'GET', '/emails?filter=status:eq:sent&limit=1')
      return page.totalCount === licenseCount
    })
    const recipients = smtp.received.map((mail) => mail.to[0])
    assert.equal(recipients.length, licenseCount, 'no mail twice')
    assert.equal(new Set(recipients).size, licenseCount, 'every customer once')
    const [byA, byB] = await Promise.all([sentBy(a.url), sentBy(b.url)])
    assert.equal(byA + byB, licenseCount)
  })
})
