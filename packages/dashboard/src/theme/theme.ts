import { createTheme, Drawer, Modal, Notification } from '@mantine/core'

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
  // No sliding or fading for people whose system asks for reduced motion.
  respectReducedMotion: true,
  components: {
    // Scroll locking (react-remove-scroll) adds a <style> element, which the CSP refuses: the page
    // is held still by styles.css (`:has()` an open modal) instead. Close buttons get a name.
    Modal: Modal.extend({ defaultProps: { lockScroll: false, closeButtonProps: { 'aria-label': 'Close' } } }),
    Drawer: Drawer.extend({
      defaultProps: { lockScroll: false, closeButtonProps: { 'aria-label': 'Close' } },
    }),
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
  },
})
