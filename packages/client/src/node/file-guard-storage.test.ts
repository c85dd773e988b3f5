import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { fileGuardStorage } from '@keyturn/client/node'

it("keeps the guard's proof in the user's data folder, readable only by the user, and forgets it", async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'keyturn-data-'))
  const saved = process.env.XDG_DATA_HOME
  process.env.XDG_DATA_HOME = home
  t.after(() => {
    if (saved === undefined) {
      delete process.env.XDG_DATA_HOME
    } else {
      process.env.XDG_DATA_HOME = saved
    }
    rmSync(home, { recursive: true, force: true })
  })
  const storage = fileGuardStorage({ appName: 'photo-editor' })
  assert.equal(await storage.get('keyturn-guard:prd_1'), null)
  await storage.set('keyturn-guard:prd_1', 'first')
  await storage.set('keyturn-guard:prd_1', 'second')
  assert.equal(await storage.get('keyturn-guard:prd_1'), 'second')
  const folder = join(home, 'photo-editor')
  const files = readdirSync(folder)
  assert.equal(files.length, 1, `one file, no temporary left: ${files.join(', ')}`)
  if (process.platform !== 'win32') {
    assert.equal(statSync(join(folder, files[0] ?? '')).mode & 0o777, 0o600)
    assert.equal(statSync(folder).mode & 0o777, 0o700)
  }
  await storage.delete('keyturn-guard:prd_1')
  assert.equal(await storage.get('keyturn-guard:prd_1'), null)
  assert.throws(() => fileGuardStorage({ appName: '../elsewhere' }), TypeError)
})
