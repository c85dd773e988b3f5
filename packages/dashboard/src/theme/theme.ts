import { createTheme } from '@mantine/core'

/**
 * The dashboard's Mantine theme. Its CSS variables are written into a static stylesheet at build
 * time (vite.config.ts, `theme-variables.css`), never injected at run time: the page's CSP refuses
 * every `<style>` element. Primary shades are dark enough for white text at WCAG AA contrast.
 */
export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  fontFamilyMonospace: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace',
  defaultRadius: 'sm',
  headings: { fontWeight: '650' },
  cursorType: 'pointer',
})
