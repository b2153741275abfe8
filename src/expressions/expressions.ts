/**
 * `${{ … }}` expressions: paths (`steps.hero.outputs[0].images[*].url`), literals, and five pure
 * functions. Nothing can run code, read files or reach the network; the parser is bounded in
 * size and depth, and property access sees only a value's own data.
 */

export { parseExpression } from './parser.js';
export { ExpressionError, evaluate, render, toText, type Scope } from './evaluator.js';
export { ExpressionSyntaxError, FUNCTIONS, LIMITS, pathText, ROOTS, type Expr, type FunctionName, type Segment } from './syntax.js';
export { hasExpression, parseTemplate, type Template } from './template.js';
