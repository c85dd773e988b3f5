import { KeyturnApiError } from '@keyturn/client'
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useCallback, useEffect, useMemo, useState } from 'react'
import { NavLink, Route, Routes, useLocation, useNavigate } from 'react-router'
import { ApiKeysScreen } from './api-keys/api-keys-screen.js'
import { ProblemMessage } from './components/problem-message.js'
import { ToastProvider } from './components/toast.js'
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
import { OperatorsScreen } from './operators/operators-screen.js'
import { OwnSessionsScreen } from './operators/own-sessions-screen.js'
import { OverviewScreen } from './overview/overview-screen.js'
import { PoliciesScreen } from './policies/policies-screen.js'
import { PolicyDetailScreen } from './policies/policy-detail-screen.js'
import { ProductDetailScreen } from './products/product-detail-screen.js'
import { ProductsScreen } from './products/products-screen.js'
import { GlobalSearch } from './search/global-search.js'
import {
  clientFor,
  currentOperator,
  isAdmin,
  may,
  operatorRequest,
  type Session,
  SessionContext,
  type SignedIn,
} from './session/session.js'
import { InvitationScreen, PasswordResetScreen, SetupScreen, SignInScreen } from './session/sign-in-screen.js'
import { TwoFactorScreen } from './session/two-factor.js'
import { WebhookDetailScreen } from './webhooks/webhook-detail-screen.js'
import { WebhooksScreen } from './webhooks/webhooks-screen.js'

/**
 * Signed in or not: asks the server whose session this browser holds (`GET /operator/me`). The
 * one-time setup and invitation links open their own pages. The query cache is created per
 * sign-in and dropped at sign-out.
 */
export function App() {
  const location = useLocation()
  const navigate = useNavigate()
  const [signedIn, setSignedIn] = useState<SignedIn | undefined | 'unknown'>('unknown')
  const [signOutReason, setSignOutReason] = useState<string>()
  const [failure, setFailure] = useState<unknown>()
  useEffect(() => {
    currentOperator().then(setSignedIn, setFailure)
  }, [])
  const signOut = useCallback((reason?: string) => {
    setSignedIn(undefined)
    setSignOutReason(reason)
  }, [])
  const enter = useCallback(
    (session: SignedIn) => {
      setSignedIn(session)
      void navigate('/', { replace: true })
    },
    [navigate],
  )
  if (location.pathname === '/setup') {
    return <SetupScreen onSignedIn={enter} />
  }
  if (location.pathname === '/invitation') {
    return <InvitationScreen onSignedIn={enter} />
  }
  if (location.pathname === '/password-reset') {
    return (
      <PasswordResetScreen
        onDone={() => {
          signOut('Your password was changed: sign in with it.')
          void navigate('/', { replace: true })
        }}
      />
    )
  }
  if (failure !== undefined) {
    return (
      <main className="centered">
        <h1>Keyturn dashboard</h1>
        <ProblemMessage error={failure} />
      </main>
    )
  }
  if (signedIn === 'unknown') {
    return (
      <main className="centered">
        <p role="status">Signing in…</p>
      </main>
    )
  }
  if (signedIn === undefined) {
    return <SignInScreen onSignedIn={enter} reason={signOutReason} />
  }
  return <SignedInApp key={signedIn.operator.id} signedIn={signedIn} signOut={signOut} />
}

function SignedInApp({ signedIn, signOut }: { signedIn: SignedIn; signOut: (reason?: string) => void }) {
  const client = useMemo(() => clientFor(signedIn), [signedIn])
  const queryClient = useMemo(() => {
    // A session ended meanwhile (expired, revoked, the operator disabled): back to sign-in, saying why.
    const onError = (error: unknown) => {
      if (error instanceof KeyturnApiError && error.status === 401) {
        signOut('Your session has ended. Sign in again.')
      }
    }
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: { queries: { retry: false, staleTime: 5_000, refetchOnWindowFocus: false } },
    })
  }, [signOut])
  const session: Session = {
    client,
    access: { operator: signedIn.operator },
    csrfToken: signedIn.csrfToken,
    signOut: () => {
      queryClient.clear()
      operatorRequest('/sign-out', { csrfToken: signedIn.csrfToken }).then(
        () => signOut(),
        () => signOut(),
      )
    },
  }
  return (
    <QueryClientProvider client={queryClient}>
      <SessionContext.Provider value={session}>
        <ToastProvider>
          <Shell session={session} />
        </ToastProvider>
      </SessionContext.Provider>
    </QueryClientProvider>
  )
}

function Shell({ session }: { session: Session }) {
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
              <li>
                <NavLink to="/integrations">Payment providers</NavLink>
              </li>
            )}
            <li>
              <NavLink to="/mail">Mail</NavLink>
            </li>
            <li>
              <NavLink to="/api-keys">API keys</NavLink>
            </li>
            {may(session, 'owner') && (
              <li>
                <NavLink to="/operators">Operators</NavLink>
              </li>
            )}
          </ul>
        </nav>
        <GlobalSearch />
        <NavLink to="/sessions" className="muted">
          {session.access.operator.name} ({session.access.operator.role})
        </NavLink>
        <NavLink to="/two-factor">Two-factor authentication</NavLink>
        <button
          type="button"
          onClick={() => {
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
          <Route path="mail" element={<MailScreen />} />
          <Route path="api-keys" element={<ApiKeysScreen />} />
          <Route path="two-factor" element={<TwoFactorScreen />} />
          {may(session, 'owner') && <Route path="operators" element={<OperatorsScreen />} />}
          <Route path="sessions" element={<OwnSessionsScreen />} />
          {isAdmin(session) && <Route path="integrations" element={<IntegrationsScreen />} />}
          {isAdmin(session) && <Route path="integrations/:id" element={<IntegrationDetailScreen />} />}
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
      <p>There is no such page in the dashboard, or your role may not see it.</p>
    </>
  )
}
