import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter } from 'react-router'
import { App } from './app.js'
import './styles.css'

const root = document.getElementById('root')
if (root === null) {
  throw new Error('index.html has no #root')
}
createRoot(root).render(
  <StrictMode>
    <BrowserRouter basename="/dashboard">
      <App />
    </BrowserRouter>
  </StrictMode>,
)
