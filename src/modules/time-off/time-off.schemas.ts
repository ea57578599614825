import { z } from 'zod';
import { longText, nullableString, timestampInput, timestampOutput, uuidString } from '../../shared/formats.js';
import { pageQueryShape, syncQueryShape } from '../../shared/list-query.js';

/** Time off lasts at most this long (DECISIONS §13). */
export const MAX_TIME_OFF_DAYS = 366;

const fields = {
  user_id: uuidString.describe('A user of the company.'),
  starts_at: timestampInput.describe('When the time off starts: a timestamp with Z or an offset.'),
  ends_at: timestampInput
    .describe(`When it ends: after starts_at and at most ${MAX_TIME_OFF_DAYS} days later.`)
    .meta({ example: '2026-12-24T00:00:00.000Z' }),
  reason: longText(1000).nullable().optional().describe('Why, for people.').meta({ example: 'Vacation' }),
};

export const CreateTimeOffBody = z.strictObject(fields).meta({ id: 'CreateTimeOffBody' });
export type CreateTimeOffBody = z.infer<typeof CreateTimeOffBody>;

export const UpdateTimeOffBody = z.strictObject(fields).partial().meta({ id: 'UpdateTimeOffBody' });
export type UpdateTimeOffBody = z.infer<typeof UpdateTimeOffBody>;

export const TIME_OFF_SORTS = ['-created_at', 'created_at', '-updated_at', 'updated_at', 'starts_at', '-starts_at'] as const;

export const ListTimeOffQuery = z.strictObject({
  ...pageQueryShape,
  updated_since: syncQueryShape.updated_since,
  sort: z
    .enum(TIME_OFF_SORTS)
    .default('-created_at')
    .describe('Order: -created_at (default), created_at, -updated_at, updated_at, starts_at or -starts_at; ties by uuid in the same direction.')
    .meta({ example: 'starts_at' }),
  user_id: uuidString.optional().describe("This user's time off."),
  from: timestampInput.optional().describe('With `to`: the entries whose [starts_at, ends_at) overlaps [from, to). Alone: those that end after it.'),
  to: timestampInput.optional().describe('With `from`: see from. Alone: the entries that start before it.').meta({ example: '2026-12-31T00:00:00.000Z' }),
});
export type ListTimeOffQuery = z.infer<typeof ListTimeOffQuery>;

export const TimeOffResponse = z
  .object({
    uuid: z.string(),
    user_id: z.string(),
    starts_at: timestampOutput,
    ends_at: timestampOutput,
    reason: nullableString,
    created_at: timestampOutput,
    updated_at: timestampOutput,
    deleted_at: timestampOutput.nullable(),
  })
  .meta({ id: 'TimeOff' });
export type TimeOffResponse = z.infer<typeof TimeOffResponse>;
