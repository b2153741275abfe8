import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { sealEntry } from '../../src/cache/entry.js';
import { cacheKey } from '../../src/cache/key.js';
import { RemoteTier } from '../../src/cache/remote-tier.js';
import { S3ObjectStore, type S3Timeouts } from '../../src/cache/s3-object-store.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredCache } from '../../src/cache/tiered-cache.js';
import { startS3Server, type S3Server } from '../support/s3-server.js';

let s3: S3Server;
let dir: string;
let prefix: string;
let now = 1_000_000;
let warnings: string[];

beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(() => s3.close());
beforeEach((context) => {
  dir = mkdtempSync(join(tmpdir(), 'remote-tier-'));
  // A prefix of its own per test: one bucket, no test sees another's objects.
  prefix = `t${context.task.id}`;
  now = 1_000_000;
  warnings = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bucket = (env: Record<string, string> = s3.env, timeouts: Partial<S3Timeouts> = {}) =>
  new S3ObjectStore({ bucket: s3.bucket, prefix }, env, timeouts);

interface Machine {
  cache: TieredCache;
  local: CacheStore;
}

/** One "machine": its own local cache folder, the shared bucket behind it. */
function machine(
  name: string,
  options: { readOnly?: boolean; signingKey?: string; store?: S3ObjectStore; remote?: boolean } = {},
): Machine {
  const warn = (message: string) => warnings.push(message);
  const local = CacheStore.open(join(dir, name), { now: () => now, warn });
  if (!local.ok) throw new Error(local.error);
  const remote =
    options.remote === false
      ? undefined
      : new RemoteTier(options.store ?? bucket(), {
          readOnly: options.readOnly ?? false,
          signingKey: options.signingKey,
          now: () => now,
          warn,
        });
  return { cache: new TieredCache(local.value, remote), local: local.value };
}

const key = (prompt: string) => cacheKey({ action: 'model v/m', input: { prompt } });
const saved = { tasks: 1, requests: 3 };

/** A run's output file on a machine, stored under the key of `prompt`. */
async function store(m: Machine, prompt: string, bytes = `image of ${prompt}`) {
  const path = join(dir, `${prompt}-${Math.random()}.png`);
  writeFileSync(path, bytes);
  return m.cache.put(key(prompt), 'model v/m', { image: path }, [{ path, url: null, expires_at: null }], saved);
}

const objects = async () => (await bucket().list('')).map((o) => o.name).sort();

describe('the remote tier of the step cache, on a real S3-compatible server', () => {
  it('gives a second machine what the first stored, checked, and keeps it in its local tier', async () => {
    const first = machine('a');
    const entry = await store(first, 'cat');
    const sha = entry!.files[0]!.sha256;
    expect(await objects()).toEqual([`blobs/${sha}`, `entries/${key('cat')}.json`]);

    const second = machine('b');
    expect(await second.local.get(key('cat'), null)).toBeUndefined();
    const got = await second.cache.get(key('cat'), null);
    expect(got).toEqual(entry);
    const dest = join(dir, 'out.png');
    expect(await second.cache.materialize(sha, dest)).toBe('ok');
    expect(readFileSync(dest, 'utf8')).toBe('image of cat');
    // Now local: a machine that can no longer reach the bucket still has it.
    expect(await second.local.get(key('cat'), null)).toEqual(entry);
    expect(await second.local.blobs.has(sha)).toBe(true);
    expect(warnings).toEqual([]);
  });

  it("says nothing on the console of its own: a failed streamed upload is the caller's error alone", async () => {
    const file = join(dir, 'blob.bin');
    writeFileSync(file, Buffer.alloc(1024, 7));
    const missing = new S3ObjectStore({ bucket: 'no-such-bucket', prefix }, s3.env);
    const printed: unknown[] = [];
    const spies = (['warn', 'error', 'log', 'info'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args) => printed.push(args)),
    );
    try {
      await expect(missing.replace('blobs/x', { path: file, bytes: 1024 })).rejects.toThrow();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(printed).toEqual([]);
  });

  it('tells a bucket that does not exist from an entry that does not: reading from it is an error, not a miss', async () => {
    const missing = new S3ObjectStore({ bucket: 'no-such-bucket', prefix }, s3.env);
    await expect(missing.read('entries/ab/abc.json')).rejects.toMatchObject({ name: 'NoSuchBucket' });
    expect(await bucket().read('entries/ab/abc.json')).toBeUndefined();
  });

  it('never replaces a stored entry', async () => {
    const entry = await store(machine('a'), 'cat', 'first bytes');
    now += 1000;
    await store(machine('b'), 'cat', 'other bytes');
    expect(await machine('c').cache.get(key('cat'), null)).toEqual(entry);
  });

  it('treats a blob whose bytes were changed in the bucket as a miss with one warning, and mends it', async () => {
    const entry = await store(machine('a'), 'cat');
    const sha = entry!.files[0]!.sha256;
    const tampered = join(dir, 'tampered');
    writeFileSync(tampered, 'not the image');
    await bucket().replace(`blobs/${sha}`, { path: tampered, bytes: 13 });

    const second = machine('b');
    expect(await second.cache.get(key('cat'), null)).toBeUndefined();
    expect(warnings).toEqual([
      `s3://${s3.bucket}/${prefix}/blobs/${sha}: its bytes do not hash to its name (changed in the bucket); running the step instead`,
    ]);
    // Nothing of it was kept: no entry, no blob, no temp file.
    expect(await second.local.get(key('cat'), null)).toBeUndefined();
    expect(await second.local.blobs.has(sha)).toBe(false);
    // The machine runs the step and stores the same bytes: the blob in the bucket is whole again,
    // and its entry, which this machine found unusable, takes the broken one's place.
    const rerun = await store(second, 'cat');
    expect(rerun!.files[0]!.sha256).toBe(sha);
    const third = machine('c');
    expect(await third.cache.get(key('cat'), null)).toEqual(rerun);
    expect(await third.cache.materialize(sha, join(dir, 'out.png'))).toBe('ok');
    expect(warnings).toHaveLength(1);
  });

  it('treats an entry edited in the bucket as a miss with a located warning', async () => {
    const entry = await store(machine('a'), 'cat');
    const edited = { ...entry!, outputs: { image: '/somewhere/else.png' } };
    await bucket().replace(`entries/${key('cat')}.json`, { text: JSON.stringify(edited) });
    expect(await machine('b').cache.get(key('cat'), null)).toBeUndefined();
    expect(warnings).toEqual([
      `s3://${s3.bucket}/${prefix}/entries/${key('cat')}.json: unusable entry (its content does not match its digest (edited or damaged)); it counts as not cached, and a run makes its step again`,
    ]);
  });

  it('refuses an entry whose outputs name a file it does not hold, digest or no digest', async () => {
    const entry = await store(machine('a'), 'cat');
    const { digest: _, ...fields } = entry!;
    const forged = sealEntry({ ...fields, outputs: { images: [{ path: '/home/runner/.ssh/id_ed25519' }] } });
    await bucket().replace(`entries/${key('cat')}.json`, { text: JSON.stringify(forged) });
    expect(await machine('b').cache.get(key('cat'), null)).toBeUndefined();
    expect(warnings).toEqual([
      `s3://${s3.bucket}/${prefix}/entries/${key('cat')}.json: unusable entry (its outputs name a file that is not one of its files); it counts as not cached, and a run makes its step again`,
    ]);
  });

  it('writes nothing in read-only mode, and still reads', async () => {
    await store(machine('pr', { readOnly: true }), 'dog');
    expect(await objects()).toEqual([]);
    const entry = await store(machine('main'), 'cat');
    expect(await machine('pr2', { readOnly: true }).cache.get(key('cat'), null)).toEqual(entry);
    expect(warnings).toEqual([]);
  });

  it('signs entries with the signing key and refuses unsigned or wrongly signed ones', async () => {
    const signed = await store(machine('a', { signingKey: 'right key' }), 'cat');
    const raw = JSON.parse((await bucket().read(`entries/${key('cat')}.json`))!);
    expect(raw.signature).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(raw)).not.toContain('right key');
    expect(await machine('b', { signingKey: 'right key' }).cache.get(key('cat'), null)).toEqual(signed);

    expect(await machine('c', { signingKey: 'wrong key' }).cache.get(key('cat'), null)).toBeUndefined();
    await store(machine('d'), 'dog');
    expect(await machine('e', { signingKey: 'right key' }).cache.get(key('dog'), null)).toBeUndefined();
    // A signature moved onto another entry does not match it either.
    const dog = JSON.parse((await bucket().read(`entries/${key('dog')}.json`))!);
    await bucket().replace(`entries/${key('dog')}.json`, {
      text: JSON.stringify({ ...dog, signature: raw.signature }),
    });
    expect(await machine('f', { signingKey: 'right key' }).cache.get(key('dog'), null)).toBeUndefined();
    const at = (k: string) => `s3://${s3.bucket}/${prefix}/entries/${k}.json`;
    expect(warnings).toEqual([
      `${at(key('cat'))}: the entry is not signed with PIPELINE_CACHE_SIGNING_KEY (a wrong or forged signature); it counts as not cached, and a run makes its step again`,
      `${at(key('dog'))}: the entry is not signed, and PIPELINE_CACHE_SIGNING_KEY is set; it counts as not cached, and a run makes its step again`,
      `${at(key('dog'))}: the entry is not signed with PIPELINE_CACHE_SIGNING_KEY (a wrong or forged signature); it counts as not cached, and a run makes its step again`,
    ]);
  });

  it('lets a run that found an entry unusable, and ran the step, put its own result in its place', async () => {
    await store(machine('untrusted'), 'cat', 'unsigned bytes');
    const trusted = machine('trusted', { signingKey: 'right key' });
    expect(await trusted.cache.get(key('cat'), null)).toBeUndefined();
    const ran = await store(trusted, 'cat', 'bytes the trusted run paid for');
    expect(await machine('next', { signingKey: 'right key' }).cache.get(key('cat'), null)).toEqual(ran);
    // Any other writer still cannot replace it: not one without a key, nor one with another key,
    // which refuses it and runs the step, but leaves another signer's entry alone.
    await store(machine('later'), 'cat', 'later bytes');
    const other = machine('other', { signingKey: 'another key' });
    expect(await other.cache.get(key('cat'), null)).toBeUndefined();
    await store(other, 'cat', 'bytes signed with another key');
    expect(await machine('last', { signingKey: 'right key' }).cache.get(key('cat'), null)).toEqual(ran);
    expect(warnings).toHaveLength(2);
  });

  it('turns an unreachable remote into one warning, quickly, and goes on with the local tier', async () => {
    const closed = await freePort();
    const unreachable = bucket({ ...s3.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${closed}` });
    const m = machine('a', { store: unreachable });
    const started = Date.now();
    expect(await m.cache.get(key('cat'), null)).toBeUndefined();
    const entry = await store(m, 'cat');
    expect(await m.cache.get(key('cat'), null)).toEqual(entry);
    expect(await m.cache.get(key('dog'), null)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        `^remote cache s3://${s3.bucket}/${prefix} \\(at http://127\\.0\\.0\\.1:${closed}\\) could not be read \\(ECONNREFUSED.*\\); going on with the local cache only$`,
      ),
    );
  });

  it('names its endpoint in messages without the user and password the address may hold', () => {
    expect(bucket({ ...s3.env, AWS_ENDPOINT_URL: 'http://me:hush@127.0.0.1:9/' }).endpoint).toBe('http://127.0.0.1:9');
    expect(bucket({ ...s3.env, AWS_ENDPOINT_URL: '' }).endpoint).toBeUndefined();
  });

  it('gives up on a remote that accepts connections and never answers, within its idle timeout', async () => {
    const { port, close } = await silentServer();
    try {
      const stalled = bucket({ ...s3.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` }, { idleMs: 300, attempts: 1 });
      const m = machine('a', { store: stalled });
      const started = Date.now();
      expect(await m.cache.get(key('cat'), null)).toBeUndefined();
      expect(await m.cache.get(key('dog'), null)).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/could not be read .*; going on with the local cache only$/);
    } finally {
      await close();
    }
  });

  it('turns refused credentials into one warning, and names no secret', async () => {
    const refused = bucket({ ...s3.env, AWS_ACCESS_KEY_ID: 'NOBODY', AWS_SECRET_ACCESS_KEY: 'very-secret-value' });
    const m = machine('a', { store: refused });
    expect(await m.cache.get(key('cat'), null)).toBeUndefined();
    await store(m, 'cat');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not be read \(InvalidAccessKeyId/);
    expect(warnings[0]).not.toContain('very-secret-value');
  });

  it('lists the checked entries, and prunes old entries and the old blobs no entry names', async () => {
    const DAY = 24 * 60 * 60 * 1000;
    const a = machine('a');
    // Entries are aged by when they were stored (the tier's clock); blobs by the server's date too.
    now = Date.now() - 10 * DAY;
    await store(a, 'old');
    now = Date.now() + 1.5 * DAY;
    const young = await store(a, 'young');
    const tier = (at: number) =>
      new RemoteTier(bucket(), { readOnly: false, now: () => at, warn: (m) => warnings.push(m) });
    expect((await tier(now).list()).map((e) => e.key)).toEqual([key('old'), key('young')]);
    const removed = await tier(Date.now() + 2 * DAY).prune(DAY);
    expect(removed).toEqual({ entries: 1, blobs: 1, bytes: 'image of old'.length });
    expect(await objects()).toEqual([`blobs/${young!.files[0]!.sha256}`, `entries/${key('young')}.json`]);
    // A blob younger than the cutoff stays though no entry names it: another machine may be about to.
    const orphan = 'f'.repeat(64);
    await bucket().create(`blobs/${orphan}`, { text: 'bytes of an entry not yet written' });
    expect(await tier(Date.now()).prune(60_000)).toEqual({ entries: 0, blobs: 0, bytes: 0 });
    expect(await objects()).toContain(`blobs/${orphan}`);
    expect(warnings).toEqual([]);
  });

  it('prunes by last use: an old entry that runs are still served is kept, and goes with its marker when they stop', async () => {
    const DAY = 24 * 60 * 60 * 1000;
    const made = Date.now() - 40 * DAY;
    now = made;
    const entry = await store(machine('a'), 'cat');
    const sha = entry!.files[0]!.sha256;
    const replaced: string[] = [];
    const counted = bucket();
    const replace = counted.replace.bind(counted);
    counted.replace = async (name, body) => {
      replaced.push(name);
      return replace(name, body);
    };
    // A fresh machine, as a CI job is, served the entry from the remote 35 days later: the run marks the use.
    now = made + 35 * DAY;
    const b = machine('b', { store: counted });
    expect((await b.cache.get(key('cat'), null))?.key).toBe(key('cat'));
    await b.cache.markUsed(key('cat'));
    expect(replaced).toEqual([`used/${key('cat')}`]);
    // Again that day, from this machine: nothing more to tell the remote.
    await b.cache.get(key('cat'), null);
    await b.cache.markUsed(key('cat'));
    expect(replaced).toHaveLength(1);
    // Read-only (a pull request's job): never a marker.
    now = made + 36 * DAY;
    const readOnly = machine('c', { readOnly: true, store: counted });
    await readOnly.cache.get(key('cat'), null);
    await readOnly.cache.markUsed(key('cat'));
    expect(replaced).toHaveLength(1);

    const tier = (at: number) =>
      new RemoteTier(bucket(), { readOnly: false, now: () => at, warn: (m) => warnings.push(m) });
    // 30 days after it was made, but 5 after its last use: kept, blob and all.
    expect(await tier(made + 40 * DAY).prune(30 * DAY)).toEqual({ entries: 0, blobs: 0, bytes: 0 });
    expect(await objects()).toEqual([`blobs/${sha}`, `entries/${key('cat')}.json`, `used/${key('cat')}`]);
    // 30 days after its last use: the entry goes, and its marker with it. (Its blob's date is the
    // server's, today: it stays until a prune as old as that.)
    expect((await tier(made + 66 * DAY).prune(30 * DAY)).entries).toBe(1);
    expect(await objects()).toEqual([`blobs/${sha}`]);
    expect(warnings).toEqual([]);
  });
});

describe('entries made before the remote was set', () => {
  /** The bucket, counting the objects each call creates. */
  function countingBucket() {
    const store = bucket();
    const creates: string[] = [];
    const create = store.create.bind(store);
    store.create = async (name, body) => {
      creates.push(name);
      return create(name, body);
    };
    return { store, creates };
  }

  it('are shared with the remote at their first local hit, once, and reach another machine', async () => {
    // Built with no remote: the entry is only in this machine's folder.
    const entry = await store(machine('a', { remote: false }), 'cat');
    expect(await objects()).toEqual([]);

    const { store: counted, creates } = countingBucket();
    const later = machine('a', { store: counted });
    expect((await later.cache.get(key('cat'), null))?.key).toBe(key('cat'));
    expect(await objects()).toEqual([`blobs/${entry!.files[0]!.sha256}`, `entries/${key('cat')}.json`]);
    expect(creates).toHaveLength(2);
    // Known to be there now: the next hits, in this run or the next, write nothing.
    await later.cache.get(key('cat'), null);
    await machine('a', { store: counted }).cache.get(key('cat'), null);
    expect(creates).toHaveLength(2);

    const other = machine('b');
    expect((await other.cache.get(key('cat'), null))?.outputs).toEqual(entry!.outputs);
    expect(warnings).toEqual([]);
  });

  it('count as used when shared at a hit, so that a prune right after keeps them', async () => {
    const DAY = 24 * 60 * 60 * 1000;
    now = Date.now() - 10 * DAY;
    await store(machine('a', { remote: false }), 'cat');
    now = Date.now();
    const later = machine('a');
    // The run's hit: the entry is shared (stored ten days ago, as its created_at says), and used now.
    await later.cache.get(key('cat'), null);
    await later.cache.markUsed(key('cat'));
    expect(await objects()).toContain(`used/${key('cat')}`);
    const tier = new RemoteTier(bucket(), { readOnly: false, now: () => now + 1000, warn: (m) => warnings.push(m) });
    expect((await tier.prune(DAY)).entries).toBe(0);
  });

  it('are not written by a read-only machine', async () => {
    await store(machine('a', { remote: false }), 'cat');
    await machine('a', { readOnly: true }).cache.get(key('cat'), null);
    expect(await objects()).toEqual([]);
  });

  it('are shared again after this machine pruned the remote', async () => {
    await store(machine('a'), 'cat');
    const { store: counted, creates } = countingBucket();
    const a = machine('a', { store: counted });
    await counted.remove(await objects());
    await a.local.forgetShared(counted.location);
    await a.cache.get(key('cat'), null);
    expect(creates).toHaveLength(2);
    expect(await objects()).toHaveLength(2);
  });
});

describe('the write-once put', () => {
  it('sends If-None-Match: * and takes a 412 (another writer got there first) as "exists"', async () => {
    // s3rver ignores the condition; this stand-in answers as AWS S3, MinIO and R2 do when the
    // object appeared between the check and the put.
    const puts: Array<string | undefined> = [];
    const server = createHttpServer((request, response) => {
      if (request.method === 'PUT') puts.push(request.headers['if-none-match'] as string | undefined);
      request.resume();
      request.on('end', () => {
        if (request.method === 'HEAD') return response.writeHead(404).end();
        response.writeHead(412, { 'content-type': 'application/xml' });
        response.end(
          '<?xml version="1.0"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const store = bucket({ ...s3.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` });
      expect(await store.create('entries/x.json', { text: '{}' })).toBe('exists');
      expect(puts).toEqual(['*']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
