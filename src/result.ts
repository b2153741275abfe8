/** The outcome of an operation that can fail in ways the caller must handle: failures are values, not throws. */
export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const err = <E>(error: E): { ok: false; error: E } => ({ ok: false, error });

/** For exhaustive switches: reaching it is a bug. */
export function unreachable(value: never): never {
  throw new Error(`Internal error: unreachable case ${JSON.stringify(value)}`);
}
