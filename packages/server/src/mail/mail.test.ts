import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startSmtpServer } from '../testing/smtp-server.js'
import { call } from '../testing/vendors.js'

/** Dispatches recorded events (which queues their mail), then sends what is due. */
async function sendMail(test: TestApp): Promise<void> {
  await test.services.deliveries.tick()
  while (((await test.services.mail?.tick()) ?? 0) > 0) {}
}

async function licenseFor(test: TestApp, email: string, productId = test.productId) {
  const customer = await call(test.app, test.headers, 'POST', '/customers', 201, { email })
  return call(test.app, test.headers, 'POST', '/licenses', 201, { productId, customerId: customer.id })
}

describeEachDatabase('Mail sent on license events', (database) => {
  it("mails a new license's key to its customer, escaping HTML in the product's name", async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'Acme <licensing@acme.example>', templatesFolder: undefined },
    })
    const product = await call(test.app, test.headers, 'POST', '/products', 201, {
      name: '<img src=x onerror=alert(1)>',
    })
    const license = await licenseFor(test, 'ada@example.com', product.id)
    await sendMail(test)

    assert.equal(smtp.received.length, 1)
    const mail = smtp.received[0]
    assert.deepEqual(mail?.to, ['ada@example.com'])
    const raw = mail?.raw.replace(/=\r\n/g, '') ?? '' // quoted-printable soft line breaks
    assert.ok(raw.includes(license.key), 'the key is in the mail')
    const html = (raw.split('Content-Type: text/html')[1] ?? '').replace(/=3D/g, '=')
    assert.match(html, /<strong>&lt;img src=x onerror=alert\(1\)&gt;<\/strong>/)
    assert.doesNotMatch(html, /<img/)
    const log: { template: string; status: string }[] = (
      await call(test.app, test.headers, 'GET', '/emails', 200)
    ).data
    assert.deepEqual(
      log.map((entry) => [entry.template, entry.status]),
      [['license-issued', 'sent']],
    )
  })

  it("brands mails with the product's branding, which a PATCH changes field by field", async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
    })
    const url = `/products/${test.productId}`
    await call(test.app, test.headers, 'PATCH', url, 200, {
      branding: {
        displayName: 'Acme <b>Pro</b>',
        logoUrl: 'https://cdn.acme.example/logo.png',
        accentColor: '#0a5f38',
        supportEmail: 'help@acme.example',
      },
    })
    const product = await call(test.app, test.headers, 'PATCH', url, 200, {
      branding: { portalUrl: 'https://licenses.acme.example/portal', supportEmail: null },
    })
    assert.deepEqual(product.branding, {
      displayName: 'Acme <b>Pro</b>',
      logoUrl: 'https://cdn.acme.example/logo.png',
      accentColor: '#0a5f38',
      supportEmail: null,
      supportUrl: null,
      portalUrl: 'https://licenses.acme.example/portal',
    })
    for (const branding of [
      { accentColor: 'red;x' },
      { logoUrl: 'javascript:alert(1)' },
      { colour: '#000000' },
    ]) {
      await call(test.app, test.headers, 'PATCH', url, 400, { branding })
    }
    await licenseFor(test, 'ada@example.com')
    await sendMail(test)

    const raw = smtp.received[0]?.raw.replace(/=\r\n/g, '') ?? ''
    assert.match(raw, /Subject: Your Acme <b>Pro<\/b> license\r\n/)
    const html = (raw.split('Content-Type: text/html')[1] ?? '').replace(/=3D/g, '=')
    assert.ok(
      html.includes('<img src="https://cdn.acme.example/logo.png" alt="Acme &lt;b&gt;Pro&lt;/b&gt;"'),
      html,
    )
    assert.ok(html.includes('<strong>Acme &lt;b&gt;Pro&lt;/b&gt;</strong>'), html)
    assert.ok(
      html.includes(
        '<a href="https://licenses.acme.example/portal" style="color: #0a5f38">Manage your licenses</a>',
      ),
      html,
    )
    assert.doesNotMatch(html, /help@acme/)
  })

  it('renders a template from KEYTURN_MAIL_TEMPLATES, still escaping its variables in HTML', async (t) => {
    const folder = mkdtempSync(join(tmpdir(), 'keyturn-mail-'))
    t.after(() => rmSync(folder, { recursive: true, force: true }))
    writeFileSync(
      join(folder, 'license-issued.html.eta'),
      '<h1>Welcome to <%= it.productName %></h1><p><%= it.key %></p>',
    )
    writeFileSync(join(folder, 'license-issued.subject.eta'), 'Welcome\nBcc: spy@example.com')
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: folder },
    })
    await call(test.app, test.headers, 'PATCH', `/products/${test.productId}`, 200, { name: 'A & <B>' })
    const license = await licenseFor(test, 'ada@example.com')
    await sendMail(test)

    const raw = smtp.received[0]?.raw.replace(/=\r\n/g, '') ?? ''
    assert.match(raw, /Subject: Welcome Bcc: spy@example.com\r\n/) // one line: no header injected
    assert.deepEqual(smtp.received[0]?.to, ['ada@example.com'])
    const html = (raw.split('Content-Type: text/html')[1] ?? '').replace(/=3D/g, '=')
    assert.ok(html.includes(`<h1>Welcome to A &amp; &lt;B&gt;</h1><p>${license.key}</p>`), html)
  })

  it('sends no license mail to a customer who opted out, nor for a license without a customer', async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
    })
    const customer = await call(test.app, test.headers, 'POST', '/customers', 201, {
      email: 'quiet@example.com',
    })
    await test.connection.db
      .updateTable('customers')
      .set({ mail_opt_out: 1 })
      .where('id', '=', customer.id)
      .execute()
    await call(test.app, test.headers, 'POST', '/licenses', 201, {
      productId: test.productId,
      customerId: customer.id,
    })
    await call(test.app, test.headers, 'POST', '/licenses', 201, { productId: test.productId })
    await sendMail(test)
    assert.equal(smtp.received.length, 0)
  })

  it('creates licenses at full speed while the SMTP server hangs', async (t) => {
    const smtp = await startSmtpServer(t, { hang: true })
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
    })
    const started = performance.now()
    await licenseFor(test, 'ada@example.com')
    await test.services.deliveries.tick() // queues the mail; sending it is left to the mail job
    assert.ok(performance.now() - started < 2_000, 'the request path never waits on SMTP')
    assert.equal(await test.services.mailLog.backlog(), 1)
  })

  it('queues no mail while mail is off', async (t) => {
    const test = await buildTestApp(t, database)
    await licenseFor(test, 'ada@example.com')
    await test.services.deliveries.tick()
    assert.equal(test.services.mail, undefined)
    assert.equal(await test.services.mailLog.backlog(), 0)
  })
})
