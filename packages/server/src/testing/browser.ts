import { existsSync } from 'node:fs'
import { after, type TestContext } from 'node:test'
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

function launch(): Promise<Browser> {
  return chromium.launch({
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
}

/** Headless Debian Chromium, closed after the test. */
export async function launchChromium(t: TestContext): Promise<Browser> {
  const browser = await launch()
  t.after(() => browser.close())
  return browser
}

/**
 * One headless Debian Chromium for all the tests of a file (a launch costs about a second of CPU):
 * call it at the file's top level; the function it returns launches the browser when first called
 * and gives the same one after, closed after the file's last test. Each test opens its own
 * context (`browser.newContext()`: its own cookies and storage) and closes it.
 */
export function chromiumPerFile(): () => Promise<Browser> {
  let launched: Promise<Browser> | undefined
  after(async () => {
    await (await launched)?.close()
  })
  return () => {
    launched ??= launch()
    return launched
  }
}
