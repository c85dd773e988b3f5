import {
  convertCssVariables,
  DEFAULT_THEME,
  defaultCssVariablesResolver,
  mergeMantineTheme,
} from '@mantine/core'
import { theme } from './theme.js'

/**
 * The theme's CSS variables as a stylesheet, made with Mantine's own resolver: what
 * `MantineProvider` would put in a `<style>` element at run time, served as a file instead. The
 * `--mantine-color-scheme` lines follow the `data-mantine-color-scheme` attribute Mantine sets on
 * `<html>`.
 */
export function themeCss(): string {
  const merged = mergeMantineTheme(DEFAULT_THEME, theme)
  const resolved = defaultCssVariablesResolver(merged)
  return `${convertCssVariables({
    variables: resolved.variables,
    // Mantine's dimmed grey is below WCAG AA contrast on the body colour: one shade darker (lighter).
    // So is its error red (a field's error and the text of a field in error): red 9 (red 3 on dark).
    light: {
      ...resolved.light,
      '--mantine-color-scheme': 'light',
      '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
      '--mantine-color-error': 'var(--mantine-color-red-9)',
    },
    dark: {
      ...resolved.dark,
      '--mantine-color-scheme': 'dark',
      '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
      '--mantine-color-error': 'var(--mantine-color-red-3)',
    },
  })}\n`
}
