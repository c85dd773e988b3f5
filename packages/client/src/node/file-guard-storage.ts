import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import envPaths from 'env-paths'
import type { LicenseGuardStorage } from '../guard/types.js'

export interface FileGuardStorageOptions {
  /** Your application's name: the data folder is this user's data folder for it (see `directory`). */
  readonly appName?: string
  /**
   * The folder to keep files in, instead of the per-user data folder of `appName`: on Linux
   * `$XDG_DATA_HOME/<appName>` (default `~/.local/share/<appName>`), on macOS
   * `~/Library/Application Support/<appName>`, on Windows `%LOCALAPPDATA%\<appName>\Data`.
   */
  readonly directory?: string
}

/**
 * Guard storage for Node: one file per key in a per-user data folder, readable only by this user
 * (mode 0600, folder 0700), written whole (a temporary file renamed over the old one) so a crash
 * never leaves half a proof.
 *
 * @example
 * ```ts
 * import { fileGuardStorage } from '@keyturn/client/node'
 *
 * const storage = fileGuardStorage({ appName: 'photo-editor' }) // ~/.local/share/photo-editor on Linux
 * ```
 */
export function fileGuardStorage(options: FileGuardStorageOptions): LicenseGuardStorage {
  const directory = folderOf(options)
  const fileOf = (key: string) =>
    join(directory, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`)
  return {
    async get(key) {
      try {
        return await readFile(fileOf(key), 'utf8')
      } catch (error) {
        // A file-system error carries its errno code.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          return null
        }
        throw error
      }
    },
    async set(key, value) {
      await mkdir(directory, { recursive: true, mode: 0o700 })
      const file = fileOf(key)
      const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
      await writeFile(temporary, value, { mode: 0o600 })
      await rename(temporary, file)
    },
    async delete(key) {
      await rm(fileOf(key), { force: true })
    },
  }
}

function folderOf(options: FileGuardStorageOptions): string {
  if (options.directory !== undefined) {
    if (typeof options.directory !== 'string' || options.directory === '') {
      throw new TypeError('fileGuardStorage: `directory` must be a folder path')
    }
    return options.directory
  }
  const name = options.appName
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/.test(name)) {
    throw new TypeError(
      'fileGuardStorage needs an `appName` (letters, digits, space, dot, dash, underscore) or a `directory`',
    )
  }
  return envPaths(name, { suffix: '' }).data
}
