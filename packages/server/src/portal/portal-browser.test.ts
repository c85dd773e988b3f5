/**
 * @module The customer portal in a real browser (Debian's Chromium) at phone width (390 px), with
 * a real SMTP server: sign in with the mailed code, see the license, download a license file,
 * activate a machine offline by uploading its request file and free it by its deactivation code,
 * deactivate a machine, hit the transfer limit, sign out, on SQLite and on PostgreSQL. Every page is
 * checked with axe-core and for CSP violations.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { it } from 'node:test'
import { createActivationRequest, createDeactivationCode, verifyLicenseFile } from '@keyturn/client'
import type { Page } from 'playwright-core'
import { chromiumPerFile, skipWithoutChromium } from '../testing/browser.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startTestServer } from '../testing/listening-app.js'
import { codeIn } from '../testing/portal-visitor.js'
import { startSmtpServer } from '../testing/smtp-server.js'
import { call } from '../testing/vendors.js'

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** No serious or critical axe-core violation, and nothing wider than the screen. */
async function checkPage(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axeSource)
  // Only the violations are read: axe then skips describing every element that passed.
  const violations = (await page.evaluate(
    "axe.run({ resultTypes: ['violations'] }).then((result) => result.violations)",
  )) as {
    id: string
    impact: string | null
    nodes: { target: unknown[] }[]
  }[]
  assert.deepEqual(
    violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`),
    [],
    `axe-core on ${name}`,
  )
  const width = (await page.evaluate('document.documentElement.scrollWidth')) as number
  assert.ok(width <= 390, `${name} is ${width} px wide`)
}

const chromium = chromiumPerFile()

describeEachDatabase('the customer portal in Chromium', (database) => {
  it('a customer signs in with the mailed code, activates and frees a machine offline, deactivates a machine, meets the transfer limit and signs out, at 390 px', {
    skip: skipWithoutChromium,
  }, async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await startTestServer(t, database, {
      mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
      portal: { enabled: true, url: 'http://127.0.0.1/portal' },
    })
    const send = async () => {
      await test.services.deliveries.tick()
      while (((await test.services.mail?.tick()) ?? 0) > 0) {}
    }
    await call(test.app, test.headers, 'PATCH', `/products/${test.productId}`, 200, {
      branding: {
        displayName: 'Acme Photo Editor',
        accentColor: '#0a5f38',
        supportEmail: 'help@acme.example',
      },
    })
    const policy = await call(test.app, test.headers, 'POST', '/policies', 201, {
      productId: test.productId,
      name: 'Two transfers a month',
      maxActivations: 3,
      maxTransfers: 2,
    })
    const customer = await call(test.app, test.headers, 'POST', '/customers', 201, {
      email: 'ada@example.com',
    })
    const license = await call(test.app, test.headers, 'POST', '/licenses', 201, {
      productId: test.productId,
      customerId: customer.id,
      policyId: policy.id,
    })
    for (const name of ['Studio iMac', 'Travel laptop']) {
      await call(test.app, test.headers, 'POST', `/licenses/${license.id}/activations`, 201, {
        fingerprint: name,
        name,
        metadata: { platform: 'macOS' },
      })
    }

    const context = await (await chromium()).newContext({ viewport: { width: 390, height: 844 } })
    t.after(() => context.close())
    const page = await context.newPage()
    const cspViolations: string[] = []
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) {
        cspViolations.push(message.text())
      }
    })

    await page.goto(`${test.baseUrl}/portal?product=${test.productId}`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await checkPage(page, 'sign-in')
    await page.getByLabel('Email address').fill('ada@example.com')
    await page.getByRole('button', { name: 'Mail me a code' }).click()
    await page.getByRole('heading', { name: 'Enter your code' }).waitFor()
    await checkPage(page, 'code')
    await send()
    await page.getByLabel('Code').fill(codeIn(smtp.received, 'ada@example.com'))
    await page.getByRole('button', { name: 'Sign in' }).click()

    await page.getByRole('heading', { name: 'Your licenses' }).waitFor()
    await page.getByText(license.key).waitFor()
    assert.equal(
      await page.getByRole('button', { name: 'Copy' }).isVisible(),
      true,
      'the copy button appears',
    )
    await checkPage(page, 'licenses')

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download a license file for Studio iMac' }).click(),
    ])
    assert.equal(download.suggestedFilename(), 'license-Studio-iMac.lic')

    // A machine without internet: its request file uploaded, its license file offered, then freed by its code.
    await page.getByRole('link', { name: 'Machines without internet' }).click()
    await page.getByRole('heading', { name: 'Machines without internet' }).waitFor()
    const requestFile = await createActivationRequest({
      licenseKey: license.key,
      productId: test.productId,
      fingerprint: 'lab-pc',
      name: 'Lab PC',
      now: test.clock.now(),
    })
    await page
      .getByLabel('Request file', { exact: true })
      .setInputFiles({ name: 'lab-pc.req', mimeType: 'text/plain', buffer: Buffer.from(requestFile) })
    // The page's own script reads the chosen file asynchronously: wait, in the page's own frames (no
    // busy loop of questions to the browser), for its text to be in the box, for at most 10 s.
    const shown = await page.evaluate(`new Promise((resolve) => {
      const box = document.getElementById('request')
      const deadline = performance.now() + 10_000
      const check = () => (box.value !== '' || performance.now() > deadline ? resolve(box.value) : requestAnimationFrame(check))
      check()
    })`)
    assert.equal(shown, requestFile)
    await checkPage(page, 'offline')
    await page.getByRole('button', { name: 'Get the license file' }).click()
    await page.getByRole('heading', { name: 'License file for Lab PC' }).waitFor()
    await checkPage(page, 'offline license file')
    const [machineFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download license-Lab-PC.lic' }).click(),
    ])
    assert.equal(machineFile.suggestedFilename(), 'license-Lab-PC.lic')
    const verified = await verifyLicenseFile(readFileSync(await machineFile.path(), 'utf8'), {
      publicKey: (await call(test.app, test.headers, 'GET', `/products/${test.productId}`, 200)).publicKey,
      productId: test.productId,
      licenseKey: license.key,
      fingerprint: 'lab-pc',
      now: test.clock.now(),
    })
    await page.getByRole('link', { name: '← Machines without internet' }).click()
    await page.getByLabel('Machine', { exact: true }).selectOption({ label: 'Lab PC' })
    await page.getByLabel('Deactivation code').fill(
      await createDeactivationCode({
        activationId: verified.activationId ?? '',
        secret: verified.deactivationSecret ?? '',
        now: test.clock.now(),
      }),
    )
    await page.getByRole('button', { name: 'Free the machine' }).click()
    await page.getByText('The machine was freed.').waitFor()
    assert.equal(await page.getByRole('option', { name: 'Lab PC' }).count(), 0)
    await page.getByRole('link', { name: '← Your licenses' }).click()
    await page.getByRole('heading', { name: 'Your licenses' }).waitFor()

    await page.getByRole('button', { name: 'Deactivate Studio iMac' }).click()
    await page.getByText('The machine was deactivated.').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Deactivate Studio iMac' }).count(), 0)

    await page.getByRole('button', { name: 'Deactivate Travel laptop' }).click()
    await page.getByText('No deactivations are left on this license: at most 2 in 30 days.').waitFor()
    await checkPage(page, 'transfer-limit')

    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.goto(`${test.baseUrl}/portal/licenses`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    assert.deepEqual(cspViolations, [])
  })
})
