import { z } from 'zod';
import { plainDigits, timeOfDay, timestampInput, timestampOutput, timezoneName, uuidString } from '../../shared/formats.js';
import { detail } from '../../shared/validation.js';

export const MAX_AVAILABILITY_USERS = 100;
export const MAX_AVAILABILITY_DAYS = 31;

/** `user_ids=a,b`: distinct UUIDs (a repeated one is 400), at most 100. */
const userIdList = z
  .string()
  .transform((value, context) => {
    const ids = value.split(',').map((part) => part.trim());
    const parsed: string[] = [];
    for (const id of ids) {
      const result = uuidString.safeParse(id);
      if (!result.success) {
        context.addIssue({ code: 'custom', message: `has '${id}', which is not a UUID`, params: detail('invalid_format') });
        return z.NEVER;
      }
      parsed.push(result.data);
    }
    const distinct = [...new Set(parsed)];
    if (distinct.length < parsed.length) {
      context.addIssue({ code: 'custom', message: 'names a user more than once', params: detail('invalid') });
      return z.NEVER;
    }
    if (distinct.length > MAX_AVAILABILITY_USERS) {
      context.addIssue({ code: 'custom', message: `must name at most ${MAX_AVAILABILITY_USERS} users`, params: detail('out_of_range') });
      return z.NEVER;
    }
    return distinct;
  })
  .meta({ type: 'array', items: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 }, minItems: 1, maxItems: MAX_AVAILABILITY_USERS });

export const AvailabilityQuery = z.strictObject({
  from: timestampInput.describe('Start of the range (a timestamp with Z or an offset), from 0001-01-02 to 9999-12-30 UTC like visit times.').meta({ example: '2026-12-07T00:00:00.000Z' }),
  to: timestampInput.describe(`End of the range: after from, at most ${MAX_AVAILABILITY_DAYS} days later.`).meta({ example: '2026-12-14T00:00:00.000Z' }),
  duration_minutes: plainDigits(
    z
      .number({ error: 'must be an integer between 5 and 1440' })
      .int('must be an integer between 5 and 1440')
      .min(5, 'must be an integer between 5 and 1440')
      .max(1440, 'must be an integer between 5 and 1440'),
  )
    .describe('The shortest slot worth answering, in minutes (5..1440).')
    .meta({ example: 90 }),
  user_ids: userIdList
    .optional()
    .describe(`Users, comma-separated (at most ${MAX_AVAILABILITY_USERS}); the answer keeps this order. Default: every user of the company (the first ${MAX_AVAILABILITY_USERS} by creation).`),
  time_zone: timezoneName.optional().describe("The zone of the working hours. Default: the primary location's time zone, else America/New_York."),
  day_start: timeOfDay.default('08:00').describe('Start of working hours on each local date, HH:MM (default 08:00).'),
  day_end: timeOfDay.default('17:00').describe('End of working hours on each local date, HH:MM, after day_start (default 17:00).').meta({ example: '17:00' }),
});
export type AvailabilityQuery = z.infer<typeof AvailabilityQuery>;

export const AvailabilitySlot = z
  .object({ starts_at: timestampOutput, ends_at: timestampOutput })
  .meta({ id: 'AvailabilitySlot', description: 'A free interval [starts_at, ends_at).' });

export const UserAvailability = z
  .object({
    user_id: z.string(),
    slots: z.array(AvailabilitySlot).describe('The maximal free intervals, earliest first.'),
  })
  .meta({ id: 'UserAvailability' });

export const AvailabilityResponse = z
  .object({ availability: z.array(UserAvailability).describe('One entry per user, in the order of user_ids.') })
  .meta({ id: 'Availability' });
export type AvailabilityResponse = z.infer<typeof AvailabilityResponse>;
