// Prints the action's outputs as $GITHUB_OUTPUT lines (name=value) from what `pipeline run --json`
// answered (argv[2]) and its exit code (argv[3]). The spend comes from the run's run.json: the
// answer on stdout does not carry it. No run (an invalid recipe, a refusal, a gateway that could not
// be used) gives empty paths: its answer has a status and a message but no run_dir.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [answerFile, code] = process.argv.slice(2);
const readJson = (path) => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
};
const answer = readJson(answerFile);
const statusWithoutAnswer = { 2: 'invalid', 130: 'interrupted' }[code] ?? 'error';
const ran = typeof answer?.run_dir === 'string';
const summary = ran ? readJson(join(answer.run_dir, 'run.json')) : undefined;
const report = ran ? join(answer.run_dir, 'report.html') : '';
const outputs = {
  'run-id': answer?.run_id ?? '',
  status: answer?.status ?? statusWithoutAnswer,
  'spend-usd': String(summary?.cost?.committed_usd ?? 0),
  'outputs-dir': answer?.outputs_dir ?? '',
  report: report && existsSync(report) ? report : '',
};
for (const [name, value] of Object.entries(outputs)) process.stdout.write(`${name}=${String(value).replace(/\n/g, ' ')}\n`);
