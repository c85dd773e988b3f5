import { Burger, Button, Menu } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { type ReactNode, useEffect } from 'react'
import { Link, NavLink, useLocation, useNavigate } from 'react-router'
import { GlobalSearch } from '../search/global-search.js'
import { isAdmin, may, type Session } from '../session/session.js'
import { ThemeToggle } from '../theme/theme-toggle.js'

/** The main navigation's links, in order; `show` hides a screen the operator's role may not open. */
const screens: { to: string; label: string; show?: (session: Session) => boolean }[] = [
  { to: '/', label: 'Overview' },
  { to: '/products', label: 'Products' },
  { to: '/licenses', label: 'Licenses' },
  { to: '/customers', label: 'Customers' },
  { to: '/policies', label: 'Policies' },
  { to: '/entitlements', label: 'Entitlements' },
  { to: '/events', label: 'Events' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/integrations', label: 'Payment providers', show: isAdmin },
  { to: '/mail', label: 'Mail' },
  { to: '/api-keys', label: 'API keys' },
  { to: '/operators', label: 'Operators', show: (session) => may(session, 'owner') },
]

/**
 * The frame of every signed-in screen: a header (the navigation's burger at phone width, the name,
 * the search box, the operator's menu), the main navigation (a side column from 62em, behind the
 * burger below), and the screen. Layout is plain CSS (styles.css, `.shell`): Mantine's AppShell
 * writes its responsive sizes into a `<style>` element, which the CSP refuses.
 */
export function Shell({ session, children }: { session: Session; children: ReactNode }) {
  const [navOpen, nav] = useDisclosure(false)
  const location = useLocation()
  // A link followed from the phone's navigation closes it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the screen changes
  useEffect(() => nav.close(), [location.pathname])
  return (
    <div className="shell" data-nav-open={navOpen || undefined}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="shell-header">
        <Burger
          className="shell-burger"
          size="sm"
          opened={navOpen}
          onClick={nav.toggle}
          aria-label={navOpen ? 'Close the navigation' : 'Open the navigation'}
          aria-expanded={navOpen}
          aria-controls="main-navigation"
        />
        <Link to="/" className="brand">
          Keyturn
        </Link>
        <div className="shell-search">
          <GlobalSearch />
        </div>
        <OperatorMenu session={session} />
      </header>
      <nav id="main-navigation" aria-label="Main" className="shell-nav">
        <ul>
          {screens
            .filter((screen) => screen.show === undefined || screen.show(session))
            .map((screen) => (
              <li key={screen.to}>
                <NavLink to={screen.to} end={screen.to === '/'}>
                  {screen.label}
                </NavLink>
              </li>
            ))}
        </ul>
        <div className="shell-theme">
          <ThemeToggle />
        </div>
      </nav>
      <main id="main" tabIndex={-1} className="shell-main">
        {children}
      </main>
    </div>
  )
}

/** Who is signed in, as a menu: their sessions, two-factor authentication, sign-out. */
function OperatorMenu({ session }: { session: Session }) {
  const navigate = useNavigate()
  const { operator } = session.access
  return (
    <Menu position="bottom-end" width={240}>
      <Menu.Target>
        <Button variant="subtle" className="operator-menu">
          {operator.name} ({operator.role})
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{operator.email}</Menu.Label>
        <Menu.Item component={Link} to="/sessions">
          Your sessions
        </Menu.Item>
        <Menu.Item component={Link} to="/two-factor">
          Two-factor authentication
        </Menu.Item>
        <Menu.Divider />
        <Menu.Item
          onClick={() => {
            session.signOut()
            void navigate('/')
          }}
        >
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  )
}
