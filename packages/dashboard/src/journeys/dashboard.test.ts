/**
 * @module The dashboard in a real browser (Debian's Chromium) against a real `keyturn serve` on
 * SQLite: one server, one browser, one flow after another as subtests, each driven by role and label
 * as a person with a screen reader would. Every screen is checked with axe-core and photographed into
 * artifacts/dashboard/ (docs/guides/dashboard.md; not committed).
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import {
  createActivationRequest,
  createDeactivationCode,
  KeyturnClient,
  validateLicenseToken,
  verifyLicenseFile,
} from '@keyturn/client'
import { chromiumPerFile, skipWithoutChromium } from '@keyturn/server/testing/browser'
import { startOidcTestProvider } from '@keyturn/server/testing/oidc-test-provider'
import { sqliteServerEnvironment } from '@keyturn/server/testing/server-environments'
import { startServerProcess } from '@keyturn/server/testing/server-process'
import { startSmtpServer } from '@keyturn/server/testing/smtp-server'
import { startWebhookReceiver } from '@keyturn/server/testing/webhook-receiver'
import { Secret, TOTP } from 'otpauth'
import type { Page } from 'playwright-core'
import { assertAccessible, buildDashboard, inPage, repository, watchCsp } from './browser-checks.js'

const adminKey = 'kt_admin_dashboard-journey-in-chromium-000001'
const hostileName = '<img src=x onerror="window.__pwned=true">'
/** Screenshots of every screen, for people to look at (gitignored). */
const screenshotDir = join(repository, 'artifacts', 'dashboard')

/**
 * axe-core finds no serious or critical violation on the page as it is now; then a screenshot, a
 * JPEG: encoding the whole 1280 px page as PNG costs about twice the CPU.
 */
async function checkScreen(page: Page, name: string): Promise<void> {
  await assertAccessible(page, name)
  await page.screenshot({ path: join(screenshotDir, `${name}.jpeg`), fullPage: true, quality: 80 })
}

/** One Chromium for both tests of this file; each has its own context. */
const chromium = chromiumPerFile()

const ownerEmail = 'olga@example.com'
const password = 'correct horse battery staple'

async function signIn(page: Page, base: string, email: string): Promise<void> {
  await page.goto(`${base}/dashboard/`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
}

/** Signs out from any screen, back to the sign-in page. */
async function signOut(page: Page): Promise<void> {
  await operatorMenu(page, 'Sign out')
  await page.getByLabel('Password').waitFor()
}

/** Picks an item of the operator's menu (the header's button with their name and role). */
async function operatorMenu(page: Page, item: string): Promise<void> {
  await page.getByRole('button', { name: /^.+ \((owner|admin|support|read-only|[a-z-]+)\)$/ }).click()
  await page.getByRole('menuitem', { name: item }).click()
  // The menu fades out: axe-core would find a menu without items while it does.
  await page.getByRole('menu').waitFor({ state: 'detached' })
}

/** Follows a link of the main navigation (the overview repeats some of its names). */
async function navigate(page: Page, screen: string): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: screen, exact: true })
    .click()
}

/** Chooses an action from a license page's Actions menu. */
async function licenseAction(page: Page, item: string): Promise<void> {
  await page.getByRole('button', { name: 'Actions', exact: true }).click()
  await page.getByRole('menuitem', { name: item }).click()
  await page.getByRole('menu').waitFor({ state: 'detached' })
}

async function dialogConfirm(page: Page, button: string, confirm: string): Promise<void> {
  await page.getByRole('button', { name: button }).click()
  const dialog = page.getByRole('dialog')
  await dialog.waitFor()
  await dialog.getByRole('button', { name: confirm }).click()
}

it('runs the licensing business from the dashboard in Chromium', {
  skip: skipWithoutChromium,
  timeout: 180_000,
}, async (t: TestContext) => {
  mkdirSync(screenshotDir, { recursive: true })
  await buildDashboard()
  const env = await sqliteServerEnvironment().fresh(t)
  const smtp = await startSmtpServer(t)
  const server = await startServerProcess(t, {
    ...env,
    KEYTURN_ADMIN_KEY: adminKey,
    KEYTURN_SMTP_URL: smtp.url,
    // The test's webhook receiver listens on loopback over plain HTTP: the SSRF guard must let it through.
    KEYTURN_WEBHOOK_ALLOW_HTTP: 'true',
    KEYTURN_WEBHOOK_ALLOW_PRIVATE: 'true',
  })
  const base = server.url
  const admin = new KeyturnClient({ baseUrl: base, apiKey: adminKey })
  const other = await admin.createProduct({ name: hostileName })
  const browser = await chromium()
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    // Dialogs and toasts appear at once (the theme respects reduced motion): no waiting on transitions.
    reducedMotion: 'reduce',
  })
  t.after(() => context.close())
  const cspViolations = await watchCsp(context)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  /** Every answer the page got from the API, as `status path`, to look for refusals. */
  const apiAnswers: string[] = []
  page.on('response', (response) => {
    const url = new URL(response.url())
    if (url.pathname.startsWith('/api/')) {
      apiAnswers.push(`${response.status()} ${url.pathname}`)
    }
  })
  let productId = ''
  let licenseId = ''
  let productKey = ''

  await t.test(
    'sets up the first owner from the link the first start printed, then holds no secret',
    async () => {
      const setupLink = /(http:\/\/\S+\/dashboard\/setup#\S+)/.exec(server.output())?.[1]
      assert.ok(setupLink !== undefined, server.output())
      await page.goto(setupLink)
      await page.getByLabel('Email').fill(ownerEmail)
      await page.getByLabel('Name').fill('Olga Owner')
      await checkScreen(page, '01-setup')
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Create owner and sign in' }).click()
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
      await page.getByText('Olga Owner (owner)').waitFor()
      const stored = await inPage(
        page,
        '({ session: Object.keys(sessionStorage).length, local: Object.keys(localStorage).length, cookie: document.cookie })',
      )
      assert.deepEqual(stored, { session: 0, local: 0, cookie: '' }, 'the session cookie is httpOnly')
      assert.ok(!page.url().includes('#'), 'the link is gone from the address')
      await page.getByText('Active licenses').waitFor()
      await checkScreen(page, '02-overview')
      // An icon, for the dashboard's tab and for any page's /favicon.ico.
      const declared = await page.locator('link[rel="icon"]').getAttribute('href')
      for (const path of [declared, '/favicon.ico']) {
        const icon = await page.request.get(`${base}${path}`)
        assert.equal(icon.status(), 200, `${path}: ${icon.status()}`)
        assert.equal(icon.headers()['content-type'], 'image/svg+xml', String(path))
      }
    },
  )

  await t.test('renders a hostile product name as text', async () => {
    await navigate(page, 'Products')
    await page.getByRole('link', { name: hostileName }).waitFor()
    const injected = await inPage(
      page,
      "({ pwned: window.__pwned === true, images: document.querySelectorAll('main img').length })",
    )
    assert.deepEqual(injected, { pwned: false, images: 0 })
  })

  await t.test('creates a product', async () => {
    await page.getByLabel('Name').fill('Acme Photo Editor')
    await page.getByRole('button', { name: 'Create product' }).click()
    await page.getByRole('heading', { name: 'Acme Photo Editor', level: 1 }).waitFor()
    productId = page.url().split('/').at(-1) ?? ''
    assert.match(productId, /^prd_/)
    await page.getByRole('button', { name: 'Copy PEM' }).click()
    await page.getByText('Copied').first().waitFor()
    const pem = await inPage(page, 'navigator.clipboard.readText()')
    assert.equal(pem, (await admin.getProduct(productId as `prd_${string}`)).publicKey)
    await checkScreen(page, '03-product')
    await page.getByRole('link', { name: '← Products' }).click()
    await page.getByRole('link', { name: 'Acme Photo Editor' }).waitFor()
    await checkScreen(page, '04-products')
  })

  await t.test('shows an API problem next to the form that caused it', async () => {
    await navigate(page, 'Licenses')
    await page.getByRole('link', { name: 'Create license' }).click()
    // The form's screen loads on first visit; until then the list (with its own Product filter) stays.
    await page.getByRole('heading', { name: 'Create a license', level: 1 }).waitFor()
    await page
      .getByRole('combobox', { name: 'Product', exact: true })
      .selectOption({ label: 'Acme Photo Editor' })
    await page.getByLabel('Expires on (UTC, end of day)').fill('2001-01-01')
    await page.getByRole('button', { name: 'Create license' }).click()
    const problem = page.getByRole('form', { name: 'Create a license' }).getByRole('alert')
    await problem.waitFor()
    assert.match((await problem.textContent()) ?? '', /future/i)
    await checkScreen(page, '05-license-create-problem')
  })

  await t.test('creates a license', async () => {
    await page
      .getByRole('combobox', { name: 'Product', exact: true })
      .selectOption({ label: 'Acme Photo Editor' })
    await page.getByLabel('Maximum activations').fill('3')
    await page.getByLabel('Expires on (UTC, end of day)').fill('2031-06-30')
    await page.getByRole('button', { name: 'Create license' }).click()
    await page.getByRole('heading', { name: /^License / }).waitFor()
    licenseId = page.url().split('/').at(-1) ?? ''
    const license = await admin.getLicense(licenseId as `lic_${string}`)
    assert.equal(license.maxActivations, 3)
    assert.equal(license.expirationDate, '2031-06-30T23:59:59.999Z')
    await checkScreen(page, '06-license')
  })

  await t.test('finds the license by filter and sorts on the server, with the view in the URL', async () => {
    // Another product's license, which the filter must leave out.
    await admin.createLicense({ productId: other.id })
    await navigate(page, 'Licenses')
    await page
      .getByRole('form', { name: 'Filter licenses' })
      .getByLabel('Product')
      .selectOption({ label: 'Acme Photo Editor' })
    await page.getByLabel('Status').selectOption('active')
    await page.getByLabel('Expires from').fill('2031-06-01')
    await page.getByLabel('Expires until').fill('2031-06-30')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await page.waitForURL(/productId=/)
    const url = new URL(page.url())
    assert.equal(url.searchParams.get('productId'), productId)
    assert.equal(url.searchParams.get('status'), 'active')
    assert.equal(url.searchParams.get('expiresFrom'), '2031-06-01')
    await page.getByText('1–1 of 1 license').waitFor()
    const key = (await admin.getLicense(licenseId as `lic_${string}`)).key
    await page.getByRole('link', { name: key }).waitFor()
    await page.getByRole('button', { name: /^Key/ }).click()
    await page.waitForURL(/sort=key%3Aasc|sort=key:asc/)
    await page
      .getByRole('columnheader', { name: /Key/ })
      .and(page.locator('[aria-sort="ascending"]'))
      .waitFor()
    // The URL alone restores the view: a bookmark or a link shared with a colleague.
    await page.goto(page.url())
    await page.getByRole('link', { name: key }).waitFor()
    await checkScreen(page, '07-licenses-filtered')
    await page.getByRole('button', { name: 'Clear filters' }).click()
    await page.getByText('1–2 of 2 licenses').waitFor()
  })

  await t.test(
    'revokes and reinstates the license from its actions menu, each after a confirmation',
    async () => {
      await page.goto(`${base}/dashboard/licenses/${licenseId}`)
      await licenseAction(page, 'Revoke license…')
      const dialog = page.getByRole('dialog', { name: 'Revoke this license?' })
      await dialog.waitFor()
      await checkScreen(page, '08-confirm-revoke')
      await dialog.getByRole('button', { name: 'Close' }).click()
      assert.equal(
        (await admin.getLicense(licenseId as `lic_${string}`)).status,
        'active',
        'Closing does nothing',
      )
      await licenseAction(page, 'Revoke license…')
      await dialog.getByRole('button', { name: 'Revoke', exact: true }).click()
      await page.getByText('License revoked.').waitFor()
      assert.equal((await admin.getLicense(licenseId as `lic_${string}`)).status, 'revoked')
      await licenseAction(page, 'Reinstate license…')
      await page
        .getByRole('dialog', { name: 'Reinstate this license?' })
        .getByRole('button', { name: 'Reinstate' })
        .click()
      await page.getByText('License reinstated.').waitFor()
      assert.equal((await admin.getLicense(licenseId as `lic_${string}`)).status, 'active')
    },
  )

  await t.test(
    'issues a token that @keyturn/client verifies and a license file, and validates as an application would',
    async () => {
      const recent = page.getByRole('table', { name: 'Recent events of this license' })
      await recent.getByText('license.reinstated').waitFor()
      assert.equal(await recent.getByText('license.token_issued').count(), 0)
      await licenseAction(page, 'Issue token…')
      const customFields = page.getByLabel('Custom fields (JSON object, optional)')
      await customFields.fill('["pro"]')
      await page.getByRole('button', { name: 'Issue token' }).click()
      // The mistake is said under its field, which is marked invalid, described by it and focused.
      await page.getByText('Custom fields must be a JSON object').waitFor()
      assert.deepEqual(
        await customFields.evaluate((field) => ({
          invalid: field.getAttribute('aria-invalid'),
          focused: field === document.activeElement,
          description: (field.getAttribute('aria-describedby') ?? '')
            .split(' ')
            .map((id) => document.getElementById(id)?.textContent)
            .join(' '),
        })),
        {
          invalid: 'true',
          focused: true,
          description: 'Custom fields must be a JSON object, e.g. {"plan": "pro"}.',
        },
      )
      await checkScreen(page, '09-token-field-error')
      await customFields.fill('{"plan": "pro"}')
      await page.getByRole('button', { name: 'Issue token' }).click()
      const tokenBox = page.getByLabel(/^Token \(expires/)
      await tokenBox.waitFor()
      const token = await tokenBox.inputValue()
      await page.getByRole('button', { name: 'Copy token' }).click()
      await page.getByText('Copied').first().waitFor()
      assert.equal(await inPage(page, 'navigator.clipboard.readText()'), token)
      const product = await admin.getProduct(productId as `prd_${string}`)
      const verified = await validateLicenseToken({
        token,
        publicKey: product.publicKey,
        productId: product.id,
      })
      assert.equal(verified.licenseId, licenseId)
      assert.deepEqual(verified.customFields, { plan: 'pro' })
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()
      await recent.getByText('license.token_issued').waitFor() // the events refresh after the action

      await licenseAction(page, 'Issue license file…')
      await page.getByRole('button', { name: 'Issue license file' }).click()
      await page.getByRole('link', { name: 'Download license file' }).waitFor()
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()
      await page
        .getByRole('table', { name: 'Tokens and license files issued' })
        .getByText('license.file_issued')
        .waitFor()

      await licenseAction(page, 'Validate as the app would…')
      await page.getByRole('button', { name: 'Validate', exact: true }).click()
      await page.getByText(/^Valid \(checked/).waitFor()
      await checkScreen(page, '09-license-actions')
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()
    },
  )

  await t.test(
    'creates an API key whose secret is shown once, and deletes one after a confirmation',
    async () => {
      await navigate(page, 'API keys')
      await checkScreen(page, '10-api-keys')
      await page.getByLabel('Name').fill('Acme back end')
      await page.getByLabel('Role').selectOption('product')
      await page
        .getByRole('combobox', { name: 'Product', exact: true })
        .selectOption({ label: 'Acme Photo Editor' })
      await page.getByRole('button', { name: 'Create API key' }).click()
      const secret = page.getByLabel('Secret')
      await secret.waitFor()
      productKey = await secret.inputValue()
      assert.match(productKey, /^kt_prod_/)
      await page.getByText('It is shown only once', { exact: false }).waitFor()
      await checkScreen(page, '11-api-key-secret')
      await page.getByRole('button', { name: 'I have stored it' }).click()
      await page.getByRole('cell', { name: 'Acme back end', exact: true }).waitFor()
      assert.ok(!(await page.content()).includes(productKey), 'the secret is not shown again')

      await page.getByLabel('Name').fill('Temporary')
      await page.getByLabel('Role').selectOption('admin')
      await page.getByRole('button', { name: 'Create API key' }).click()
      await page.getByRole('button', { name: 'I have stored it' }).click()
      await dialogConfirm(page, 'Delete Temporary', 'Delete key')
      await page.getByRole('cell', { name: 'Temporary', exact: true }).waitFor({ state: 'detached' })
      const names = (await admin.listApiKeys({ limit: 100 })).data.map((apiKey) => apiKey.name)
      assert.ok(!names.includes('Temporary') && names.includes('Acme back end'), names.join(', '))
    },
  )

  await t.test(
    'manages entitlements, policies and customers, and makes and renews a license from a policy',
    async () => {
      await navigate(page, 'Entitlements')
      const entitlementForm = page.getByRole('form', { name: 'Create an entitlement' })
      await page.getByText('Create an entitlement').click()
      await entitlementForm
        .getByRole('combobox', { name: 'Product', exact: true })
        .selectOption({ label: 'Acme Photo Editor' })
      await entitlementForm.getByLabel('Code').fill('export-pdf')
      await entitlementForm.getByLabel('Name').fill('Export to PDF')
      await entitlementForm.getByRole('button', { name: 'Create entitlement' }).click()
      await page.getByRole('link', { name: 'export-pdf' }).waitFor()
      await checkScreen(page, '13-entitlements')

      await navigate(page, 'Policies')
      const policyForm = page.getByRole('form', { name: 'Create a policy' })
      await page.getByText('Create a policy').click()
      await policyForm
        .getByRole('combobox', { name: 'Product', exact: true })
        .selectOption({ label: 'Acme Photo Editor' })
      await policyForm.getByLabel('Name').fill('Pro yearly')
      await policyForm.getByLabel('Maximum activations').fill('2')
      await policyForm.getByLabel('Duration in days').fill('365')
      await policyForm.getByLabel('Entitlements').fill('export-pdf')
      await policyForm.getByLabel('Floating seat lease').fill('30')
      await policyForm.getByLabel('Maximum uses').fill('1000')
      await policyForm.getByLabel('Machines a customer may deactivate in the portal').fill('2')
      await policyForm.getByLabel('Portal transfer window, days').fill('7')
      await policyForm.getByLabel('License files last, days').fill('30')
      await policyForm.getByLabel('Longest token a request may ask for').fill('730')
      await policyForm.getByLabel("License files carry the license's metadata").check()
      await policyForm.getByLabel('Applications check in every, days').fill('7')
      await policyForm.getByLabel('Offline grace after a missed check-in, days').fill('3')
      await policyForm.getByRole('button', { name: 'Create policy' }).click()
      await page.getByRole('heading', { name: 'Pro yearly', level: 1 }).waitFor()
      await page.getByText('Floating: a seat lapses 30 minutes after its last heartbeat').waitFor()
      await page.getByText('At most 1,000 uses').waitFor()
      await page.getByText('2 per 7 days').waitFor()
      await page
        .getByText('License files last 30 days and carry the metadata; tokens up to 730 days')
        .waitFor()
      await page.getByText('Every 7 days, then 3 days of grace').waitFor()
      await checkScreen(page, '14-policy')
      await navigate(page, 'Policies')
      const policyRow = page.getByRole('row', { name: /Pro yearly/ })
      await policyRow.getByRole('cell', { name: '30 min', exact: true }).waitFor()
      await policyRow.getByRole('cell', { name: '1,000 uses', exact: true }).waitFor()

      await navigate(page, 'Customers')
      const customerForm = page.getByRole('form', { name: 'Create a customer' })
      await page.getByText('Create a customer').click()
      await customerForm.getByLabel('Email').fill('ada@example.com')
      await customerForm.getByLabel('Name').fill(hostileName)
      await customerForm.getByLabel('Metadata').fill('{"crm": "4711"}')
      await customerForm.getByRole('button', { name: 'Create customer' }).click()
      await page.getByRole('heading', { name: hostileName, level: 1 }).waitFor()
      const customerId = page.url().split('/').at(-1) ?? ''
      assert.match(customerId, /^cus_/)
      // The customer portal is off on this server: nobody is signed in, and no code can be mailed.
      await page.getByText('Not signed in to the portal.').waitFor()
      await page.getByRole('button', { name: 'Mail a portal sign-in code' }).click()
      await page.getByText(/customer portal is off/).waitFor()
      await checkScreen(page, '15-customer')
      await navigate(page, 'Customers')
      await page.getByRole('link', { name: 'ada@example.com' }).waitFor()
      await checkScreen(page, '16-customers')

      await navigate(page, 'Licenses')
      await page.getByRole('link', { name: 'Create license' }).click()
      await page
        .getByRole('combobox', { name: 'Product', exact: true })
        .selectOption({ label: 'Acme Photo Editor' })
      // A list once the policies have loaded (a text field until then): wait for the list.
      await page.getByRole('combobox', { name: 'Policy' }).selectOption({ label: 'Pro yearly' })
      await page.getByLabel('Maximum activations').fill('')
      await page.getByLabel('Customer id').fill(customerId)
      await page.getByLabel('Metadata').fill('{"seller": "shop"}')
      await page.getByRole('button', { name: 'Create license' }).click()
      await page.getByRole('heading', { name: /^License / }).waitFor()
      const fromPolicy = await admin.getLicense((page.url().split('/').at(-1) ?? '') as `lic_${string}`)
      assert.equal(fromPolicy.maxActivations, 2, 'the policy decides what the form left empty')
      assert.deepEqual(fromPolicy.entitlements, ['export-pdf'])
      assert.equal(fromPolicy.customerId, customerId)
      assert.ok(fromPolicy.expirationDate !== null)

      await licenseAction(page, 'Renew…')
      await page.getByLabel('Extend by days').fill('10')
      await page.getByRole('button', { name: 'Renew license' }).click()
      await page.getByText(/^Renewed: expires/).waitFor()
      const renewed = await admin.getLicense(fromPolicy.id)
      assert.equal(
        Date.parse(renewed.expirationDate ?? '') - Date.parse(fromPolicy.expirationDate ?? ''),
        10 * 86_400_000,
      )
      await checkScreen(page, '17-license-from-policy')

      await navigate(page, 'Licenses')
      await page.getByRole('link', { name: 'Create license' }).click()
      await page
        .getByRole('combobox', { name: 'Product', exact: true })
        .selectOption({ label: 'Acme Photo Editor' })
      await page.getByLabel('Key of your own (optional)').fill('OLD-SHOP-000042')
      await page.getByRole('button', { name: 'Create license' }).click()
      await page.getByRole('heading', { name: /^License / }).waitFor()
      const ownKey = await admin.getLicense((page.url().split('/').at(-1) ?? '') as `lic_${string}`)
      assert.equal(ownKey.key, 'OLD-SHOP-000042')
      await page.goto(`${base}/dashboard/licenses/${fromPolicy.id}`)

      const team = await admin.createPolicy({
        productId: fromPolicy.productId,
        name: 'Team',
        maxActivations: 10,
      })
      await page.reload()
      await licenseAction(page, 'Change plan…')
      await page.getByLabel('Move to policy').selectOption({ label: 'Team' })
      await page.getByRole('button', { name: 'Move license' }).click()
      await page.getByText(/^Moved to Team: 10 activations, expires/).waitFor()
      const moved = await admin.getLicense(fromPolicy.id)
      assert.deepEqual(
        [moved.policyId, moved.maxActivations, moved.expirationDate],
        [team.id, 10, renewed.expirationDate],
      )

      await page.goto(`${base}/dashboard/licenses?customerId=${customerId}&metaKey=seller&metaValue=shop`)
      await page.getByText('1–1 of 1 license').waitFor()
      await page.getByRole('link', { name: fromPolicy.key }).waitFor()
    },
  )

  await t.test("follows the customer's license mails in the delivery log until they are sent", async () => {
    await navigate(page, 'Mail')
    const log = page.getByRole('table', { name: 'Mail delivery log' })
    for (const template of ['license-issued', 'license-renewed']) {
      await log
        .getByRole('row', { name: new RegExp(template) })
        .getByText('sent', { exact: true })
        .waitFor()
    }
    assert.deepEqual(
      smtp.received.map((mail) => mail.to),
      [['ada@example.com'], ['ada@example.com']],
    )
    assert.equal(await log.getByText('ada@example.com').count(), 0, 'the log never shows an address')
    await checkScreen(page, '23-mail')
  })

  await t.test('shows what the last payment-provider events did', async () => {
    const secret = 'lemon-squeezy-journey-secret'
    const integration = await admin.createIntegration({
      provider: 'lemonsqueezy',
      signingSecret: secret,
      mappings: [],
    })
    const order = JSON.stringify({
      meta: { event_name: 'order_created' },
      data: {
        type: 'orders',
        id: '7',
        attributes: {
          user_email: 'ada@example.com',
          first_order_item: { variant_id: 42 },
          updated_at: '2030-01-01T00:00:00.000000Z',
        },
      },
    })
    const delivered = await fetch(`${base}${integration.webhookPath}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-signature': createHmac('sha256', secret).update(order).digest('hex'),
      },
      body: order,
    })
    assert.equal(delivered.status, 200, await delivered.text())
    await navigate(page, 'Payment providers')
    await page.getByRole('link', { name: 'Lemon Squeezy' }).click()
    const events = page.getByRole('table', { name: 'Received provider events' })
    await events
      .getByRole('row', { name: /order_created/ })
      .getByText('ignored', { exact: true })
      .waitFor()
    await events.getByText('Item 42 is not mapped; nothing was created.').waitFor()
    await checkScreen(page, '24-payment-provider-events')
  })

  await t.test("meters a license's usage and resets it after a confirmation", async () => {
    await page.goto(`${base}/dashboard/licenses/${licenseId}`)
    await licenseAction(page, 'Edit…')
    await page.getByLabel('Maximum uses').fill('5')
    await page.getByLabel('Floating seat lease').fill('15')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('0 of 5 uses').waitFor()
    await page.getByLabel('Uses to record').fill('2')
    await page.getByRole('button', { name: 'Record usage' }).click()
    await page.getByText('2 of 5 uses').waitFor()
    const metered = await admin.getLicense(licenseId as `lic_${string}`)
    assert.deepEqual([metered.uses, metered.maxUses, metered.heartbeatTtl], [2, 5, 900])
    await checkScreen(page, '20-license-usage')
    await dialogConfirm(page, 'Reset usage', 'Reset to 0')
    await page.getByText(/^0 of 5 uses since/).waitFor()
  })

  await t.test(
    'shows the activations count and latest events on the overview, and filters the event log',
    async () => {
      await admin.activateLicense(licenseId as `lic_${string}`, { fingerprint: 'overview-machine' })
      const activationCount = (await admin.listAllActivations({ limit: 1 })).totalCount
      assert.ok(activationCount > 0)
      await navigate(page, 'Overview')
      await page
        .locator('dl.cards > div')
        .filter({ has: page.getByText('Activations', { exact: true }) })
        .getByRole('definition')
        .getByText(activationCount.toLocaleString('en'), { exact: true })
        .waitFor()
      await page.getByRole('heading', { name: 'Latest events' }).waitFor()
      const latest = page.getByRole('table', { name: 'Latest events' })
      await latest.getByRole('row').nth(5).waitFor() // a header and the five latest
      await checkScreen(page, '18-overview-events')
      await navigate(page, 'Events')
      await page.getByLabel('Type').selectOption('license.revoked')
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await page.waitForURL(/type=license\.revoked/)
      await page.getByText('1–1 of 1 event').waitFor()
      const revoked = await admin.getLicense(licenseId as `lic_${string}`)
      const events = page.getByRole('table', { name: 'Events' })
      await events.getByRole('link', { name: `License ${revoked.key.split('-')[0]}-… revoked` }).waitFor()
      await events.locator('summary').first().click()
      await events.getByText(`"id": "${licenseId}"`).waitFor()
      await checkScreen(page, '19-events')
      await page.goto(`${base}/dashboard/licenses/${licenseId}`)
      const recent = page.getByRole('table', { name: 'Recent events of this license' })
      await recent.getByText('activation.created').waitFor() // an activation's event is about its license too
      const own = await admin.listEvents({ limit: 10, filter: `licenseId:eq:${licenseId}` })
      assert.equal(await recent.getByRole('row').count(), own.data.length + 1)
      assert.ok(own.data.some((event) => event.type === 'license.reinstated'))
    },
  )

  await t.test(
    'draws the activity per day and finds anything from the search box (/ or Ctrl-K)',
    async () => {
      const soon = await admin.createLicense({
        productId: other.id, // another product's: the product key's view below counts Acme's licenses
        expirationDate: new Date(Date.now() + 10 * 86_400_000).toISOString(),
      })
      // Counts only grow and reach the table every few seconds: what the page draws lies between two reads.
      const before = await admin.stats()
      await navigate(page, 'Overview')
      const created = page.getByRole('img', { name: /^New licenses per day, .*: [\d,]+ created$/ })
      await created.waitFor()
      const after = await admin.stats()
      const name = (await created.locator('title').first().textContent()) ?? ''
      const shown = Number(/([\d,]+) created$/.exec(name)?.[1]?.replaceAll(',', '') ?? Number.NaN)
      assert.ok(
        before.totals.licensesCreated <= shown && shown <= after.totals.licensesCreated,
        `${before.totals.licensesCreated} <= ${shown} <= ${after.totals.licensesCreated}`,
      )
      await page
        .getByRole('img', { name: /^Validations per day, .*: [\d,]+ valid, [\d,]+ not valid$/ })
        .waitFor()
      await page.getByRole('img', { name: /^Sales per day, .*: 0 sold, 0 renewed$/ }).waitFor()
      const failures = page.getByRole('region', { name: 'Latest failures' })
      await failures.getByText('No webhook delivery is failing.').waitFor()
      const expiring = page.getByRole('region', { name: 'Expiring within 30 days' })
      await expiring.getByRole('link', { name: soon.key }).waitFor()
      assert.equal(after.now.licensesExpiringSoon, 1)
      await page
        .locator('dl.cards > div')
        .filter({ has: page.getByText('Expiring within 30 days', { exact: true }) })
        .getByRole('definition')
        .getByText('1', { exact: true })
        .waitFor()
      await page.getByRole('combobox', { name: 'Period' }).selectOption('90')
      const from = new Date(Date.now() - 89 * 86_400_000).toISOString().slice(0, 10)
      await page.getByRole('img', { name: new RegExp(`^Machines per day, ${from} to `) }).waitFor()
      // One product's activity: the request names it.
      const asked = page.waitForRequest((request) =>
        request.url().includes(`/stats?from=${from}&productId=${productId}`),
      )
      await page
        .getByRole('combobox', { name: 'Product', exact: true })
        .selectOption({ label: 'Acme Photo Editor' })
      await asked
      await checkScreen(page, '24-overview-activity')

      // `/` from anywhere but a text field: a key typed loosely, then Enter opens the first hit.
      await page.locator('body').click({ position: { x: 5, y: 5 } })
      await page.keyboard.press('/')
      const search = page.getByRole('dialog', { name: 'Search' })
      const box = search.getByLabel('Find a license, customer or machine')
      await box.waitFor()
      await box.fill(soon.key.replaceAll('-', '').toLowerCase())
      await search.getByRole('link', { name: new RegExp(`License: ${soon.key}`) }).waitFor()
      await checkScreen(page, '25-search')
      await box.press('Enter')
      await page.waitForURL(new RegExp(`/licenses/${soon.id}$`))
      await page.getByRole('heading', { name: /^License / }).waitFor()
      // Ctrl-K works from inside a text field too.
      await page.getByLabel('Uses to record').focus()
      await page.keyboard.press('Control+k')
      await box.fill('ADA@example.com')
      // The arrow keys move from the box to the hits; Enter follows the one in focus.
      const hit = search.getByRole('link', { name: /Customer: ada@example\.com/ })
      await hit.waitFor()
      await box.press('ArrowDown')
      assert.match(String(await inPage(page, 'document.activeElement?.textContent')), /^Customer: ada@/)
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: hostileName, level: 1 }).waitFor()
      assert.equal(await search.isVisible(), false)
    },
  )

  await t.test(
    'activates an air-gapped machine from its request file and frees its seat by its code',
    async () => {
      const license = await admin.createLicense({
        productId: productId as `prd_${string}`,
        maxActivations: 2,
      })
      const fingerprint = 'lab-pc-4'
      const request = await createActivationRequest({
        licenseKey: license.key,
        productId,
        fingerprint,
        name: 'Lab PC 4',
      })
      await navigate(page, 'Licenses')
      await page.getByRole('link', { name: 'Offline activation' }).click()
      await page.getByRole('heading', { name: 'Offline activation', level: 1 }).waitFor()
      await page.getByLabel('Or paste the request').fill(request)
      await page.getByRole('button', { name: 'Activate machine', exact: true }).click()
      await page.getByText(/^Activated Lab PC 4 \(act_\w+\) on lic_\w+\. Its license file expires/).waitFor()
      await checkScreen(page, '26-offline-activation')
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download license file' }).click(),
      ])
      assert.equal(download.suggestedFilename(), 'lab-pc-4.license')
      const file = await verifyLicenseFile(readFileSync(await download.path(), 'utf8'), {
        productId,
        publicKey: (await admin.getProduct(productId as `prd_${string}`)).publicKey,
        licenseKey: license.key,
        fingerprint,
      })
      const activationId = file.activationId ?? ''
      const form = page.getByRole('form', { name: 'Enter a deactivation code' })
      await form.getByLabel('Activation id').fill(activationId)
      await form.getByLabel('Deactivation code').fill('AAAA-AAAA-AAAA-AAAA')
      await form.getByRole('button', { name: 'Deactivate machine' }).click()
      await form
        .getByRole('alert')
        .getByText(/4 more wrong codes/)
        .waitFor()
      const code = await createDeactivationCode({ activationId, secret: file.deactivationSecret ?? '' })
      await form.getByLabel('Deactivation code').fill(code.toLowerCase())
      await form.getByRole('button', { name: 'Deactivate machine' }).click()
      await page
        .getByRole('region', { name: 'Enter a deactivation code' })
        .getByText(`Deactivated ${activationId}: its seat is free.`)
        .waitFor()
      assert.equal((await admin.listActivations(license.id)).totalCount, 0)
      await checkScreen(page, '27-offline-deactivation')
    },
  )

  await t.test(
    'manages a webhook endpoint: secret shown once, edit, test event delivered after a retry, rotate, delete',
    async () => {
      const receiver = await startWebhookReceiver(t, 503) // down at first: the delivery waits for a retry
      await navigate(page, 'Webhooks')
      await page.getByText('Add an endpoint').click()
      const form = page.getByRole('form', { name: 'Add a webhook endpoint' })
      await form.getByLabel('URL').fill(receiver.url)
      await form.getByLabel('Description').fill('Billing sync')
      await form.getByLabel('Event types').fill('license.*')
      await form.getByRole('button', { name: 'Add endpoint' }).click()
      const secret = await page.getByRole('textbox', { name: 'Secret', exact: true }).inputValue()
      assert.match(secret, /^whsec_/)
      await page.getByRole('button', { name: 'I have stored it' }).click()
      await page.getByRole('link', { name: receiver.url }).waitFor()
      assert.equal(await page.getByRole('textbox', { name: 'Secret', exact: true }).count(), 0)
      await checkScreen(page, '22-webhooks')
      await page.getByRole('link', { name: receiver.url }).click()
      await page.getByRole('heading', { name: 'Billing sync', level: 1 }).waitFor()
      const edit = page.getByRole('form', { name: 'Edit' })
      await edit.getByLabel('Description').fill('Billing sync (EU)')
      await edit.getByRole('button', { name: 'Save endpoint' }).click()
      await page.getByRole('heading', { name: 'Billing sync (EU)', level: 1 }).waitFor()

      await page.getByRole('button', { name: 'Send a test event' }).click()
      await page.getByText('Test event queued.').waitFor()
      const deliveries = page.getByRole('table', { name: 'Deliveries' })
      // .first(): on a slow machine the delivery's own retry may have failed once more already.
      await deliveries.getByText('HTTP 503').first().waitFor()
      const [first] = receiver.received
      assert.equal(JSON.parse(first?.body ?? '{}').type, 'webhook_endpoint.test')
      assert.ok(first?.headers['webhook-signature']?.startsWith('v1,'))
      receiver.status = 200
      await page.getByRole('button', { name: 'Retry webhook_endpoint.test' }).click()
      await deliveries.getByText('delivered', { exact: true }).waitFor()
      assert.ok(receiver.received.length >= 2, 'sent while the receiver was down, and again')
      assert.equal(await page.getByRole('region', { name: 'Delivery log' }).getByRole('alert').count(), 0)
      await checkScreen(page, '21-webhook')

      await dialogConfirm(page, 'Rotate secret', 'Rotate secret')
      const rotated = await page.getByRole('textbox', { name: 'Secret', exact: true }).inputValue()
      assert.match(rotated, /^whsec_/)
      assert.notEqual(rotated, secret)
      await page.getByRole('button', { name: 'I have stored it' }).click()
      await dialogConfirm(page, 'Delete endpoint', 'Delete endpoint')
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
      await page.getByText('No endpoints yet').waitFor()
      assert.equal(await page.getByRole('link', { name: receiver.url }).count(), 0)
      assert.equal((await admin.listWebhookEndpoints()).data.length, 0)
    },
  )

  await t.test(
    'sells through a Lemon Squeezy integration: a signed order becomes a license, shown among the received events',
    async () => {
      await navigate(page, 'Payment providers')
      await page.getByText('Add an integration').click()
      const form = page.getByRole('form', { name: 'Add an integration' })
      await form.getByLabel('Provider').selectOption({ label: 'Lemon Squeezy' })
      await form.getByLabel('Webhook signing secret').fill('ls-dashboard-secret')
      await form.getByLabel('Lemon Squeezy variant id').fill('4711')
      await form
        .getByLabel('Sells (product — policy)')
        .selectOption({ label: 'Acme Photo Editor — Pro yearly' })
      await form.getByLabel('Days a license keeps working after a failed payment').fill('5')
      await form.getByRole('button', { name: 'Add integration' }).click()
      await page.getByRole('heading', { name: 'Lemon Squeezy', level: 1 }).waitFor()
      await page.getByText('The license keeps working 5 days').waitFor()
      await page.getByText('Nothing received yet.', { exact: false }).waitFor()
      const receiverUrl = await page.locator('dd code', { hasText: '/webhook' }).textContent()
      assert.match(receiverUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/api\/v0\/integrations\/int_\w+\/webhook$/)

      // Lemon Squeezy's order_created, as it documents it: signed with the secret (X-Signature).
      const order = JSON.stringify({
        meta: { test_mode: true, event_name: 'order_created', custom_data: {} },
        data: {
          type: 'orders',
          id: '9001',
          attributes: {
            customer_id: 77,
            identifier: 'f1c4a6e2-0d6b-4c53-9a4e-2b1f7f0e9a11',
            order_number: 9001,
            user_name: 'Lena Buyer',
            user_email: 'lena@example.com',
            status: 'paid',
            refunded: false,
            first_order_item: { id: 1, order_id: 9001, product_id: 1, variant_id: 4711, price: 4900 },
            created_at: '2026-11-20T09:00:00.000000Z',
            updated_at: '2026-11-20T09:00:00.000000Z',
          },
        },
      })
      const delivered = await fetch(receiverUrl ?? '', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature': createHmac('sha256', 'ls-dashboard-secret').update(order).digest('hex'),
        },
        body: order,
      })
      assert.equal(delivered.status, 200, await delivered.text())
      await page.reload()
      const received = page.getByRole('table', { name: 'Received provider events' })
      await received.getByText('order_created').waitFor()
      await received.getByText('processed', { exact: true }).waitFor()
      const [customer] = (await admin.listCustomers({ filter: 'email:eq:lena@example.com' })).data
      assert.ok(customer !== undefined, 'the buyer became a customer')
      const licenses = await admin.listLicenses({ filter: `customerId:eq:${customer.id}` })
      assert.equal(licenses.data.length, 1)
      assert.equal(licenses.data[0]?.productId, productId)
      await checkScreen(page, '22-integration')
      // The license page names the order it was sold through.
      await page.goto(`${base}/dashboard/licenses/${licenses.data[0]?.id}`)
      const soldThrough = page
        .getByRole('definition')
        .filter({ has: page.getByRole('link', { name: 'Lemon Squeezy' }) })
      await soldThrough.getByText('order').waitFor()
      await soldThrough.getByText('9001', { exact: true }).waitFor()
    },
  )

  await t.test('signs out, and back in with email and password', async () => {
    await signOut(page)
    await checkScreen(page, '24-sign-in')
    await page.reload()
    await page.getByLabel('Password').waitFor()
    await signIn(page, base, ownerEmail)
    // Changes made from the dashboard are the operator's, named when shown.
    await navigate(page, 'Events')
    await page.getByRole('cell', { name: 'Olga Owner <olga@example.com>' }).first().waitFor()
    await page.getByLabel('By operator').selectOption({ label: 'Olga Owner (olga@example.com)' })
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await page.waitForURL(/operatorId=opr_/)
    // Only the operator's events are left: no API key's.
    await page
      .getByRole('cell', { name: /^admin key / })
      .first()
      .waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'Olga Owner <olga@example.com>' }).first().waitFor()
  })

  await t.test(
    'invites a support operator, who sees no control its role may not use and is refused 403 by the API',
    async () => {
      const customer = await admin.createCustomer({ email: 'spare@example.com' })
      await navigate(page, 'Operators')
      await page.getByLabel('Email').fill('sam@example.com')
      await page.getByLabel('Name').fill('Sam Support')
      await page.getByLabel('Role', { exact: true }).selectOption('support')
      await page.getByRole('button', { name: 'Invite' }).click()
      const invitation = await page.getByLabel('Link', { exact: true }).inputValue()
      assert.match(invitation, /\/dashboard\/invitation#[\w-]{43}$/)
      await checkScreen(page, '25-operators')
      await page.getByRole('button', { name: 'Done' }).click()
      await page.getByRole('cell', { name: 'sam@example.com', exact: true }).waitFor()
      await signOut(page)

      apiAnswers.length = 0
      await page.goto(invitation)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Set password and sign in' }).click()
      await page.getByText('Sam Support (support)').waitFor()
      assert.equal(
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operators' }).count(),
        0,
      )
      await page.goto(`${base}/dashboard/customers/${customer.id}`)
      await page.getByRole('heading', { name: 'spare@example.com', level: 1 }).waitFor()
      assert.equal(await page.getByRole('button', { name: 'Delete customer' }).count(), 0)
      assert.equal(await page.getByRole('button', { name: /^Save/ }).count(), 0)
      await page.goto(`${base}/dashboard/licenses/${licenseId}`)
      // Support validates, revokes and reinstates; the admin's actions are not offered.
      await page.getByRole('button', { name: 'Actions', exact: true }).click()
      await page.getByRole('menuitem', { name: 'Revoke license…' }).waitFor()
      assert.deepEqual(await page.getByRole('menuitem').allTextContents(), [
        'Validate as the app would…',
        'Revoke license…',
      ])
      await page.keyboard.press('Escape')
      await page.getByRole('menu').waitFor({ state: 'detached' })
      for (const hidden of ['Record usage', 'Reset usage']) {
        assert.equal(await page.getByRole('button', { name: hidden }).count(), 0, hidden)
      }
      await checkScreen(page, '26-license-as-support')
      const refused = await inPage<{ status: number; code: string }>(
        page,
        `fetch('/operator/me').then((me) => me.json()).then(({ csrfToken }) =>
          fetch('/api/v0/customers/${customer.id}', { method: 'DELETE', headers: { 'x-keyturn-csrf': csrfToken } }))
          .then(async (res) => ({ status: res.status, code: (await res.json()).code }))`,
      )
      assert.deepEqual(refused, { status: 403, code: 'forbidden' })

      // The same person in a second browser; ending that session from the first signs it out.
      const otherContext = await browser.newContext()
      t.after(() => otherContext.close())
      const other = await otherContext.newPage()
      other.setDefaultTimeout(10_000)
      await signIn(other, base, 'sam@example.com')
      await operatorMenu(page, 'Your sessions')
      await page.getByRole('heading', { name: 'Your sessions', level: 1 }).waitFor()
      await page.getByText('This browser').waitFor()
      await checkScreen(page, '27-own-sessions')
      await page.getByRole('button', { name: /^End session from/ }).click()
      await page.getByRole('button', { name: /^End session from/ }).waitFor({ state: 'detached' })
      await navigate(other, 'Licenses')
      await other.getByText('Your session has ended. Sign in again.').waitFor()
      assert.equal((await admin.getCustomer(customer.id)).id, customer.id, 'the customer is still there')
      // The dashboard itself asked nothing the support role is refused.
      assert.deepEqual(
        apiAnswers.filter(
          (answer) => answer.startsWith('403 ') && !answer.endsWith(`/customers/${customer.id}`),
        ),
        [],
      )
      await signOut(page)
    },
  )

  await t.test('an owner hands a forgotten password a reset link, which sets a new one', async () => {
    await signIn(page, base, ownerEmail)
    await navigate(page, 'Operators')
    await page.getByRole('button', { name: 'Reset link for sam@example.com' }).click()
    const resetLink = await page.getByRole('textbox', { name: 'Reset link' }).inputValue()
    assert.match(resetLink, /\/dashboard\/password-reset#[\w-]{43}$/)
    await signOut(page)
    await page.goto(resetLink)
    await page.getByLabel('New password').fill('sam has a new passphrase')
    await page.getByRole('button', { name: 'Set password' }).click()
    await page.getByText('Your password was changed: sign in with it.').waitFor()
    await page.getByLabel('Email').fill('sam@example.com')
    await page.getByLabel('Password').fill('sam has a new passphrase')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('Sam Support (support)').waitFor()
    await signOut(page)
  })

  await t.test(
    'enrols an authenticator (QR code, first code, recovery codes once), then signs in with password and code; wrong codes lock the step',
    async () => {
      await signIn(page, base, ownerEmail)
      await operatorMenu(page, 'Two-factor authentication')
      await page.getByRole('button', { name: 'Turn on' }).click()
      await page.getByRole('img', { name: /QR code/ }).waitFor()
      const secret = Secret.fromBase32(String(await page.getByTestId('totp-secret').textContent()))
      const codeAt = (offsetMs: number) => new TOTP({ secret }).generate({ timestamp: Date.now() + offsetMs })
      await checkScreen(page, '15-two-factor-enrolment')
      await page.getByLabel('Code from your authenticator app').fill(codeAt(0))
      await page.getByRole('button', { name: 'Confirm' }).click()
      const codes = page.getByRole('region', { name: 'Recovery codes' }).getByRole('listitem')
      await codes.first().waitFor()
      assert.equal(await codes.count(), 10)
      await checkScreen(page, '16-recovery-codes')
      await page.getByRole('button', { name: 'I have stored them' }).click()
      await page.getByText(/^On: sign-in asks for a code/).waitFor()
      await signOut(page)

      await page.getByLabel('Email').fill(ownerEmail)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      const codeField = page.getByLabel('Code from your authenticator app')
      await codeField.waitFor()
      const pending = await inPage(
        page,
        '({ cookie: document.cookie, session: Object.keys(sessionStorage).length })',
      )
      assert.deepEqual(pending, { cookie: '', session: 0 }, 'the pending step keeps nothing in the browser')
      // The code that confirmed the enrolment is used up: the next step's code is the app's next one.
      await codeField.fill(codeAt(30_000))
      await checkScreen(page, '17-sign-in-code')
      await page.getByRole('button', { name: 'Verify' }).click()
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
      await signOut(page)

      await page.getByLabel('Email').fill(ownerEmail)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      for (let i = 0; i < 5; i++) {
        await page.getByLabel('Code from your authenticator app').fill(String(100_000 + i))
        await page.getByRole('button', { name: 'Verify' }).click()
        await page.getByText(/The code is wrong/).waitFor()
      }
      await page.getByLabel('Code from your authenticator app').fill(codeAt(30_000))
      await page.getByRole('button', { name: 'Verify' }).click()
      await page.getByText(/Too many wrong codes/).waitFor()
    },
  )

  assert.deepEqual(cspViolations, [], 'the dashboard itself breaks none of its CSP')
})

it('signs an operator in with single sign-on at a real OpenID Connect provider', {
  skip: skipWithoutChromium,
  timeout: 60_000,
}, async (t: TestContext) => {
  await buildDashboard()
  // The provider sends the browser back to KEYTURN_PUBLIC_URL; the browser below routes that name
  // to the server the test started.
  const publicUrl = 'http://keyturn.test'
  const provider = await startOidcTestProvider(`${publicUrl}/operator/oidc/callback`)
  t.after(() => provider.close())
  const caDir = mkdtempSync(join(tmpdir(), 'keyturn-oidc-ca-'))
  t.after(() => rmSync(caDir, { recursive: true, force: true }))
  writeFileSync(join(caDir, 'ca.pem'), provider.caCertificate)
  const server = await startServerProcess(t, {
    ...(await sqliteServerEnvironment().fresh(t)),
    KEYTURN_ADMIN_KEY: adminKey,
    KEYTURN_PUBLIC_URL: publicUrl,
    KEYTURN_OIDC_ISSUER: provider.issuer,
    KEYTURN_OIDC_CLIENT_ID: provider.clientId,
    KEYTURN_OIDC_CLIENT_SECRET: provider.clientSecret,
    KEYTURN_OIDC_DOMAINS: 'example.com',
    NODE_EXTRA_CA_CERTS: join(caDir, 'ca.pem'),
  })
  provider.signInAs({ sub: 'zoe-7', email: 'zoe@example.com', email_verified: true, name: 'Zoe Zed' })
  // The provider's certificate comes from the test's own certificate authority.
  const context = await (await chromium()).newContext({ ignoreHTTPSErrors: true })
  t.after(() => context.close())
  await context.route(`${publicUrl}/**`, (route) => {
    const url = new URL(route.request().url())
    return route.fulfill({ status: 307, headers: { location: `${server.url}${url.pathname}${url.search}` } })
  })
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  await page.goto(`${server.url}/dashboard/`)
  await page.getByRole('link', { name: 'Sign in with SSO' }).click()
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
  await page.getByText('Zoe Zed (viewer)').waitFor()
  assert.equal(new URL(page.url()).origin, server.url, 'back on the dashboard')
  assert.equal(await inPage(page, 'document.cookie'), '', 'the session cookie is httpOnly')
})
