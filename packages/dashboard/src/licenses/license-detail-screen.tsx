import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { LicenseEvents } from '../events/license-events.js'
import { useSession } from '../session/session.js'
import { LicenseUsage } from './license-usage.js'
import { LicenseActions } from './record/license-actions.js'
import { LicenseSummary } from './record/license-summary.js'
import { Machines } from './record/machines.js'
import { TokensAndFiles } from './record/tokens-and-files.js'

type LicenseId = LicenseResource['id']

/**
 * A license as a record: its summary at the top with the actions menu (each action in a dialog,
 * its result as a toast or in the dialog), then its machines, usage, events, and the tokens and
 * files issued for it.
 */
export function LicenseDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as LicenseId // the route's :id; the API answers 404 for a bad one
  const license = useQuery({ queryKey: ['license', id], queryFn: () => client.getLicense(id) })
  return (
    <>
      <p>
        <Link to="/licenses">← Licenses</Link>
      </p>
      <ProblemMessage error={license.error} />
      {license.data && (
        <>
          <header className="record-header">
            <h1>
              License <code>{license.data.key}</code>
            </h1>
            <LicenseActions license={license.data} />
          </header>
          <LicenseSummary license={license.data} />
          <nav aria-label="On this page" className="on-this-page">
            <a href="#activations-heading">Machines</a>
            <a href="#usage-heading">Usage</a>
            <a href="#license-events">Events</a>
            <a href="#issued-heading">Tokens and files</a>
          </nav>
          <Machines license={license.data} />
          <LicenseUsage license={license.data} />
          <LicenseEvents license={license.data} />
          <TokensAndFiles license={license.data} />
        </>
      )}
    </>
  )
}
