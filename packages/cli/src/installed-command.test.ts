import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'

const repository = fileURLToPath(new URL('../../../', import.meta.url))
const installed = '/opt/keyturn/'

it('puts keyturn on the PATH as deploy/keyturn.service and the production guide say, and it runs from there', (t) => {
  const unit = readFileSync(join(repository, 'deploy', 'keyturn.service'), 'utf8')
  const production = readFileSync(join(repository, 'docs', 'operations', 'production.md'), 'utf8')
  const backups = readFileSync(join(repository, 'docs', 'operations', 'backups.md'), 'utf8')
  const [, target = '', link = ''] = /^#\s+ln -s (\S+) (\S+)/m.exec(unit) ?? []
  assert.equal(link, '/usr/local/bin/keyturn', 'the unit installs the command')
  assert.ok(production.includes(`ln -s ${target} ${link}`), 'the production guide gives the same step')
  assert.match(backups, /`keyturn backup --database-url sqlite:\/var\/lib\/keyturn\/keyturn\.db --out/)
  const bin = mkdtempSync(join(tmpdir(), 'keyturn-bin-'))
  t.after(() => rmSync(bin, { recursive: true, force: true }))
  // The same link, to this checkout instead of /opt/keyturn.
  symlinkSync(join(repository, target.slice(installed.length)), join(bin, 'keyturn'))

  const run = spawnSync('keyturn', ['--version'], {
    env: { PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin` },
    encoding: 'utf8',
  })

  assert.equal(run.status, 0, `${run.stderr}${run.error ?? ''}`)
  assert.match(run.stdout, /^\d+\.\d+\.\d+\n$/)
})
