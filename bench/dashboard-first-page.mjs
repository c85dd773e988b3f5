#!/usr/bin/env node
/**
 * Measures, once (not part of `npm test`), how fast the dashboard's licenses screen shows its first
 * page with 1,000,000 licenses on SQLite (the aim: under 1 s on this machine; reported, not
 * asserted). Seeds straight into the tables with bench/seed.mjs, starts `keyturn serve`, drives
 * Debian's Chromium, prints the timings and saves docs/dashboard.png (the dashboard guide's screenshot).
 *
 *   npm run build && node bench/dashboard-first-page.mjs [licenses]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { cleanupAll, installExitHandlers } from './cleanup.mjs'
import { createDatabase, licenseSeeder } from './seed.mjs'
import { startKeyturn } from './servers.mjs'

const root = resolve(import.meta.dirname, '..')
const licenses = Number(process.argv[2] ?? 1_000_000)
/** A page in the middle of the list at the default page size of 30. */
const middlePage = Math.max(1, Math.floor(licenses / 30 / 2))
const adminKey = 'kt_admin_dashboard-first-page-measurement-01'
const secret = 'dashboard-measurement-master-secret-0123456789'

installExitHandlers()
const dir = mkdtempSync(join(tmpdir(), 'keyturn-dashboard-bench-'))
try {
  const database = await createDatabase('sqlite', 'dashboard', { dir })
  let server = await startKeyturn({ databaseUrl: database.url, adminKey, secret })
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  const products = []
  for (const name of ['Photo Editor', 'Sound Studio']) {
    const res = await fetch(`${server.url}/api/v0/products`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name }),
    })
    products.push(await res.json())
  }
  await server.stop()
  const seconds = await licenseSeeder(database, products[0].id).grow(licenses)
  console.log(`seeded ${licenses.toLocaleString('en')} licenses in ${seconds.toFixed(1)} s`)
  server = await startKeyturn({ databaseUrl: database.url, adminKey, secret })

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1180, height: 620 } })
    page.setDefaultTimeout(60_000)
    await page.goto(`${server.url}/dashboard/`)
    await page.getByLabel('API key').fill(adminKey)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await page
      .getByText(/^1,000,000$|^\d[\d,]*$/)
      .first()
      .waitFor()

    const firstRow = () => page.locator('main table tbody tr').first().waitFor()
    const timed = async (name, action) => {
      const started = performance.now()
      await action()
      const ms = performance.now() - started
      console.log(`${name}: ${ms.toFixed(0)} ms`)
      return ms
    }
    await timed('licenses screen, first page (click in the navigation)', async () => {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Licenses' }).click()
      await firstRow()
    })
    await timed('licenses screen, first page (cold load of /dashboard/licenses)', async () => {
      await page.goto(`${server.url}/dashboard/licenses`)
      await firstRow()
    })
    for (const [name, query] of [
      ['filtered by status=active', 'status=active'],
      ['filtered by product and status', `productId=${products[0].id}&status=active`],
      ['sorted by key', 'sort=key:asc'],
      [`page ${middlePage.toLocaleString('en')} (offset paging, mid-list)`, `page=${middlePage - 1}`],
    ]) {
      await timed(`licenses screen, ${name}`, async () => {
        await page.goto(`${server.url}/dashboard/licenses?${query}`)
        await firstRow()
      })
    }
    await page.goto(`${server.url}/dashboard/licenses?limit=10`)
    await firstRow()
    await page.screenshot({ path: join(root, 'docs', 'dashboard.png') })
  } finally {
    await browser.close()
    await server.stop()
  }
} finally {
  await cleanupAll()
  rmSync(dir, { recursive: true, force: true })
}
