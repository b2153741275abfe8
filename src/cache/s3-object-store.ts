import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ListedObject, ObjectBody, ObjectStore } from './object-store.js';
import { type RemoteAddress, remoteUrl } from './remote-url.js';

/** How long a remote may take: bounded, so an unreachable or stalled one costs seconds, never a hung run. */
export interface S3Timeouts {
  /** To open a connection. Default 5 s. */
  connectMs: number;
  /** With no byte moving on an open connection. Default 30 s (a large blob keeps moving, so it may take longer). */
  idleMs: number;
  /** Tries of one request, the first included. Default 2. */
  attempts: number;
}

const DEFAULT_TIMEOUTS: S3Timeouts = { connectMs: 5_000, idleMs: 30_000, attempts: 2 };

/** The variables the client reads: the endpoint, the region and the credentials, as every AWS tool reads them. */
export interface S3Environment {
  AWS_ENDPOINT_URL_S3?: string | undefined;
  AWS_ENDPOINT_URL?: string | undefined;
  AWS_REGION?: string | undefined;
  AWS_DEFAULT_REGION?: string | undefined;
  AWS_ACCESS_KEY_ID?: string | undefined;
  AWS_SECRET_ACCESS_KEY?: string | undefined;
  AWS_SESSION_TOKEN?: string | undefined;
}

/** The keys in the variables, or undefined: the SDK's chain then looks for them (profiles, SSO, roles). */
function keysOf(env: S3Environment) {
  if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) return undefined;
  return {
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
  };
}

/**
 * The SDK's own logger, silent: every failure reaches the caller as an error, which the remote tier
 * turns into its one warning. Without one the SDK writes some (a failed streamed upload) to the
 * console, around that warning.
 */
const QUIET = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

interface S3Error {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

const statusOf = (error: unknown) => (error as S3Error).$metadata?.httpStatusCode;
/**
 * The object is not there: a miss. Not a bucket that is not there (a 404 too), which is a remote
 * that cannot be used: a typo in its name must be told, not be a miss on every read.
 */
const isAbsent = (error: unknown) => {
  const name = (error as S3Error).name;
  if (name === 'NoSuchBucket') return false;
  return statusOf(error) === 404 || name === 'NoSuchKey' || name === 'NotFound';
};

/** An endpoint as a message may show it: without any user or password it holds. */
function shownEndpoint(endpoint: string | undefined): string | undefined {
  if (!endpoint) return undefined;
  try {
    const url = new URL(endpoint);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return 'an AWS_ENDPOINT_URL that is not a URL';
  }
}

/**
 * An S3-compatible bucket (AWS S3, MinIO, R2, GCS's interoperability API…) through the AWS SDK v3.
 * The SDK is imported on first use, so a run without a remote cache never loads it. The endpoint
 * is AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (path-style addressing then, which every
 * S3-compatible server serves), the region AWS_REGION or AWS_DEFAULT_REGION (else us-east-1), and
 * the credentials AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else whatever
 * the SDK's usual chain finds (a profile, SSO, a web identity token, a container or instance role).
 */
export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  readonly endpoint: string | undefined;
  private client: Promise<{ s3: S3Client; sdk: typeof import('@aws-sdk/client-s3') }> | undefined;
  private readonly timeouts: S3Timeouts;

  constructor(
    private readonly address: RemoteAddress,
    private readonly env: S3Environment = process.env,
    timeouts: Partial<S3Timeouts> = {},
  ) {
    this.location = remoteUrl(address);
    this.endpoint = shownEndpoint(env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
  }

  private connect() {
    this.client ??= (async () => {
      // The SDK warns on every start under Node 20 that its versions of 2027 will need Node 22; the
      // version this package pins runs on Node 20, so the warning would only be noise on stderr.
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
      const sdk = await import('@aws-sdk/client-s3');
      const endpoint = this.env.AWS_ENDPOINT_URL_S3 || this.env.AWS_ENDPOINT_URL || undefined;
      const credentials = keysOf(this.env);
      const s3 = new sdk.S3Client({
        ...(credentials ? { credentials } : {}),
        region: this.env.AWS_REGION || this.env.AWS_DEFAULT_REGION || 'us-east-1',
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        maxAttempts: this.timeouts.attempts,
        requestHandler: { connectionTimeout: this.timeouts.connectMs, socketTimeout: this.timeouts.idleMs },
        // Checksums only where S3 requires them: a newer SDK's default (a CRC trailer in aws-chunked
        // bodies) is refused by many S3-compatible servers. Blobs are checked by SHA-256 anyway.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        logger: QUIET,
      });
      return { s3, sdk };
    })();
    return this.client;
  }

  private objectKey(name: string): string {
    return this.address.prefix ? `${this.address.prefix}/${name}` : name;
  }

  async read(name: string): Promise<string | undefined> {
    const { s3, sdk } = await this.connect();
    try {
      const answer = await s3.send(
        new sdk.GetObjectCommand({ Bucket: this.address.bucket, Key: this.objectKey(name) }),
      );
      return await answer.Body!.transformToString('utf8');
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
  }

  async download(name: string, path: string): Promise<boolean> {
    const { s3, sdk } = await this.connect();
    let body: Readable;
    try {
      const answer = await s3.send(
        new sdk.GetObjectCommand({ Bucket: this.address.bucket, Key: this.objectKey(name) }),
      );
      body = answer.Body as Readable;
    } catch (error) {
      if (isAbsent(error)) return false;
      throw error;
    }
    await pipeline(body, createWriteStream(path));
    return true;
  }

  private async exists(name: string): Promise<boolean> {
    const { s3, sdk } = await this.connect();
    try {
      await s3.send(new sdk.HeadObjectCommand({ Bucket: this.address.bucket, Key: this.objectKey(name) }));
      return true;
    } catch (error) {
      if (isAbsent(error)) return false;
      throw error;
    }
  }

  private async put(name: string, body: ObjectBody, onlyIfAbsent: boolean): Promise<void> {
    const { s3, sdk } = await this.connect();
    await s3.send(
      new sdk.PutObjectCommand({
        Bucket: this.address.bucket,
        Key: this.objectKey(name),
        ...('text' in body
          ? { Body: body.text, ContentType: 'application/json' }
          : { Body: createReadStream(body.path), ContentLength: body.bytes }),
        ...(onlyIfAbsent ? { IfNoneMatch: '*' } : {}),
      }),
    );
  }

  /**
   * Check, then a conditional put. `If-None-Match: *` makes the put itself write-once where the
   * server honours it (AWS S3 since 2024, MinIO, R2): a racing writer gets 412 and nothing is
   * replaced. A server that ignores the header (s3rver, some older ones) is kept write-once by the
   * check alone, which leaves two writers of one key racing in the instant between check and put;
   * both then write an entry for the same request, each whole and verified on reading.
   */
  async create(name: string, body: ObjectBody): Promise<'stored' | 'exists'> {
    if (await this.exists(name)) return 'exists';
    try {
      await this.put(name, body, true);
      return 'stored';
    } catch (error) {
      // 412: another writer's object is there; 409: one is being written at this moment.
      if (statusOf(error) === 412 || statusOf(error) === 409) return 'exists';
      throw error;
    }
  }

  replace(name: string, body: ObjectBody): Promise<void> {
    return this.put(name, body, false);
  }

  async list(prefix: string): Promise<ListedObject[]> {
    const { s3, sdk } = await this.connect();
    const listed: ListedObject[] = [];
    const base = this.objectKey('');
    let token: string | undefined;
    do {
      const page = await s3.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.address.bucket,
          Prefix: this.objectKey(prefix),
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? [])
        if (object.Key)
          listed.push({
            name: object.Key.slice(base.length),
            modifiedAt: object.LastModified?.getTime() ?? 0,
            bytes: object.Size ?? 0,
          });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return listed;
  }

  async remove(names: string[]): Promise<void> {
    const { s3, sdk } = await this.connect();
    // DeleteObjects takes at most 1,000 keys a request.
    for (let start = 0; start < names.length; start += 1000) {
      const objects = names.slice(start, start + 1000).map((name) => ({ Key: this.objectKey(name) }));
      const answer = await s3.send(
        new sdk.DeleteObjectsCommand({ Bucket: this.address.bucket, Delete: { Objects: objects, Quiet: true } }),
      );
      const failed = answer.Errors?.[0];
      if (failed) throw new Error(`could not remove ${failed.Key}: ${failed.Code ?? 'error'} ${failed.Message ?? ''}`);
    }
  }
}
