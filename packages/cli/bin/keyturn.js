#!/usr/bin/env node
// The `keyturn` command. Committed (not built) so that npm links it on the first `npm install` of a
// fresh clone: npm links workspace binaries before the root `prepare` script builds dist/.
try {
  await import('../dist/main.js')
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js')) {
    process.stderr.write('keyturn is not built yet: run `npm run build` in the Keyturn checkout.\n')
    process.exit(1)
  }
  throw error
}
