import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { FormData } from 'undici';
import { isMediaType } from '../files/media-kind.js';
import { sniffedType } from '../files/sniff.js';
import { formatBytes } from '../format.js';
import { err, ok, type Result } from '../result.js';
import { localFileFailure, malformedResponse, type GatewayFailure } from './failures.js';
import { envelopeData, isObject, parseMediaFile } from './parse.js';
import { pageQuery, type GatewayRequester } from './request-core.js';
import type { FileList, MediaFile } from './types.js';

/** The team's media files: upload, list and delete. Downloads are in download.ts. */

export async function upload(
  core: GatewayRequester,
  path: string,
  limitBytes: number,
  signal?: AbortSignal,
): Promise<Result<MediaFile, GatewayFailure>> {
  const checked = await checkUploadable(path, limitBytes);
  if (!checked.ok) return checked;
  const answer = await core.json({
    kind: 'call',
    method: 'POST',
    url: `${core.base}/media/files`,
    body: async () => {
      // openAsBlob streams from disk as the request is written: the file is never held in memory.
      const form = new FormData();
      form.append('file', await openAsBlob(path, { type: checked.value }), basename(path));
      return form;
    },
    signal,
  });
  if (!answer.ok) return answer;
  const file = parseMediaFile(answer.value);
  return file ? ok(file) : err(malformedResponse(200, 'an upload answer without file_id and download_url'));
}

export async function listFiles(
  core: GatewayRequester,
  page: { limit?: number; offset?: number } = {},
  signal?: AbortSignal,
): Promise<Result<FileList, GatewayFailure>> {
  const answer = await core.json({
    kind: 'read',
    method: 'GET',
    url: `${core.base}/media/files${pageQuery(page)}`,
    signal,
  });
  if (!answer.ok) return answer;
  const data = envelopeData(answer.value);
  const list = isObject(data) && Array.isArray(data.files) ? data.files : Array.isArray(data) ? data : undefined;
  if (!list) return err(malformedResponse(200, 'a file list without data.files'));
  const files = list.map(parseMediaFile).filter((f): f is MediaFile => f !== undefined);
  const meta = isObject(data) ? data : {};
  return ok({
    files,
    total: typeof meta.total === 'number' ? meta.total : files.length,
    limit: typeof meta.limit === 'number' ? meta.limit : files.length,
    offset: typeof meta.offset === 'number' ? meta.offset : 0,
  });
}

export async function deleteFile(
  core: GatewayRequester,
  fileId: string,
  signal?: AbortSignal,
): Promise<Result<void, GatewayFailure>> {
  const answer = await core.json({
    kind: 'read',
    method: 'DELETE',
    url: `${core.base}/media/files/${encodeURIComponent(fileId)}`,
    signal,
  });
  return answer.ok ? ok(undefined) : answer;
}

/** Before sending: the file exists, fits the upload limit, and its bytes are an image, video or audio. Answers its MIME type. */
export async function checkUploadable(path: string, limitBytes: number): Promise<Result<string, GatewayFailure>> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return err(localFileFailure(path, `${path} is not a file`));
    size = info.size;
  } catch {
    return err(localFileFailure(path, `${path} does not exist`));
  }
  if (size > limitBytes)
    return err(
      localFileFailure(path, `${path} is ${formatBytes(size)}; the upload limit is ${formatBytes(limitBytes)}`),
    );
  const mime = await sniffedType(path);
  if (!isMediaType(mime)) {
    return err(
      localFileFailure(path, `${path} is not an image, video or audio file${mime ? ` (its bytes are ${mime})` : ''}`),
    );
  }
  return ok(mime);
}
