import type { Command } from 'commander';
import { plural } from '../format.js';
import { collectSet } from './flags.js';
import { printError, printJson, printLine, shown } from './output.js';
import {
  checkSkipInvalidRows,
  rowOptions,
  SKIP_INVALID_ROWS_HELP,
  skippedRowCount,
  skippedRowsWarning,
} from './skipped-rows.js';
import { setExitCode } from './io.js';

interface ValidateFlags {
  set: string[];
  batch?: string;
  skipInvalidRows?: boolean;
  json?: boolean;
}

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'Check a recipe and its inputs without running anything: exit 0 when valid, else every error and exit 2.',
    )
    .argument('<recipe>', 'the recipe file')
    .option('--set <name=value>', 'give an input (repeatable)', collectSet, [])
    .option('--batch <file>', 'input rows, one run each (.csv with a header row, or .jsonl / .ndjson)')
    .option('--skip-invalid-rows', `${SKIP_INVALID_ROWS_HELP} as warnings; they make no error`)
    .option('--json', 'print JSON')
    .action(async (recipe: string, flags: ValidateFlags) => {
      checkSkipInvalidRows(flags);
      // Imported when the command runs: every command's module is loaded when the program starts.
      const [{ loadRecipe }, { diagnosticJson, errorsIn, formatDiagnostics }, { localFilesOf }] = await Promise.all([
        import('./load-recipe.js'),
        import('../recipe/diagnostics.js'),
        import('../session/run-files.js'),
      ]);
      const result = await loadRecipe(recipe, rowOptions(flags));
      if (!result.ok) {
        if (flags.json) printJson({ valid: false, diagnostics: result.error.map(diagnosticJson) });
        else printError(formatDiagnostics(result.error));
        const { annotateDiagnostics } = await import('./github-actions.js');
        annotateDiagnostics(result.error);
        if (!flags.json) printError(`\n${errorsIn(result.error)}`);
        setExitCode(2);
        return;
      }
      const plan = result.value;
      const summary = {
        valid: true,
        name: plan.name,
        steps: plan.steps.length,
        layers: plan.layers.length,
        inputs: Object.keys(plan.rows.at(0) ?? {}).length,
        rows: plan.rows.length,
        // What a CI cache key hashes beside the recipe (the GitHub Action does): the files a run would read.
        local_files: localFilesOf(plan).map(shown),
        ...(flags.skipInvalidRows ? { skipped_rows: plan.skippedRows ?? [] } : {}),
      };
      // Warnings go to stderr in both forms: stdout stays the summary, or JSON a script parses.
      const warning = skippedRowsWarning(plan);
      if (warning) printError(warning);
      if (flags.json) return printJson(summary);
      const leftOut = skippedRowCount(plan);
      const rowsLeftOut = leftOut ? ` (${plural(leftOut, 'row')} left out)` : '';
      printLine(
        `${recipe}: valid: ${plural(summary.steps, 'step')} in ${plural(summary.layers, 'layer')}, ${plural(summary.inputs, 'input')}, ${plural(summary.rows, 'run')}${rowsLeftOut}`,
      );
    });
}
