/**
 * The operators' meaning, as in GitHub Actions: truthiness for `!`, `&&` and `||`; equality and
 * order that compare text without regard to case and turn operands of different kinds into numbers.
 */
import type { BinaryOperator } from './syntax.js';

/** false, null, 0, NaN and empty text are false; everything else (lists and objects too) is true. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '') return false;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  return true;
}

const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** A scalar as a number: null is 0, true 1, empty text 0, text that is no number NaN. */
export function toNumber(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed === '' ? 0 : Number(trimmed);
  }
  return Number.NaN;
}

const kindOf = (value: unknown) => (value === null || value === undefined ? 'null' : typeof value);

/**
 * -1, 0 or 1, or NaN when the two cannot be compared. Text against text ignores case; a list or
 * object equals only itself and has no order; other mixes of kinds compare as numbers.
 */
function compare(left: unknown, right: unknown): number {
  if (!isScalar(left) || !isScalar(right)) return left === right ? 0 : Number.NaN;
  if (typeof left === 'string' && typeof right === 'string') {
    const a = left.toUpperCase();
    const b = right.toUpperCase();
    return a === b ? 0 : a < b ? -1 : 1;
  }
  if (kindOf(left) === kindOf(right) && kindOf(left) !== 'number')
    return left === right ? 0 : Number(left) - Number(right);
  const a = toNumber(left);
  const b = toNumber(right);
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.NaN;
  return a === b ? 0 : a < b ? -1 : 1;
}

export const looselyEqual = (left: unknown, right: unknown) => compare(left, right) === 0;

/** The value of `left op right`; `&&` and `||` give one of their operands, as in Actions. */
export function applyOperator(op: BinaryOperator, left: unknown, right: () => unknown): unknown {
  switch (op) {
    case '&&':
      return isTruthy(left) ? right() : left;
    case '||':
      return isTruthy(left) ? left : right();
    default:
      break;
  }
  const order = compare(left, right());
  if (Number.isNaN(order)) return op === '!=';
  switch (op) {
    case '==':
      return order === 0;
    case '!=':
      return order !== 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
  }
}
