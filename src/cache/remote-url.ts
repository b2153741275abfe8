import { err, ok, type Result } from '../result.js';

/** Where a remote cache is: a bucket and a prefix inside it (no leading or trailing slash; may be empty). */
export interface RemoteAddress {
  bucket: string;
  prefix: string;
}

/** Bucket names as S3, MinIO, R2 and GCS accept them: 3 to 63 of lower-case letters, digits, dots and dashes. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `s3://bucket` or `s3://bucket/some/prefix`, or why not. Credentials never go in the address:
 * they come from the AWS variables, so that the address can be printed and journaled.
 */
export function parseRemoteUrl(text: string): Result<RemoteAddress, string> {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(text);
  if (!match) return err(`a remote cache is an address such as s3://bucket/prefix, got ${JSON.stringify(text)}`);
  const bucket = match[1]!;
  if (bucket.includes('@') || bucket.includes(':'))
    return err(
      'the remote cache address holds no credentials or port: give them in AWS_ACCESS_KEY_ID, ' +
        'AWS_SECRET_ACCESS_KEY and AWS_ENDPOINT_URL',
    );
  if (!BUCKET.test(bucket))
    return err(`${JSON.stringify(bucket)} is not a bucket name (3 to 63 of a-z, 0-9, dots and dashes)`);
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '.' || part === '..'))
    return err(`the prefix of ${JSON.stringify(text)} has a . or .. part`);
  return ok({ bucket, prefix });
}

export const remoteUrl = (address: RemoteAddress): string =>
  `s3://${address.bucket}${address.prefix ? `/${address.prefix}` : ''}`;
