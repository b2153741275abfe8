import { closeSync, createWriteStream, openSync, writeSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromBuffer } from 'file-type';
import { err, ok, type Result } from '../result.js';
import { abortedFailure, downloadFailure, httpFailure, type GatewayFailure } from './failures.js';
import { mayRetry } from './retry.js';
import { errorMessageOf, USER_AGENT, type GatewayRequester } from './request-core.js';
import { discard, type Answer } from './transport.js';

export interface Downloaded {
  path: string;
  bytes: number;
  /** Sniffed from the bytes, when recognisable. */
  mime?: string;
}

export interface DownloadOptions {
  /** Default 2 GiB. */
  maxBytes?: number;
  /** `image`, `video` or `audio`: the bytes must be a file of that kind. */
  expect?: string;
}

/** Enough of a file's start for file-type to recognise every format it knows. */
const SNIFF_BYTES = 4100;

/**
 * Saves a result link's bytes at `destination`, retried as a read. The bytes go to
 * `destination.part` and are renamed only once whole and checked, so a file under its final name
 * is always complete, whatever stopped the process.
 */
export async function download(
  core: GatewayRequester,
  url: string,
  destination: string,
  options: DownloadOptions = {},
  signal?: AbortSignal,
): Promise<Result<Downloaded, GatewayFailure>> {
  const maxBytes = options.maxBytes ?? 2 * 1024 ** 3;
  for (let attempt = 1; ; attempt++) {
    const outcome = await downloadOnce(core, url, destination, maxBytes, options.expect, signal);
    if (outcome.ok || attempt >= core.retry.maxAttempts || !mayRetry('read', outcome.error)) return outcome;
    const waited = await core.backOff(outcome.error, attempt, signal);
    if (!waited.ok) return waited;
  }
}

async function downloadOnce(
  core: GatewayRequester,
  url: string,
  destination: string,
  maxBytes: number,
  expect: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Result<Downloaded, GatewayFailure>> {
  // Result links are public; the API key is never sent to them.
  const sent = await core.transport.send({
    method: 'GET',
    url,
    headers: { 'User-Agent': USER_AGENT },
    ...(signal ? { signal } : {}),
  });
  if (!sent.ok) return sent;
  const answer = sent.value;
  if (answer.status !== 200) {
    const text = await core.transport.readText(answer, 64 * 1024, signal);
    return err(httpFailure(answer.status, text.ok ? errorMessageOf(safeJson(text.value)) : '', undefined));
  }
  const declared = String(answer.headers['content-type'] ?? '');
  if (expect && declared && !declared.startsWith(`${expect}/`) && !declared.startsWith('application/octet-stream')) {
    discard(answer);
    return err(downloadFailure(url, `expected ${expect}, the server sent ${declared}`));
  }
  const partial = `${destination}.part`;
  const written = await writePart(answer, partial, maxBytes, signal);
  if (!written.ok) {
    await rm(partial, { force: true });
    return err(
      written.error.tooLarge
        ? downloadFailure(url, `the file is larger than ${maxBytes} bytes`)
        : written.error.failure,
    );
  }
  const { bytes, head } = written.value;
  const sniffed = commonImageType(head) ?? (await fileTypeFromBuffer(head));
  const problem = expect ? mismatch(expect, sniffed?.mime, declared) : undefined;
  if (problem) {
    await rm(partial, { force: true });
    return err(downloadFailure(url, problem));
  }
  await rename(partial, destination);
  return ok({ path: destination, bytes, ...(sniffed ? { mime: sniffed.mime } : {}) });
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The type of a PNG or JPEG from its first bytes, as file-type answers it, without its thousand
 * checks before those (their strings were a tenth of what a batch task allocated); undefined
 * when unsure, and file-type decides. A PNG is an APNG when an `acTL` chunk comes before `IDAT`.
 */
export function commonImageType(head: Buffer): { mime: string } | undefined {
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff && head[3] !== 0xf7)
    return { mime: 'image/jpeg' };
  if (head.length < 8 || !head.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  let seenHeader = false;
  for (let at = 8; at + 8 <= head.length; ) {
    const length = head.readUInt32BE(at);
    const type = head.toString('latin1', at + 4, at + 8);
    if (type === 'IHDR') {
      if (length !== 13) return undefined;
      seenHeader = true;
    }
    if (type === 'IDAT') return { mime: 'image/png' };
    if (type === 'acTL') return { mime: 'image/apng' };
    if (!seenHeader) return undefined;
    at += 12 + length;
  }
  return undefined;
}

/** Why bytes are not the `expect` kind of media, or nothing when they are. */
function mismatch(expect: string, sniffed: string | undefined, declared: string): string | undefined {
  if (!sniffed)
    return `expected ${expect}, the bytes are not a known ${expect} format${declared ? ` though the server said ${declared}` : ''}`;
  return sniffed.startsWith(`${expect}/`) ? undefined : `expected ${expect}, the bytes are ${sniffed}`;
}

type PartFailure = { tooLarge: true } | { tooLarge: false; failure: GatewayFailure };

/** Streams the body to `partial`, at most `maxBytes`, keeping its first bytes to sniff as they pass. */
async function writePart(
  answer: Answer,
  partial: string,
  maxBytes: number,
  signal: AbortSignal | undefined,
): Promise<Result<{ bytes: number; head: Buffer }, PartFailure>> {
  const declared = Number(answer.headers['content-length']);
  if (declared <= Math.min(maxBytes, SMALL_BODY_BYTES)) return writeSmallPart(answer, partial, signal);
  let bytes = 0;
  // The file is not read a second time to learn its type.
  let head = Buffer.alloc(0);
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
      callback(bytes > maxBytes ? new Error(`larger than ${maxBytes} bytes`) : null, chunk);
    },
  });
  try {
    await pipeline(answer.body, cap, createWriteStream(partial));
    return ok({ bytes, head });
  } catch (error) {
    return err(
      bytes > maxBytes ? { tooLarge: true } : { tooLarge: false, failure: classifyStreamError(error, signal) },
    );
  }
}

/**
 * Bodies up to this size (an image, mostly) are read whole and written with one call: a stream,
 * its transform and its file handle cost more than the bytes themselves.
 */
const SMALL_BODY_BYTES = 1024 * 1024;

/**
 * A body the server said is small (within the caller's limit): read whole while its `.part` file
 * waits, open, then written with one call. undici holds the body to the declared length, so it
 * cannot outgrow the limit the caller checked.
 */
async function writeSmallPart(
  answer: Answer,
  partial: string,
  signal: AbortSignal | undefined,
): Promise<Result<{ bytes: number; head: Buffer }, PartFailure>> {
  let fd: number | undefined;
  try {
    fd = openSync(partial, 'w');
    const body = Buffer.from(await answer.body.arrayBuffer());
    for (let written = 0; written < body.length; ) written += writeSync(fd, body, written);
    return ok({ bytes: body.length, head: body.subarray(0, SNIFF_BYTES) });
  } catch (error) {
    return err({ tooLarge: false, failure: classifyStreamError(error, signal) });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function classifyStreamError(error: unknown, signal: AbortSignal | undefined): GatewayFailure {
  if (signal?.aborted) return abortedFailure(true);
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_BODY_TIMEOUT')
    return {
      reason: 'timeout',
      phase: 'body',
      message: 'the download stalled',
      retryable: true,
      outcomeUnknown: false,
    };
  return {
    reason: 'connection-dropped',
    message: `the download broke off (${code ?? (error as Error).message})`,
    retryable: true,
    outcomeUnknown: false,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
