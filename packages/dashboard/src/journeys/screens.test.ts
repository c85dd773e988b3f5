/**
 * @module Every screen of the dashboard at desktop width (1280 px) and phone width (390 px), in the
 * light and the dark theme (the system setting, emulated), in Chromium against a real `keyturn
 * serve` on SQLite. At both widths axe-core finds no serious or critical violation in either theme; at
 * 390 px the page never scrolls sideways (wide tables scroll inside their own box). No screen breaks
 * the page's Content-Security-Policy. Screenshots go to artifacts/dashboard/screens/ (not committed).
 * Each screen is opened once and looked at in the four states (a theme and a width each), switched
 * by the emulated system setting and the viewport: one route change per screen, not four.
 */
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { KeyturnClient } from '@keyturn/client'
import { launchChromium, skipWithoutChromium } from '@keyturn/server/testing/browser'
import { sqliteServerEnvironment } from '@keyturn/server/testing/server-environments'
import { startServerProcess } from '@keyturn/server/testing/server-process'
import type { Page } from 'playwright-core'
import { assertAccessible, buildDashboard, inPage, repository, watchCsp } from './browser-checks.js'

const adminKey = 'kt_admin_dashboard-screens-in-chromium-0000001'
const screenshotDir = join(repository, 'artifacts', 'dashboard', 'screens')
const email = 'owen@example.com'
const password = 'correct horse battery staple'

/** Opens `path` inside the running app (the router's own navigation, no reload) and waits for its heading. */
async function openScreen(page: Page, path: string, heading: string): Promise<void> {
  await inPage(
    page,
    `window.history.pushState({}, '', '/dashboard${path}'); window.dispatchEvent(new PopStateEvent('popstate'))`,
  )
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
}

it('shows every screen accessibly in both themes, at desktop and at phone width', {
  skip: skipWithoutChromium,
  timeout: 120_000,
}, async (t: TestContext) => {
  mkdirSync(screenshotDir, { recursive: true })
  await buildDashboard()
  const env = await sqliteServerEnvironment().fresh(t)
  const server = await startServerProcess(t, {
    ...env,
    KEYTURN_ADMIN_KEY: adminKey,
    // The endpoint is never called (no event is sent to it); the guard just lets a loopback URL be stored.
    KEYTURN_WEBHOOK_ALLOW_HTTP: 'true',
    KEYTURN_WEBHOOK_ALLOW_PRIVATE: 'true',
  })
  const admin = new KeyturnClient({ baseUrl: server.url, apiKey: adminKey })
  // One of everything a screen shows, with a long name where a narrow screen could overflow.
  const product = await admin.createProduct({ name: 'Photo Editor Professional for Teams and Studios' })
  const entitlement = await admin.createEntitlement({
    productId: product.id,
    code: 'export-pdf',
    name: 'PDF export',
  })
  const policy = await admin.createPolicy({ productId: product.id, name: 'Team yearly', maxActivations: 5 })
  const customer = await admin.createCustomer({
    email: 'ada.lovelace@analytical-engines.example.com',
    name: 'Ada',
  })
  const license = await admin.createLicense({
    productId: product.id,
    policyId: policy.id,
    customerId: customer.id,
  })
  await admin.revokeLicense(license.id)
  await admin.createLicense({ productId: product.id, customerId: customer.id })
  const endpoint = await admin.createWebhookEndpoint({
    url: 'http://127.0.0.1:9/keyturn/receiver/with/a/rather/long/path/for/narrow/screens',
    eventTypes: ['license.*'],
  })

  const screens: [path: string, heading: string][] = [
    ['/', 'Overview'],
    ['/products', 'Products'],
    [`/products/${product.id}`, product.name],
    ['/licenses', 'Licenses'],
    [`/licenses/${license.id}`, license.key],
    ['/licenses/new', 'Create a license'],
    ['/licenses/offline', 'Offline activation'],
    ['/customers', 'Customers'],
    [`/customers/${customer.id}`, 'Ada'],
    ['/policies', 'Policies'],
    [`/policies/${policy.id}`, policy.name],
    ['/entitlements', 'Entitlements'],
    [`/entitlements/${entitlement.id}`, entitlement.name],
    ['/events', 'Events'],
    ['/webhooks', 'Webhooks'],
    [`/webhooks/${endpoint.id}`, endpoint.url],
    ['/integrations', 'Payment providers'],
    ['/mail', 'Mail'],
    ['/api-keys', 'API keys'],
    ['/operators', 'Operators'],
    ['/sessions', 'Your sessions'],
    ['/two-factor', 'Two-factor authentication'],
  ]

  const browser = await launchChromium(t)
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    // Dialogs and toasts appear at once (the theme respects reduced motion): no waiting on transitions.
    reducedMotion: 'reduce',
  })
  const cspViolations = await watchCsp(context)
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  const setupLink = /(http:\/\/\S+\/dashboard\/setup#\S+)/.exec(server.output())?.[1]
  assert.ok(setupLink !== undefined, server.output())
  await page.goto(setupLink)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Name').fill('Owen Owner')
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Create owner and sign in' }).click()
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()

  /** The theme (the system setting, emulated: Mantine hears the media query's change) and the width. */
  async function show(colorScheme: 'light' | 'dark', width: 1280 | 390): Promise<void> {
    await page.setViewportSize(width === 1280 ? { width, height: 900 } : { width, height: 844 })
    await page.emulateMedia({ colorScheme })
    await inPage(
      page,
      `new Promise((resolve) => {
        const check = () => document.documentElement.dataset.mantineColorScheme === '${colorScheme}' ? resolve(true) : requestAnimationFrame(check)
        check()
      })`,
    )
  }
  // Each screen opened once and looked at in all four states; every other screen takes them in the
  // reverse order, so it starts in the state the previous one ended in.
  const states = [
    ['light', 1280],
    ['dark', 1280],
    ['dark', 390],
    ['light', 390],
  ] as const
  for (const [index, [path, heading]] of screens.entries()) {
    await openScreen(page, path, heading)
    for (const [colorScheme, width] of index % 2 === 0 ? states : states.toReversed()) {
      await show(colorScheme, width)
      if (width === 1280) {
        await assertAccessible(page, `${path} at 1280 px, ${colorScheme}`)
        continue
      }
      const overflow = await inPage<{ scroll: number; width: number }>(
        page,
        '({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })',
      )
      if (overflow.scroll > overflow.width) {
        // The elements that reach past the right edge, to say what overflows.
        const wide = await inPage<string[]>(
          page,
          `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-scroll'))
            .slice(-6).map((e) => e.tagName + '.' + e.className + ' in ' + (e.closest('table')?.caption?.textContent ?? e.parentElement?.tagName) + ' ' + Math.round(e.getBoundingClientRect().right))
            .concat([...document.querySelectorAll('body, body *')].filter((e) => e.scrollWidth > window.innerWidth && !e.closest('.table-scroll')).slice(-4).map((e) => 'wide box ' + e.tagName + '.' + e.className + ' ' + e.scrollWidth))`,
        )
        assert.fail(
          `${path} at 390 px (${colorScheme}) scrolls sideways: ${overflow.scroll} px > ${overflow.width}: ${wide.join(', ')}`,
        )
      }
      await assertAccessible(page, `${path} at 390 px, ${colorScheme}`)
      const name = `${String(index + 1).padStart(2, '0')}-${path.split('/')[1] || 'overview'}-${index}`
      await page.screenshot({ path: join(screenshotDir, `${name}-390-${colorScheme}.png`), fullPage: true })
    }
  }
  await show('light', 390)

  // At phone width the navigation hides behind the burger, and opens from it.
  const burger = page.getByRole('button', { name: 'Open the navigation' })
  await burger.click()
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click()
  await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor()
  await page.getByRole('button', { name: 'Open the navigation' }).waitFor()
  assert.equal(await page.getByRole('navigation', { name: 'Main' }).isVisible(), false)

  // The theme switch overrides the system setting, kept in this browser; System follows it again.
  await page.setViewportSize({ width: 1280, height: 900 })
  await page.emulateMedia({ colorScheme: 'light' })
  const colourTheme = page.getByRole('radiogroup', { name: 'Colour theme' })
  await colourTheme.getByText('Dark', { exact: true }).click()
  const chosen = `({ scheme: document.documentElement.dataset.mantineColorScheme, kept: Object.values(localStorage) })`
  assert.deepEqual(await inPage(page, chosen), { scheme: 'dark', kept: ['dark'] })
  await page.reload()
  await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor()
  assert.deepEqual(await inPage(page, chosen), { scheme: 'dark', kept: ['dark'] })
  await colourTheme.getByText('System', { exact: true }).click()
  assert.deepEqual(await inPage(page, chosen), { scheme: 'light', kept: [] })
  assert.deepEqual(cspViolations, [], 'no screen breaks the CSP')
})
