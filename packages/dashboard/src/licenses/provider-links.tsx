import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { Time } from '../components/time.js'
import { providerNames } from '../integrations/integration-form.js'
import { isAdmin, useSession } from '../session/session.js'

/**
 * The payment-provider objects (order, subscription, transaction…) a license was sold or renewed
 * through, for admin keys; nothing at all for a license no provider sold.
 */
export function ProviderLinks({ license }: { license: LicenseResource }) {
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
    <section aria-labelledby="sold-through-heading">
      <h2 id="sold-through-heading">Sold through</h2>
      <ProblemMessage error={links.error} />
      {links.data && (
        <ul>
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
    </section>
  )
}
