import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { Time } from '../components/time.js'
import { providerNames } from '../integrations/integration-form.js'
import { isAdmin, useSession } from '../session/session.js'

/**
 * "Sold through" in a license's summary: the payment-provider objects (order, subscription,
 * transaction…) it was sold or renewed through, for admins; nothing at all for a license no
 * provider sold.
 */
export function SoldThrough({ license }: { license: LicenseResource }) {
  const session = useSession()
  const links = useQuery({
    queryKey: ['provider-links', license.id],
    queryFn: () => session.client.listLicenseProviderLinks(license.id),
    enabled: isAdmin(session),
  })
  if (!isAdmin(session) || (links.data !== undefined && links.data.data.length === 0)) {
    return null
  }
  return (
    <div className="wide">
      <dt>Sold through</dt>
      <dd>
        <ProblemMessage error={links.error} />
        {links.data && (
          <ul className="plain">
            {links.data.data.map((link) => (
              <li key={`${link.integrationId} ${link.objectKind} ${link.objectId}`}>
                <Link to={`/integrations/${link.integrationId}`}>
                  {providerNames[link.provider] ?? link.provider}
                </Link>{' '}
                {link.objectKind.replaceAll('_', ' ')} <code>{link.objectId}</code>, since{' '}
                <Time value={link.createdAt} />
              </li>
            ))}
          </ul>
        )}
      </dd>
    </div>
  )
}
