import type { Command } from 'commander';
import { formatBytes } from '../format.js';
import type { MediaFile } from '../gateway/types.js';
import { addConnectionOptions, withConnection, type ConnectionFlags } from './connection.js';
import { UsageError } from './errors.js';
import { numberFlag } from './flags.js';
import { setExitCode } from './io.js';
import { printError, printJson, printLine, printTable } from './output.js';
import { unwrap } from './unwrap.js';

const fileJson = (f: MediaFile) => ({
  file_id: f.fileId,
  type: f.type,
  filename: f.filename ?? null,
  size: f.size ?? null,
  url: f.url,
  created_at: f.createdAt ?? null,
  expires_at: f.expiresAt ?? null,
});
const when = (ms: number | undefined) => (ms === undefined ? '' : new Date(ms).toISOString().replace('.000Z', 'Z'));

export function registerFilesCommand(program: Command): void {
  const files = program.command('files').description("The team's uploaded media files.");

  addConnectionOptions(
    files
      .command('upload')
      .description('Upload image, video or audio files (16 MB at most each); prints their URLs.')
      .argument('<path...>', 'files to upload'),
  )
    .option('--json', 'print JSON')
    .action(async (paths: string[], flags: ConnectionFlags & { json?: boolean }) => {
      // Every file is checked before any is sent: a bad one last in the list must not leave the
      // others uploaded, their ids never printed.
      const [{ checkUploadable }, { UPLOAD_LIMIT_BYTES }] = await Promise.all([
        import('../gateway/files-api.js'),
        import('../wire/limits.js'),
      ]);
      // One at a time: `files upload dir/*` must not open thousands of files at once.
      const problems: string[] = [];
      for (const path of paths) {
        const checked = await checkUploadable(path, UPLOAD_LIMIT_BYTES).catch((error: Error) => ({
          ok: false as const,
          error: { message: `${path}: ${error.message}` },
        }));
        if (!checked.ok) problems.push(checked.error.message);
      }
      if (problems.length > 0) throw new UsageError(`${problems.join('\n')}\nnothing was uploaded`);
      return withConnection(flags, async ({ client }) => {
        const uploaded: MediaFile[] = [];
        for (const path of paths) uploaded.push(unwrap(await client.upload(path), `upload of ${path}`));
        if (flags.json) return printJson(uploaded.map(fileJson));
        printTable(
          ['FILE ID', 'TYPE', 'SIZE', 'URL'],
          uploaded.map((f) => [f.fileId, f.type, f.size === undefined ? '' : formatBytes(f.size), f.url]),
        );
      });
    });

  addConnectionOptions(files.command('list').description("List the team's unexpired files, newest first."))
    .option(
      '--limit <n>',
      'files per page, at most 100',
      numberFlag('--limit', { integer: true, min: 1, max: 100 }),
      20,
    )
    .option(
      '--offset <n>',
      'files to skip',
      numberFlag('--offset', { integer: true, min: 0, max: Number.MAX_SAFE_INTEGER }),
      0,
    )
    .option('--json', 'print JSON')
    .action(async (flags: ConnectionFlags & { limit: number; offset: number; json?: boolean }) =>
      withConnection(flags, async ({ client }) => {
        const page = unwrap(await client.files({ limit: flags.limit, offset: flags.offset }));
        if (flags.json)
          return printJson({
            files: page.files.map(fileJson),
            total: page.total,
            limit: page.limit,
            offset: page.offset,
          });
        printTable(
          ['FILE ID', 'TYPE', 'SIZE', 'NAME', 'EXPIRES', 'URL'],
          page.files.map((f) => [
            f.fileId,
            f.type,
            f.size === undefined ? '' : formatBytes(f.size),
            f.filename,
            when(f.expiresAt),
            f.url,
          ]),
        );
        printLine(`${page.files.length} of ${page.total} (offset ${page.offset})`);
      }),
    );

  addConnectionOptions(
    files
      .command('rm')
      .description('Delete files now, freeing upload quota.')
      .argument('<file_id...>', 'ids of the files to delete'),
  )
    .option('--json', 'print JSON')
    .action(async (ids: string[], flags: ConnectionFlags & { json?: boolean }) =>
      withConnection(flags, async ({ client }) => {
        // Each file is tried: one the gateway refuses (already gone, another team's) stops none of the others.
        const deleted: string[] = [];
        const failed: Array<{ file_id: string; message: string }> = [];
        for (const id of ids) {
          const answer = await client.deleteFile(id);
          if (answer.ok) deleted.push(id);
          else failed.push({ file_id: id, message: answer.error.message });
          // A refusal is said on stderr either way; stdout holds the deletions, or the JSON.
          if (!answer.ok) printError(`pipeline: delete of ${id}: ${answer.error.message}`);
          else if (!flags.json) printLine(`deleted ${id}`);
        }
        if (flags.json) printJson({ deleted, failed });
        if (failed.length > 0) setExitCode(1);
      }),
    );
}
