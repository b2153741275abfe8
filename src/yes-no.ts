import { err, ok, type Result } from './result.js';

/** A yes/no variable: true, 1 or yes; false, 0, no or empty; anything else is not read as either. */
export function yesNo(name: string, value: string | undefined): Result<boolean, string> {
  if (value === undefined || /^(0|false|no|)$/i.test(value)) return ok(false);
  if (/^(1|true|yes)$/i.test(value)) return ok(true);
  return err(`${name} must be true or false (1/0, yes/no), got ${JSON.stringify(value.slice(0, 40))}`);
}
