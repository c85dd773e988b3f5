// The stylesheet vite.config.ts makes from the Mantine theme.
declare module 'virtual:theme-variables.css'
