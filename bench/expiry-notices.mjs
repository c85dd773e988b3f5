/**
 * The expiry-notice job at the bench's data size (1M licenses): how long one run takes and how many
 * license rows it reads, through the server's own service and store (packages/server/dist) on the
 * bench database, with a clock it moves.
 *
 * - `first`: the first run (it places one cursor per notice day at "now" and announces what is
 *   already inside a notice window: the seeded licenses expiring within 14 days).
 * - `day`: a run one day later: what reached a notice day during that day.
 * - `idle`: a run right after, with nothing new: it reads nothing.
 *
 * The events it wrote are removed afterwards, so later scenarios see the table as seeded; its cursors
 * are left where a deployment that ran the job all along would have them (one more run at the real
 * time). Without that, the `keyturn serve` started next would make the first run itself, announcing
 * the thousands of seeded licenses already inside a notice window while the first scenario is
 * measured, and charge that one-time work to its requests.
 */
import { sql } from 'kysely'
import { ExpiryNoticeService } from '../packages/server/dist/expiry-notices/expiry-notice-service.js'
import { KyselyExpiryNoticeStore } from '../packages/server/dist/expiry-notices/kysely-expiry-notice-store.js'
import { connect } from '../packages/server/dist/storage/connect.js'

const day = 86_400_000

/**
 * Runs the job at the real time until it has nothing left, then removes the events it wrote: the
 * database is then as a deployment that ran the job all along would have it, and a server started
 * on it makes no catch-up run while it is measured (bench/builds.mjs calls this after seeding).
 */
export async function settleExpiryNotices(location) {
  const connection = connect(location)
  try {
    await settle(connection.db)
  } finally {
    await connection.close()
  }
}

async function settle(db) {
  const service = new ExpiryNoticeService({
    store: new KyselyExpiryNoticeStore(db),
    clock: { now: () => new Date() },
    noticeDays: [14, 3],
  })
  while ((await service.tick()).isBatchFull) {}
  await sql`delete from events where type in ('license.expiring_soon', 'license.expired')`.execute(db)
}

export async function measureExpiryNotices(location) {
  const connection = connect(location)
  let now = Date.now()
  const clock = { now: () => new Date(now) }
  const service = new ExpiryNoticeService({
    store: new KyselyExpiryNoticeStore(connection.db),
    clock,
    noticeDays: [14, 3],
  })
  const run = async () => {
    const started = performance.now()
    let read = 0
    let noticed = 0
    let steps = 0
    for (;;) {
      const step = await service.tick()
      read += step.read
      noticed += step.noticed
      steps++
      if (!step.isBatchFull) {
        break
      }
    }
    return { ms: Math.round(performance.now() - started), steps, rowsRead: read, events: noticed }
  }
  try {
    // The server of the smaller size ran the job on its own: start from no cursor, as a first run does.
    await sql`delete from expiry_notice_cursors`.execute(connection.db)
    const first = await run()
    now += day
    const oneDay = await run()
    const idle = await run()
    return { first, day: oneDay, idle }
  } finally {
    await sql`delete from expiry_notice_cursors`.execute(connection.db)
    await settle(connection.db)
    await connection.close()
  }
}
