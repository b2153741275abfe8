import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { err, ok, type Result } from '../result.js';
import { shownRedisUrl } from './redis-url.js';

/**
 * The name every process on one key shares, without the key: a SHA-256 of the API key and the
 * gateway's base URL. Two teams (two keys) get two names; so do two gateways.
 */
export function budgetScope(apiKey: string, baseUrl: string): string {
  return createHash('sha256').update(`${apiKey}\n${baseUrl}`).digest('hex').slice(0, 32);
}

/** The command connection and the subscriber connection of one process. */
export interface RedisPair {
  commands: Redis;
  subscriber: Redis;
  close(): Promise<void>;
}

function client(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    // A command sent while Redis is away fails at once: the budget then goes on locally.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 2000,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    // ioredis would subscribe again on reconnecting without handling its failure (an unhandled
    // rejection when Redis goes away again at once): whoever subscribes does it on 'ready'.
    autoResubscribe: false,
  });
  // Connection errors surface as failed commands and 'close' events; the budget handles those.
  redis.on('error', () => {});
  return redis;
}

/** Connects both connections, or answers why not (the URL shown without its password). */
export async function openRedis(url: string): Promise<Result<RedisPair, string>> {
  const commands = client(url);
  const subscriber = client(url);
  // ioredis rejects connect() with "Connection is closed."; the socket's own error says why.
  let cause: Error | undefined;
  commands.once('error', (error: Error) => (cause ??= error));
  try {
    await commands.connect();
    await subscriber.connect();
  } catch (error) {
    commands.disconnect();
    subscriber.disconnect();
    const reason = (cause ?? error) instanceof Error ? (cause ?? (error as Error)).message : String(error);
    // Redis answered, and refused the password: it is running, and starting it is not the fix.
    if (/WRONGPASS|NOAUTH|invalid (username-)?password/i.test(reason))
      return err(`Redis at ${shownRedisUrl(url)} refused the password (${reason}); check the password in the URL`);
    return err(`cannot reach Redis at ${shownRedisUrl(url)}: ${reason}`);
  }
  return ok({
    commands,
    subscriber,
    async close() {
      commands.disconnect();
      subscriber.disconnect();
    },
  });
}
