// The storage entry points other packages' tests need (opening and migrating a database), exported
// through @keyturn/server/testing/storage so no test reaches into the server's private files.
export { connect } from '../storage/connect.js'
export { migrateToLatest } from '../storage/migrate.js'
