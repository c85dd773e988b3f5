import { createRequire } from 'node:module'

/** The server package's version (`user-agent: Keyturn-Webhooks/<version>`), read once from its package.json. */
export const serverVersion: string = (
  createRequire(import.meta.url)('../package.json') as { version: string }
).version
