import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** The credentials s3rver accepts (its one built-in account). */
export const S3RVER_KEYS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The variables that point the AWS SDK (and so `pipeline`) at it. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A real S3-compatible server (s3rver, from the npm registry) on a free loopback port, with one
 * empty bucket, its objects in a temp folder removed on close.
 */
export async function startS3Server(bucket = 'steps'): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'pipeline-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: { ...S3RVER_KEYS, AWS_ENDPOINT_URL: endpoint, AWS_REGION: 'us-east-1' },
    async close() {
      server.httpServer.closeAllConnections?.();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
