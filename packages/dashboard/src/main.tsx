import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter } from 'react-router'
import { App } from './app.js'
import { ThemeProvider } from './theme/provider.js'
// Order matters: the layer order first, then Mantine's styles (in its `mantine` layer), the theme's
// variables, and the dashboard's own stylesheet.
import './theme/layers.css'
import '@mantine/core/styles.layer.css'
import '@mantine/notifications/styles.layer.css'
import 'virtual:theme-variables.css'
import './styles.css'

const root = document.getElementById('root')
if (root === null) {
  throw new Error('index.html has no #root')
}
createRoot(root).render(
  <StrictMode>
    <ThemeProvider>
      <BrowserRouter basename="/dashboard">
        <App />
      </BrowserRouter>
    </ThemeProvider>
  </StrictMode>,
)
