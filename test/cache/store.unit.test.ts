import { spawnSync } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/cache/canonical-json.js';
import { cacheKey } from '../../src/cache/key.js';
import { CacheStore } from '../../src/cache/store.js';

let dir: string;
let now = 1_000_000;
let warnings: string[] = [];
const open = () => {
  const store = CacheStore.open(join(dir, 'cache'), { now: () => now, warn: (m) => warnings.push(m) });
  if (!store.ok) throw new Error(store.error);
  return store.value;
};
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const saved = { tasks: 1, requests: 3 };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cache-store-'));
  now = 1_000_000;
  warnings = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the cache key', () => {
  it('is the same for the same request whatever the key order, and differs when the input does', () => {
    const a = cacheKey({ action: 'model v/m', input: { prompt: 'x', size: 2 } });
    const b = cacheKey({ action: 'model v/m', input: { size: 2, prompt: 'x' } });
    expect(a).toBe(b);
    expect(cacheKey({ action: 'model v/m', input: { prompt: 'y', size: 2 } })).not.toBe(a);
    expect(cacheKey({ action: 'model v/other', input: { prompt: 'x', size: 2 } })).not.toBe(a);
    expect(cacheKey({ action: 'model v/m', input: { prompt: 'x', size: 2 }, extra: 'v2' })).not.toBe(a);
  });

  it('writes canonical JSON: sorted keys at every level, undefined members left out', () => {
    expect(canonicalJson({ b: [{ d: 1, c: undefined, a: 'x' }], a: null })).toBe('{"a":null,"b":[{"a":"x","d":1}]}');
  });
});

describe('the cache store', () => {
  it('gives back what was put, with its files stored once per content', async () => {
    const store = open();
    const one = file('one.png', 'same bytes');
    const two = file('two.png', 'same bytes');
    const key = cacheKey({ action: 'a', input: 1 });
    await store.put(
      key,
      'a',
      { images: [{ path: one }, { path: two }] },
      [
        { path: one, url: 'http://x/1', expires_at: 5 },
        { path: two, url: null, expires_at: null },
      ],
      saved,
    );
    const entry = await store.get(key, null);
    expect(entry?.outputs).toEqual({ images: [{ path: one }, { path: two }] });
    expect(entry?.files.map((f) => f.sha256)).toEqual([entry?.files[0]?.sha256, entry?.files[0]?.sha256]);
    expect(readdirSync(join(dir, 'cache', 'blobs', entry!.files[0]!.sha256.slice(0, 2)))).toHaveLength(1);
    const dest = join(dir, 'run', 'copy.png');
    expect(await store.blobs.materialize(entry!.files[0]!.sha256, dest)).toBe('ok');
    expect(readFileSync(dest, 'utf8')).toBe('same bytes');
  });

  it('treats a truncated entry as a miss with a warning', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 2 });
    await store.put(key, 'a', { text: 'hello' }, [], saved);
    const path = join(dir, 'cache', 'entries', key.slice(0, 2), `${key}.json`);
    truncateSync(path, Math.floor(readFileSync(path).length / 2));
    expect(await store.get(key, null)).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('not whole JSON')]);
  });

  it('treats an entry of the wrong shape, or stored under another key, as a miss', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 3 });
    const path = join(dir, 'cache', 'entries', key.slice(0, 2), `${key}.json`);
    await store.put(key, 'a', { text: 'hello' }, [], saved);
    const entry = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...entry, key: 'f'.repeat(64) }));
    expect(await store.get(key, null)).toBeUndefined();
    writeFileSync(path, JSON.stringify({ ...entry, files: [{ sha256: 'nope' }] }));
    expect(await store.get(key, null)).toBeUndefined();
    expect(warnings).toHaveLength(2);
  });

  it('refuses to materialize a blob whose bytes no longer match its hash', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 4 });
    const source = file('a.png', 'original');
    await store.put(key, 'a', {}, [{ path: source, url: null, expires_at: null }], saved);
    const hash = (await store.get(key, null))!.files[0]!.sha256;
    writeFileSync(store.blobs.pathOf(hash), 'tampered');
    expect(await store.blobs.materialize(hash, join(dir, 'out.png'))).toBe('damaged');
  });

  it('gives each run its own copy: writing into one changes neither the blob nor another copy', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 'copies' });
    await store.put(key, 'a', {}, [{ path: file('src.png', 'the bytes'), url: null, expires_at: null }], saved);
    const hash = (await store.get(key, null))!.files[0]!.sha256;
    const [run2, run3] = [join(dir, 'run2', 'bg.png'), join(dir, 'run3', 'bg.png')];
    expect(await store.materialize(hash, run2)).toBe('ok');
    expect(await store.materialize(hash, run3)).toBe('ok');
    const blob = store.blobs.pathOf(hash);
    expect(new Set([run2, run3, blob].map((path) => statSync(path).ino)).size).toBe(3);
    expect(statSync(blob).nlink).toBe(1);
    writeFileSync(run3, 'edited!!!');
    expect(readFileSync(run2, 'utf8')).toBe('the bytes');
    expect(readFileSync(blob, 'utf8')).toBe('the bytes');
    expect(readdirSync(join(dir, 'run3'))).toEqual(['bg.png']);
  });

  it('repairs a blob damaged in place (same size) at the next put of its bytes', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 'repair' });
    const source = file('r.png', 'original');
    await store.put(key, 'a', {}, [{ path: source, url: null, expires_at: null }], saved);
    const hash = (await store.get(key, null))!.files[0]!.sha256;
    writeFileSync(store.blobs.pathOf(hash), 'origXnal');
    // Stored again (a run that paid for the same bytes): the damaged blob is written anew.
    await store.put(key, 'a', {}, [{ path: source, url: null, expires_at: null }], saved);
    expect(readFileSync(store.blobs.pathOf(hash), 'utf8')).toBe('original');
    // Served damaged, it is refused and removed, so that the next put stores it whole.
    writeFileSync(store.blobs.pathOf(hash), 'origXnal');
    const dest = join(dir, 'out', 'r.png');
    expect(await store.materialize(hash, dest)).toBe('damaged');
    expect(readdirSync(join(dir, 'out'))).toEqual([]);
    await store.put(key, 'a', {}, [{ path: source, url: null, expires_at: null }], saved);
    expect(await store.materialize(hash, dest)).toBe('ok');
    expect(readFileSync(dest, 'utf8')).toBe('original');
  });

  it('treats an entry edited into other valid JSON as a miss, by its digest', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 'edited' });
    await store.put(key, 'a', { text: 'paid for' }, [], saved);
    const path = join(dir, 'cache', 'entries', key.slice(0, 2), `${key}.json`);
    const entry = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...entry, outputs: { text: 'edited' } }));
    expect(await store.get(key, null)).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('does not match its digest')]);
    // Key order and spacing are not edits.
    writeFileSync(path, JSON.stringify(Object.fromEntries(Object.entries(entry).reverse()), null, 2));
    expect((await store.get(key, null))?.outputs).toEqual({ text: 'paid for' });
  });

  it("removes a killed writer's temp files when it opens, and keeps a live writer's", () => {
    now = Date.now();
    open();
    const tmp = join(dir, 'cache', 'tmp');
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const killed = join(tmp, `${'a'.repeat(64)}.${gone}.0123456789ab.tmp`);
    const live = join(tmp, `${'b'.repeat(64)}.${process.pid}.0123456789ab.tmp`);
    const abandoned = join(tmp, `${'c'.repeat(64)}.${process.pid}.ba9876543210.tmp`);
    for (const path of [killed, live, abandoned]) writeFileSync(path, 'half a blob');
    const twoDaysAgo = (now - 2 * 86_400_000) / 1000;
    utimesSync(abandoned, twoDaysAgo, twoDaysAgo);
    open();
    expect(readdirSync(tmp)).toEqual([live.slice(tmp.length + 1)]);
  });

  it('leaves one valid entry when two writers store one key at once', async () => {
    const key = cacheKey({ action: 'a', input: 5 });
    const writers = Array.from({ length: 8 }, (_, n) => {
      const source = file(`w${n}.png`, `writer ${n % 2}`);
      return open().put(key, 'a', { writer: n }, [{ path: source, url: null, expires_at: null }], saved);
    });
    await Promise.all(writers);
    const entry = await open().get(key, null);
    expect(entry).toBeDefined();
    expect(warnings).toEqual([]);
    const blob = readFileSync(open().blobs.pathOf(entry!.files[0]!.sha256), 'utf8');
    expect(blob).toBe(`writer ${(entry!.outputs as { writer: number }).writer % 2}`);
    expect(readdirSync(join(dir, 'cache', 'tmp'))).toEqual([]);
  });

  it('answers a miss for an entry older than the ttl, by the injected clock', async () => {
    const store = open();
    const key = cacheKey({ action: 'a', input: 6 });
    await store.put(key, 'a', { text: 'x' }, [], saved);
    now += 24 * 3600_000;
    expect(await store.get(key, 24 * 3600_000)).toBeDefined();
    now += 1;
    expect(await store.get(key, 24 * 3600_000)).toBeUndefined();
    expect(await store.get(key, null)).toBeDefined();
    expect(warnings).toEqual([]);
  });

  it('lists, prunes by age (with the blobs only old entries named) and clears', async () => {
    const store = open();
    const oldKey = cacheKey({ action: 'a', input: 'old' });
    const newKey = cacheKey({ action: 'a', input: 'new' });
    await store.put(oldKey, 'a', {}, [{ path: file('o.png', 'old'), url: null, expires_at: null }], saved);
    now += 40 * 86_400_000;
    await store.put(newKey, 'b', {}, [{ path: file('n.png', 'new'), url: null, expires_at: null }], saved);
    expect((await store.list()).map((e) => e.key)).toEqual([oldKey, newKey]);
    expect(await store.prune(30 * 86_400_000)).toEqual({ entries: 1, blobs: 1, bytes: 3 });
    expect((await store.list()).map((e) => e.key)).toEqual([newKey]);
    expect(await store.clear()).toEqual({ entries: 1 });
    expect(await store.list()).toEqual([]);
  });

  it('prunes by last use: an entry made long ago and used since stays, with its blob', async () => {
    const store = open();
    const usedKey = cacheKey({ action: 'a', input: 'used daily' });
    const idleKey = cacheKey({ action: 'a', input: 'idle' });
    await store.put(usedKey, 'a', {}, [{ path: file('u.png', 'use'), url: null, expires_at: null }], saved);
    await store.put(idleKey, 'a', {}, [{ path: file('i.png', 'idle'), url: null, expires_at: null }], saved);
    now += 40 * 86_400_000;
    // A run is served the first entry on day 40; the second is not used again.
    await store.markUsed(usedKey);
    now += 5 * 86_400_000;
    expect(await store.prune(30 * 86_400_000)).toEqual({ entries: 1, blobs: 1, bytes: 4 });
    expect((await store.list()).map((e) => e.key)).toEqual([usedKey]);
    // Its time of creation, which a ttl counts from, is unchanged by the use.
    expect((await store.get(usedKey, 30 * 86_400_000))?.key).toBeUndefined();
  });

  it('says once why a folder it cannot write to is no cache', () => {
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'a file, not a folder');
    const store = CacheStore.open(join(blocked, 'cache'), { now: () => now, warn: () => {} });
    expect(store.ok).toBe(false);
    if (!store.ok) expect(store.error).toMatch(/^cannot write to the cache folder .*blocked/);
  });
});
