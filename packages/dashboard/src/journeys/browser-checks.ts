/**
 * @module What the dashboard's browser tests share: building the dashboard when its sources changed,
 * axe-core on a screen, and a watch for Content-Security-Policy violations (the page's own
 * `securitypolicyviolation` events and Chromium's console reports), so any refused script or style
 * fails the test that caused it.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BrowserContext, Page } from 'playwright-core'

export const repository = fileURLToPath(new URL('../../../../', import.meta.url))
export const dashboardDir = join(repository, 'packages', 'dashboard')
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** The browser tests themselves (this folder): not part of the built dashboard. */
const journeysDir = fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '')

/** The newest modification time of a file under `path` (or of `path` itself), leaving the tests out. */
function newestChange(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) {
    return stat.mtimeMs
  }
  if (path === journeysDir) {
    return 0
  }
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))))
}

/**
 * Builds the dashboard when its sources changed since the last build, so a test never runs a stale
 * one. A change to a browser test alone does not call for a build.
 */
export async function buildDashboard(): Promise<void> {
  const built = join(dashboardDir, 'dist', 'index.html')
  const sources = ['src', 'index.html', 'vite.config.ts', 'package.json'].map((name) =>
    join(dashboardDir, name),
  )
  if (existsSync(built) && statSync(built).mtimeMs > Math.max(...sources.map(newestChange))) {
    return
  }
  const { build } = await import('vite')
  await build({ root: dashboardDir, configFile: join(dashboardDir, 'vite.config.ts'), logLevel: 'warn' })
}

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: unknown[] }[]
}

/**
 * Evaluates `expression` in the page. A string, not a function: this package compiles without the
 * DOM's types, and tsx would wrap a function's inner names in a helper the page does not have.
 */
export async function inPage<T = unknown>(page: Page, expression: string): Promise<T> {
  return (await page.evaluate(expression)) as T // the expression's result, as the caller states
}

/** axe-core finds no serious or critical violation on the page as it is now. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  // A dialog or toast fading in is judged once it is there: axe measures contrast through opacity.
  // A running animation or transition (a theme switch fades the colours) is taken to its end state
  // at once; one that cannot be finished (an endless one) is waited for.
  // (Polled in the page's own frames: waitForFunction would evaluate a string, which the CSP refuses.)
  await inPage(
    page,
    `new Promise((resolve) => {
      const settled = () => document.getAnimations().every((animation) => {
        if (animation.playState === 'running') {
          try { animation.finish() } catch {}
        }
        return animation.playState !== 'running'
      })
      const check = () => (settled() ? resolve(true) : requestAnimationFrame(check))
      check()
    })`,
  )
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a <script> would be refused).
  // Once per document: a screen reached through the router keeps the page, and axe with it.
  if (!(await inPage<boolean>(page, "typeof axe !== 'undefined'"))) {
    await page.evaluate(axeSource)
  }
  // Only the violations are read: axe then skips describing every element that passed (a quarter of its time).
  const violations = await inPage<AxeViolation[]>(
    page,
    "axe.run({ resultTypes: ['violations'] }).then((result) => result.violations)",
  )
  const grave = violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  )
  assert.deepEqual(
    grave.map(
      (violation) =>
        `${violation.id}: ${violation.help} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
    ),
    [],
    `axe-core on ${name}`,
  )
}

/**
 * Collects every CSP violation of the context's pages into the returned list: the
 * `securitypolicyviolation` event (listened for by a script the browser adds to every document
 * through the DevTools protocol, which the CSP does not govern) and the console's reports.
 */
export async function watchCsp(context: BrowserContext): Promise<string[]> {
  const violations: string[] = []
  await context.exposeBinding('__keyturnCspViolation', (_source, text: string) => {
    violations.push(text)
  })
  await context.addInitScript(
    `document.addEventListener('securitypolicyviolation', (event) => {
      window.__keyturnCspViolation(event.violatedDirective + ' refused ' + (event.blockedURI || 'inline') + ' ' + (event.sample || ''))
    })`,
  )
  context.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) {
      violations.push(message.text())
    }
  })
  return violations
}
