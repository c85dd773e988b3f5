/**
 * @module The server's entry points for the CLI, one file each under entry/: `serve(env)`
 * (config → database → app → listen), `prepare(env)` (the primary's share when `keyturn serve
 * --workers` runs several), `migrate(env)`, `backup`/`restore` and `openApiJson()`. Only the CLI
 * touches `process`; these take the environment and an output.
 */
export { ConfigError } from './config.js'
export { backup, restore } from './entry/backup.js'
export type { Environment, Output } from './entry/common.js'
export { migrate } from './entry/migrate.js'
export { openApiJson } from './entry/openapi-json.js'
export { createOperator, listOperators, updateOperator } from './entry/operators.js'
export { type Preparation, prepare } from './entry/prepare.js'
export { type RunningServer, type ServeOptions, serve, shutdownGracePeriodMs } from './entry/serve.js'
export { errorCatalogueMarkdown } from './http/problem-pages.js'
export { BackupError } from './storage/sqlite-backup.js'
