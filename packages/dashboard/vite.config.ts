import react from '@vitejs/plugin-react'
import { defineConfig, type Plugin } from 'vite'
import { themeCss } from './src/theme/theme-css.ts'

const themeVariables = 'virtual:theme-variables.css'

/**
 * The Mantine theme's CSS variables as a stylesheet in the build (src/theme/theme-css.ts): the CSP
 * lets no `<style>` element in, so MantineProvider injects none (src/theme/provider.tsx).
 */
function themeVariablesPlugin(): Plugin {
  return {
    name: 'keyturn-theme-variables',
    resolveId: (id) => (id === themeVariables ? `\0${themeVariables}` : undefined),
    load: (id) => (id === `\0${themeVariables}` ? themeCss() : undefined),
  }
}

// The server serves dist/ at /dashboard (packages/server/src/http/dashboard.ts): hashed file names
// under assets/ are cached for a year, index.html never.
// biome-ignore lint/style/noDefaultExport: Vite reads the config's default export
export default defineConfig({
  base: '/dashboard/',
  plugins: [react(), themeVariablesPlugin()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    // No inline <script> or data: URL for the CSP to refuse: every asset is a file.
    assetsInlineLimit: 0,
  },
  server: {
    // `npx vite` during development: the API of a `keyturn serve` on the default port.
    proxy: { '/api': 'http://127.0.0.1:3000' },
  },
})
