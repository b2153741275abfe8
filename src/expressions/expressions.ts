/**
 * `${{ … }}` expressions: paths (`steps.hero.outputs[0].images[*].url`), literals, GitHub Actions'
 * operators and functions. Nothing can run code or reach the network; only hashFiles() reads files,
 * through the host the caller gives. The parser is bounded in size and depth, and property access
 * sees only a value's own data.
 */

export { parseExpression } from './parser.js';
export {
  ExpressionError,
  evaluate,
  render,
  STEP_CONCLUSIONS,
  toText,
  type Scope,
  type StepConclusion,
} from './evaluator.js';
export { isTruthy, looselyEqual } from './operators.js';
export { closestName, didYouMean, NameSuggester } from './suggest.js';
export {
  callsStatus,
  ExpressionSyntaxError,
  FUNCTIONS,
  LIMITS,
  OPERATORS,
  pathText,
  ROOTS,
  STATUS_FUNCTIONS,
  type BinaryOperator,
  type Expr,
  type FunctionName,
  type Segment,
} from './syntax.js';
export { hasExpression, parseTemplate, type Template } from './template.js';
export { shellScript, valueVariable, type ScriptSlot } from './shell-script.js';
