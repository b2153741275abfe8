import { createInterface } from 'node:readline/promises';

/**
 * Asks `question` on `output` and reads one line of `input`: yes for y or yes, in any case. The
 * end of the input (Ctrl-D, a closed pipe) is no: a question nobody can answer must not hold a
 * run for ever.
 */
export async function askYes(
  question: string,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<boolean> {
  const lines = createInterface({ input, output });
  const ended = new Promise<string>((resolve) => lines.once('close', () => resolve('')));
  const answer = await Promise.race([lines.question(question), ended]).finally(() => lines.close());
  return /^y(es)?$/i.test(answer.trim());
}
