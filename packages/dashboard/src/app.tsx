import { KeyturnApiError } from '@keyturn/client'
import { Loader } from '@mantine/core'
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react'
import { Route, Routes, useLocation, useNavigate } from 'react-router'
import { ProblemMessage } from './components/problem-message.js'
import { OverviewScreen } from './overview/overview-screen.js'
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
// Part of the sign-in's code already (the second step), so not a screen of its own to load.
import { TwoFactorScreen } from './session/two-factor.js'
import { Shell } from './shell/shell.js'

// Every screen but the overview loads on first visit: the initial script stays small.
const ApiKeysScreen = lazy(() =>
  import('./api-keys/api-keys-screen.js').then((module) => ({ default: module.ApiKeysScreen })),
)
const CustomerDetailScreen = lazy(() =>
  import('./customers/customer-detail-screen.js').then((module) => ({
    default: module.CustomerDetailScreen,
  })),
)
const CustomersScreen = lazy(() =>
  import('./customers/customers-screen.js').then((module) => ({ default: module.CustomersScreen })),
)
const EntitlementDetailScreen = lazy(() =>
  import('./entitlements/entitlement-detail-screen.js').then((module) => ({
    default: module.EntitlementDetailScreen,
  })),
)
const EntitlementsScreen = lazy(() =>
  import('./entitlements/entitlements-screen.js').then((module) => ({ default: module.EntitlementsScreen })),
)
const EventsScreen = lazy(() =>
  import('./events/events-screen.js').then((module) => ({ default: module.EventsScreen })),
)
const IntegrationDetailScreen = lazy(() =>
  import('./integrations/integration-detail-screen.js').then((module) => ({
    default: module.IntegrationDetailScreen,
  })),
)
const IntegrationsScreen = lazy(() =>
  import('./integrations/integrations-screen.js').then((module) => ({ default: module.IntegrationsScreen })),
)
const LicenseDetailScreen = lazy(() =>
  import('./licenses/license-detail-screen.js').then((module) => ({ default: module.LicenseDetailScreen })),
)
const LicensesScreen = lazy(() =>
  import('./licenses/licenses-screen.js').then((module) => ({ default: module.LicensesScreen })),
)
const NewLicenseScreen = lazy(() =>
  import('./licenses/new-license-screen.js').then((module) => ({ default: module.NewLicenseScreen })),
)
const OfflineScreen = lazy(() =>
  import('./licenses/offline-screen.js').then((module) => ({ default: module.OfflineScreen })),
)
const MailScreen = lazy(() =>
  import('./mail/mail-screen.js').then((module) => ({ default: module.MailScreen })),
)
const OperatorsScreen = lazy(() =>
  import('./operators/operators-screen.js').then((module) => ({ default: module.OperatorsScreen })),
)
const OwnSessionsScreen = lazy(() =>
  import('./operators/own-sessions-screen.js').then((module) => ({ default: module.OwnSessionsScreen })),
)
const PoliciesScreen = lazy(() =>
  import('./policies/policies-screen.js').then((module) => ({ default: module.PoliciesScreen })),
)
const PolicyDetailScreen = lazy(() =>
  import('./policies/policy-detail-screen.js').then((module) => ({ default: module.PolicyDetailScreen })),
)
const ProductDetailScreen = lazy(() =>
  import('./products/product-detail-screen.js').then((module) => ({ default: module.ProductDetailScreen })),
)
const ProductsScreen = lazy(() =>
  import('./products/products-screen.js').then((module) => ({ default: module.ProductsScreen })),
)
const WebhookDetailScreen = lazy(() =>
  import('./webhooks/webhook-detail-screen.js').then((module) => ({ default: module.WebhookDetailScreen })),
)
const WebhooksScreen = lazy(() =>
  import('./webhooks/webhooks-screen.js').then((module) => ({ default: module.WebhooksScreen })),
)

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
        <Shell session={session}>
          <Screens session={session} />
        </Shell>
      </SessionContext.Provider>
    </QueryClientProvider>
  )
}

/** The signed-in screens, each behind its own script (shown with a loader while it comes). */
function Screens({ session }: { session: Session }) {
  return (
    <Suspense fallback={<Loader aria-label="Loading the screen" m="xl" />}>
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
    </Suspense>
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
