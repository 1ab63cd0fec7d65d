// The `backup-schedule` option: a cron expression, read by cron-parser (harrisiirak/cron-parser), always in UTC.
// The charm validates it for the status; the workload's service asks it for the slots around a time.
import { CronExpressionParser } from 'cron-parser';

export type Schedule = { ok: true; expression: string } | { ok: false; problem: string };

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/**
 * An empty text is no schedule (undefined). Five fields (minute hour day-of-month month day-of-week) or a macro such
 * as @daily; cron-parser alone also takes a seconds field and fewer fields, which crontab does not.
 */
export function parseSchedule(text: string): Schedule | undefined {
  const expression = text.trim().replace(/\s+/g, ' ');
  if (expression === '') return undefined;
  const fields = expression.split(' ').length;
  if (!MACROS.has(expression.toLowerCase()) && fields !== 5) {
    return { ok: false, problem: `must be a cron expression of five fields (minute hour day month weekday, e.g. "0 2 * * *"), not ${fields} field${fields === 1 ? '' : 's'}` };
  }
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC', strict: false });
  } catch (error) {
    return { ok: false, problem: `must be a cron expression like "0 2 * * *": ${(error as Error).message.replace(/\.$/, '')}` };
  }
  return { ok: true, expression };
}

/** The first slot strictly after `after`. */
export function nextSlot(expression: string, after: Date): Date {
  return CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: after }).next().toDate();
}

/** The last slot at or before `at` (a slot at exactly `at` counts), or undefined when there is none. */
export function previousSlot(expression: string, at: Date): Date | undefined {
  const interval = CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: new Date(at.getTime() + 1) });
  return interval.hasPrev() ? interval.prev().toDate() : undefined;
}
