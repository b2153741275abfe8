import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fileTypeFromFile } from 'file-type';
import { teamOf, type GatewayContext } from '../context.js';
import { GatewayError, invalid } from '../errors.js';
import type { MediaType } from '../files.js';

/** Upload, list and delete of a team's media files, and the public links that serve their bytes. */
export function fileRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  app.post('/api/v1/media/files', (request) => receiveUpload(ctx, request));

  app.get<{ Querystring: Record<string, string | undefined> }>('/api/v1/media/files', async (request) => {
    const limit = pageParameter(request.query.limit, 'limit', 20, 1, 100);
    const offset = pageParameter(request.query.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    return { code: 0, message: 'success', data: ctx.files.list(teamOf(request), limit, offset) };
  });

  app.delete<{ Params: { file_id: string } }>('/api/v1/media/files/:file_id', async (request, reply) => {
    await ctx.files.remove(teamOf(request), request.params.file_id);
    return reply.code(204).send();
  });

  for (const area of ['files', 'results'] as const) {
    app.get<{ Params: { token: string; name: string } }>(`/${area}/:token/:name`, async (request, reply) => {
      const blob = await ctx.blobs.lookup(area, request.params.token, request.params.name);
      if (!blob) throw new GatewayError(404, 'this link expired or never existed');
      return reply
        .header('Content-Type', blob.contentType)
        .header('Content-Length', String(blob.size))
        .header('Cache-Control', 'private, max-age=3600')
        .send(createReadStream(blob.path));
    });
  }
}

/** An upload: one multipart file within the size limit and the team's quota, whose bytes are media. */
async function receiveUpload(ctx: GatewayContext, request: FastifyRequest) {
  const team = teamOf(request);
  ctx.files.checkQuota(team, 0);
  if (!request.isMultipart())
    throw invalid('Content-Type must be multipart/form-data with the file in the field "file"');
  const part = await request.file({
    limits: { fileSize: ctx.options.uploadLimitBytes, files: 1, fields: 20, fieldSize: 64 * 1024 },
  });
  if (!part) throw invalid('the multipart field "file" is required');
  if (part.fieldname !== 'file') {
    part.file.resume();
    throw invalid(`the file must be sent in the multipart field "file" (got "${part.fieldname.slice(0, 40)}")`);
  }
  const { token, path } = await ctx.blobs.reserve('files', part.filename || 'upload');
  await pipeline(part.file, createWriteStream(path)).catch(async (error: unknown) => {
    await rm(path, { force: true });
    throw error;
  });
  // The stream stops at the limit and marks itself truncated rather than failing.
  if (part.file.truncated) {
    await rm(path, { force: true });
    throw new GatewayError(413, `the file is larger than the upload limit of ${ctx.options.uploadLimitBytes} bytes`);
  }
  const sniffed = await fileTypeFromFile(path);
  const type = sniffed ? (sniffed.mime.split('/')[0] as string) : undefined;
  if (!sniffed || (type !== 'image' && type !== 'video' && type !== 'audio')) {
    await rm(path, { force: true });
    throw invalid(`the file is not an image, video or audio file${sniffed ? ` (it looks like ${sniffed.mime})` : ''}`);
  }
  const { size } = await stat(path);
  try {
    ctx.files.checkQuota(team, size);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
  // One reading of the clock: the record's created_at and expires_at are exactly the TTL apart.
  const createdAt = ctx.clock.now();
  const blob = await ctx.blobs.register({
    area: 'files',
    token,
    name: part.filename || `upload.${sniffed.ext}`,
    path,
    size,
    contentType: sniffed.mime,
    expiresAt: createdAt + ctx.options.fileTtlSeconds * 1000,
  });
  const record = await ctx.files.add(team, blob, type as MediaType, part.filename || blob.name, createdAt);
  return { code: 0, message: 'success', data: record };
}

/** A `limit` or `offset` query parameter: a whole number within bounds, or a 400 that names it. */
export function pageParameter(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,15}$/.test(value))
    throw invalid(`${name} must be a whole number (got ${JSON.stringify(value.slice(0, 40))})`);
  const number = Number(value);
  if (number < min || number > max) throw invalid(`${name} must be from ${min} to ${max} (got ${number})`);
  return number;
}
