/** The shapes that functions and operators give, and the misuses the analyzer can see before the run. */
import { STATUS_FUNCTIONS, type BinaryOperator, type FunctionName } from '../expressions/expressions.js';
import { ANY, BOOLEAN, describeShape, INTEGER, STRING, type Shape, withoutValues } from './shapes.js';

const isComposite = (shape: Shape) => shape.kind === 'list' || shape.kind === 'object';

/** The shape of a call's value; `statusAllowed` in a step's `if`, the one place success() and the like mean something. */
export function callShape(
  name: FunctionName,
  args: Shape[],
  statusAllowed: boolean,
  report: (message: string) => void,
): Shape {
  const [first, second] = args;
  if (STATUS_FUNCTIONS.has(name)) {
    if (!statusAllowed) report(`${name}() can be used only in a step's if`);
    return BOOLEAN;
  }
  switch (name) {
    case 'join':
      if (first && first.kind !== 'list' && first.kind !== 'any')
        report(`join() needs a list, but its first argument is ${describeShape(first)}`);
      return STRING;
    case 'length':
      return INTEGER;
    case 'default':
      // Either argument's value, so neither one's enum.
      return withoutValues(first?.kind === 'null' ? (second ?? ANY) : (first ?? ANY));
    case 'slice':
      if (first && !['list', 'string', 'any'].includes(first.kind))
        report(`slice() needs a list or text, but its first argument is ${describeShape(first)}`);
      return withoutValues(first ?? ANY);
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      if (name !== 'contains' && first && isComposite(first))
        report(`${name}() compares text, but its first argument is ${describeShape(first)}`);
      return BOOLEAN;
    case 'fromJSON':
      if (first && isComposite(first))
        report(`fromJSON() reads JSON text, but its argument is already ${describeShape(first)}`);
      return ANY;
    default:
      // json, toJSON, format and hashFiles give text.
      return STRING;
  }
}

/** Same kinds stay that kind; a mix could be either side, so it is any value. */
function either(left: Shape, right: Shape): Shape {
  if (left.kind === right.kind && !isComposite(left)) {
    // One of both sides' values, where both sides list theirs.
    const values = 'values' in left && 'values' in right && left.values && right.values;
    return values ? { ...left, values: [...new Set([...values, ...right.values!])] } : withoutValues(left);
  }
  const numeric = (s: Shape) => s.kind === 'integer' || s.kind === 'number';
  return numeric(left) && numeric(right) ? { kind: 'number' } : ANY;
}

/** The shape of `left op right`: comparisons give true or false; `&&` and `||` give one of their operands. */
export function operatorShape(op: BinaryOperator, left: Shape, right: Shape, report: (message: string) => void): Shape {
  if (op === '&&' || op === '||') return either(left, right);
  const ordering = op !== '==' && op !== '!=';
  for (const side of [left, right]) {
    if (ordering && isComposite(side)) {
      report(`'${op}' cannot order ${describeShape(side)}; compare its length() or one of its fields`);
      return BOOLEAN;
    }
  }
  const scalar = (s: Shape) => ['string', 'number', 'integer', 'boolean'].includes(s.kind);
  if (!ordering && ((isComposite(left) && scalar(right)) || (scalar(left) && isComposite(right)))) {
    const [composite, other] = isComposite(left) ? [left, right] : [right, left];
    report(
      `'${op}' compares ${describeShape(composite)} with ${describeShape(other)}, which is never equal; use contains() or a field`,
    );
  }
  return BOOLEAN;
}
