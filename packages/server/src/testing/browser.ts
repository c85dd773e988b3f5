import { existsSync } from 'node:fs'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type BuildOptions, build } from 'esbuild'
import { type Browser, chromium } from 'playwright-core'

/** Debian's Chromium (CI installs the `chromium` package); never a browser that Playwright downloads. */
export const chromiumPath = '/usr/bin/chromium'

/** `false` when Chromium is installed, else why browser tests are skipped: for `it(…, { skip })`. */
export const skipWithoutChromium: string | false = existsSync(chromiumPath)
  ? false
  : `${chromiumPath} is not installed (apt-get install chromium; CI installs it)`

/** esbuild options that make a browser bundle: a `node:` import, or any Node built-in, fails the build. */
export const browserBundleOptions = {
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  write: false,
  logLevel: 'silent',
} as const satisfies BuildOptions

/**
 * The BUILT `@keyturn/client` (`packages/client/dist/client/src/index.js`, from `tsc -b`) bundled with its
 * dependencies into one browser ESM file, as an application's bundler would.
 */
export async function bundleClientForBrowser(): Promise<string> {
  const entry = fileURLToPath(import.meta.resolve('@keyturn/client'))
  if (!existsSync(entry)) {
    throw new Error(`${entry} does not exist: run \`npx tsc -b\` first`)
  }
  const result = await build({ ...browserBundleOptions, entryPoints: [entry] })
  const [output] = result.outputFiles
  if (output === undefined) {
    throw new Error('esbuild wrote no bundle')
  }
  return output.text
}

/** Headless Debian Chromium, closed after the test. */
export async function launchChromium(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    timeout: 30_000,
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
  t.after(() => browser.close())
  return browser
}
