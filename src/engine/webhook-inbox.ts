import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseTaskResult } from '../gateway/parse.js';
import type { TaskResult } from '../gateway/types.js';
import type { WebhookInbox } from './context.js';
import { parseListenAddress } from './listen-address.js';

const MAX_BODY = 4 * 1024 * 1024;

/**
 * Listens for task results on `listen` (HOST:PORT; port 0 takes a free one). Submissions carry
 * `{publicUrl}/{token}`, where `publicUrl` defaults to the address actually bound (for a gateway
 * that reaches this machine directly, as in tests); a
 * delivery is accepted only on that token's path and only for a task of this run that is still
 * waiting, so a stranger who finds the address cannot end a task early or inject a result.
 */
export async function openWebhookInbox(
  listen: string,
  publicUrl?: string,
): Promise<WebhookInbox & { close(): Promise<void>; received: () => number; port: number }> {
  const token = randomBytes(24).toString('hex');
  const waiting = new Map<string, { resolve: (result: TaskResult) => void; promise: Promise<TaskResult> }>();
  let received = 0;
  const server: Server = createServer((request, response) => {
    const reply = (status: number) => {
      response.statusCode = status;
      response.end();
    };
    if (request.method !== 'POST' || !(request.url ?? '').split('?')[0]!.endsWith(`/${token}`)) return reply(404);
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(400);
      }
      const header = request.headers['x-webhook-task-id'];
      const result = parseTaskResult(body, typeof header === 'string' ? header : '');
      const waiter = result && waiting.get(result.taskId);
      if (!result || !waiter || result.state === 'running') return reply(404);
      received++;
      waiter.resolve(result);
      reply(204);
    });
  });
  const address = parseListenAddress(listen);
  if (!address.ok) throw new Error(`the webhook address ${address.error}`);
  const { host, port } = address.value;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  const base = publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  return {
    port: bound,
    url: `${base.replace(/\/+$/, '')}/${token}`,
    expect(taskId) {
      let entry = waiting.get(taskId);
      if (!entry) {
        let resolve!: (result: TaskResult) => void;
        const promise = new Promise<TaskResult>((r) => (resolve = r));
        entry = { resolve, promise };
        waiting.set(taskId, entry);
      }
      return entry.promise;
    },
    forget(taskId) {
      waiting.delete(taskId);
    },
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
