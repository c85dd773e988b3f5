import { SegmentedControl, useMantineColorScheme } from '@mantine/core'

/**
 * System, light or dark. "System" follows `prefers-color-scheme` and stores nothing; a choice is
 * kept in localStorage. `keepTransitions`: Mantine would otherwise add a `<style>` element to pause
 * transitions while switching, which the CSP refuses.
 */
export function ThemeToggle() {
  const { colorScheme, setColorScheme, clearColorScheme } = useMantineColorScheme({ keepTransitions: true })
  return (
    <SegmentedControl
      size="xs"
      aria-label="Colour theme"
      value={colorScheme}
      onChange={(value) => {
        if (value === 'auto') {
          clearColorScheme()
        } else {
          setColorScheme(value === 'dark' ? 'dark' : 'light')
        }
      }}
      data={[
        { value: 'auto', label: 'System' },
        { value: 'light', label: 'Light' },
        { value: 'dark', label: 'Dark' },
      ]}
    />
  )
}
