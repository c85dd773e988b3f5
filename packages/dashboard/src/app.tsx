import { KeyturnApiError } from '@keyturn/client'
import { MutationCache, QueryCache, QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query'
import { useCallback, useMemo, useState } from 'react'
import { NavLink, Route, Routes, useNavigate } from 'react-router'
import { ApiKeysScreen } from './api-keys/api-keys-screen.js'
import { ProblemMessage } from './components/problem-message.js'
import { CustomerDetailScreen } from './customers/customer-detail-screen.js'
import { CustomersScreen } from './customers/customers-screen.js'
import { EntitlementDetailScreen } from './entitlements/entitlement-detail-screen.js'
import { EntitlementsScreen } from './entitlements/entitlements-screen.js'
import { EventsScreen } from './events/events-screen.js'
import { IntegrationDetailScreen } from './integrations/integration-detail-screen.js'
import { IntegrationsScreen } from './integrations/integrations-screen.js'
import { LicenseDetailScreen } from './licenses/license-detail-screen.js'
import { LicensesScreen } from './licenses/licenses-screen.js'
import { NewLicenseScreen } from './licenses/new-license-screen.js'
import { OfflineScreen } from './licenses/offline-screen.js'
import { MailScreen } from './mail/mail-screen.js'
import { OverviewScreen } from './overview/overview-screen.js'
import { PoliciesScreen } from './policies/policies-screen.js'
import { PolicyDetailScreen } from './policies/policy-detail-screen.js'
import { ProductDetailScreen } from './products/product-detail-screen.js'
import { ProductsScreen } from './products/products-screen.js'
import { GlobalSearch } from './search/global-search.js'
import {
  clientFor,
  discoverAccess,
  forgetApiKey,
  isAdmin,
  type Session,
  SessionContext,
  storedApiKey,
} from './session/session.js'
import { SignInScreen } from './session/sign-in-screen.js'
import { WebhookDetailScreen } from './webhooks/webhook-detail-screen.js'
import { WebhooksScreen } from './webhooks/webhooks-screen.js'

/** Signed in or not; the query cache is created per sign-in and dropped at sign-out. */
export function App() {
  const [apiKey, setApiKey] = useState(storedApiKey)
  const [signOutReason, setSignOutReason] = useState<string>()
  const signOut = useCallback((reason?: string) => {
    forgetApiKey()
    setApiKey(undefined)
    setSignOutReason(reason)
  }, [])
  if (apiKey === undefined) {
    return <SignInScreen onSignedIn={setApiKey} reason={signOutReason} />
  }
  return <SignedIn key={apiKey} apiKey={apiKey} signOut={signOut} />
}

function SignedIn({ apiKey, signOut }: { apiKey: string; signOut: (reason?: string) => void }) {
  const client = useMemo(() => clientFor(apiKey), [apiKey])
  const queryClient = useMemo(() => {
    // A key deleted or rejected meanwhile: back to the sign-in screen, saying why.
    const onError = (error: unknown) => {
      if (error instanceof KeyturnApiError && error.status === 401) {
        signOut('The server no longer accepts this API key. Sign in again.')
      }
    }
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: { queries: { retry: false, staleTime: 5_000, refetchOnWindowFocus: false } },
    })
  }, [signOut])
  const access = useQuery({ queryKey: ['access'], queryFn: () => discoverAccess(client) }, queryClient)
  if (access.isPending) {
    return (
      <main className="centered">
        <p role="status">Signing in…</p>
      </main>
    )
  }
  if (access.isError) {
    return (
      <main className="centered">
        <h1>Keyturn dashboard</h1>
        <ProblemMessage error={access.error} />
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </main>
    )
  }
  const session: Session = { client, access: access.data, signOut: () => signOut() }
  return (
    <QueryClientProvider client={queryClient}>
      <SessionContext.Provider value={session}>
        <Shell session={session} onSignOut={() => queryClient.clear()} />
      </SessionContext.Provider>
    </QueryClientProvider>
  )
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const navigate = useNavigate()
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Keyturn</span>
        <nav aria-label="Main">
          <ul>
            <li>
              <NavLink to="/" end>
                Overview
              </NavLink>
            </li>
            <li>
              <NavLink to="/products">Products</NavLink>
            </li>
            <li>
              <NavLink to="/licenses">Licenses</NavLink>
            </li>
            <li>
              <NavLink to="/customers">Customers</NavLink>
            </li>
            <li>
              <NavLink to="/policies">Policies</NavLink>
            </li>
            <li>
              <NavLink to="/entitlements">Entitlements</NavLink>
            </li>
            <li>
              <NavLink to="/events">Events</NavLink>
            </li>
            <li>
              <NavLink to="/webhooks">Webhooks</NavLink>
            </li>
            {isAdmin(session) && (
              <>
                <li>
                  <NavLink to="/integrations">Payment providers</NavLink>
                </li>
                <li>
                  <NavLink to="/mail">Mail</NavLink>
                </li>
                <li>
                  <NavLink to="/api-keys">API keys</NavLink>
                </li>
              </>
            )}
          </ul>
        </nav>
        <GlobalSearch />
        <span className="muted">{isAdmin(session) ? 'Admin key' : 'Product key'}</span>
        <button
          type="button"
          onClick={() => {
            onSignOut()
            session.signOut()
            void navigate('/')
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Routes>
          <Route index element={<OverviewScreen />} />
          <Route path="products" element={<ProductsScreen />} />
          <Route path="products/:id" element={<ProductDetailScreen />} />
          <Route path="licenses" element={<LicensesScreen />} />
          <Route path="licenses/new" element={<NewLicenseScreen />} />
          <Route path="licenses/offline" element={<OfflineScreen />} />
          <Route path="licenses/:id" element={<LicenseDetailScreen />} />
          <Route path="customers" element={<CustomersScreen />} />
          <Route path="customers/:id" element={<CustomerDetailScreen />} />
          <Route path="policies" element={<PoliciesScreen />} />
          <Route path="policies/:id" element={<PolicyDetailScreen />} />
          <Route path="entitlements" element={<EntitlementsScreen />} />
          <Route path="entitlements/:id" element={<EntitlementDetailScreen />} />
          <Route path="events" element={<EventsScreen />} />
          <Route path="webhooks" element={<WebhooksScreen />} />
          <Route path="webhooks/:id" element={<WebhookDetailScreen />} />
          {isAdmin(session) && <Route path="mail" element={<MailScreen />} />}
          {isAdmin(session) && <Route path="integrations" element={<IntegrationsScreen />} />}
          {isAdmin(session) && <Route path="integrations/:id" element={<IntegrationDetailScreen />} />}
          {isAdmin(session) && <Route path="api-keys" element={<ApiKeysScreen />} />}
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
    </>
  )
}

function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>There is no such page in the dashboard, or this API key may not see it.</p>
    </>
  )
}
