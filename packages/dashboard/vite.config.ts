import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// The server serves dist/ at /dashboard (packages/server/src/http/dashboard.ts): hashed file names
// under assets/ are cached for a year, index.html never.
// biome-ignore lint/style/noDefaultExport: Vite reads the config's default export
export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
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
