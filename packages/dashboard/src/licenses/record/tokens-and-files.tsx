import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { EmptyState } from '../../components/empty-state.js'
import { ProblemMessage } from '../../components/problem-message.js'
import { EventTable } from '../../events/event-table.js'
import { useSession } from '../../session/session.js'

const issuedTypes = ['license.token_issued', 'license.file_issued'] as const

/**
 * The tokens and license files issued for the license, read from its events (the token or file
 * itself is not kept: it is shown once, when issued).
 */
export function TokensAndFiles({ license }: { readonly license: LicenseResource }) {
  const { client } = useSession()
  const issued = useQuery({
    queryKey: ['events', 'license', license.id, 'issued'],
    queryFn: () =>
      client.listEvents({ limit: 10, filter: `licenseId:eq:${license.id},type:in:${issuedTypes.join('|')}` }),
  })
  return (
    <section aria-labelledby="issued-heading">
      <h2 id="issued-heading">Tokens and license files</h2>
      <ProblemMessage error={issued.error} />
      {issued.data &&
        (issued.data.totalCount === 0 ? (
          <EmptyState title="None issued yet">
            Tokens and license files issued for this license (from its Actions menu, or by the application)
            are listed here; each is shown only once, when issued.
          </EmptyState>
        ) : (
          <>
            <EventTable events={issued.data.data} caption="Tokens and license files issued" />
            {issued.data.totalCount > issued.data.data.length && (
              <Link to={`/events?licenseId=${encodeURIComponent(license.id)}`}>
                All events of this license
              </Link>
            )}
          </>
        ))}
    </section>
  )
}
