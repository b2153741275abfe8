// The command line's two kinds of failure are the session's: a run built without the CLI throws
// the same ones, and the CLI maps them to exit codes 2 and 1.
export { GatewayRefusal, InvalidRecipe, UsageError } from '../session/errors.js';
