import { MantineProvider } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import type { ReactNode } from 'react'
import { theme } from './theme.js'

/**
 * Mantine under the dashboard's CSP (`style-src 'self'`, no nonce): no `<style>` element from the
 * provider (its CSS variables and global classes come from static stylesheets instead), the colour
 * scheme follows the system setting (`auto`) unless the operator picked one with the theme toggle
 * (kept in localStorage only then). Components' `style` props are set through the CSSOM, which the
 * CSP allows; Mantine features that render `<style>` (responsive style props, `Grid`, `SimpleGrid`,
 * `Flex`, `AppShell`) are not used.
 */
export function ThemeProvider({ children }: { children: ReactNode }) {
  return (
    <MantineProvider
      theme={theme}
      defaultColorScheme="auto"
      withCssVariables={false}
      withGlobalClasses={false}
    >
      <Notifications position="bottom-right" limit={4} />
      {children}
    </MantineProvider>
  )
}
