/**
 * @module The check-in fields validation answers, license tokens and license files carry when the
 * license's policy requires applications to validate online every so often.
 */
import { Type } from 'typebox'

/** `checkInBy` on validation answers, tokens and license files: absent when no check-in is required. */
export const CheckInBySchema = Type.String({
  format: 'date-time',
  description:
    "When the application must next validate online: the moment this answer, token or file was made plus its policy's `checkInInterval`. Absent when the license has no policy or its policy requires no check-in.",
  examples: ['2026-12-07T09:30:00.000Z'],
})

/** `gracePeriod` beside `checkInBy`: absent when the policy sets none. */
export const CheckInGracePeriodSchema = Type.Integer({
  minimum: 0,
  description:
    "Seconds after `checkInBy` the application may keep working offline (its policy's `gracePeriod`; wins over the application's own setting). Absent when the policy sets none or no check-in is required.",
  examples: [259_200],
})
