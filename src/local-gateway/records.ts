import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { removeLeftoverTemps, tempName } from '../files/temp-files.js';

/**
 * Named JSON records the gateway keeps between processes: its tasks, uploads and result files.
 * A gateway with a data folder of its own choosing keeps them on disk, so that a later process
 * (a `pipeline resume --local`, a restarted `gateway serve --data-dir`) finds them again; one
 * with a temporary folder keeps nothing.
 */
export interface Records<T> {
  write(name: string, value: T): Promise<void>;
  /** The record, or undefined when it does not exist or cannot be read whole. */
  read(name: string): Promise<T | undefined>;
  remove(name: string): Promise<void>;
  /** Every readable record with its name, in no particular order. */
  readAll(): Promise<Array<[string, T]>>;
  /** Removes what a killed process left half-written; called once, at the gateway's start. */
  removeLeftovers(): void;
}

/** Names are ids and tokens the gateway made; anything else is refused before it reaches a path. */
const RECORD_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** One file per record; each is written to a temporary name and renamed, so a kill never leaves half of one. */
export class DiskRecords<T> implements Records<T> {
  private ready: Promise<unknown> | undefined;

  constructor(private readonly dir: string) {}

  async write(name: string, value: T): Promise<void> {
    const path = this.pathOf(name);
    this.ready ??= mkdir(this.dir, { recursive: true });
    await this.ready;
    const temporary = tempName(dirname(path), basename(path));
    await writeFile(temporary, JSON.stringify(value));
    await rename(temporary, path);
  }

  async read(name: string): Promise<T | undefined> {
    if (!RECORD_NAME.test(name)) return undefined;
    try {
      return JSON.parse(await readFile(this.pathOf(name), 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  async remove(name: string): Promise<void> {
    await rm(this.pathOf(name), { force: true });
  }

  async readAll(): Promise<Array<[string, T]>> {
    let entries: string[];
    try {
      entries = await readdir(this.dir);
    } catch {
      return [];
    }
    const names = entries.filter((entry) => entry.endsWith('.json')).map((entry) => entry.slice(0, -'.json'.length));
    const records = await Promise.all(names.map(async (name) => [name, await this.read(name)] as const));
    return records.filter((entry): entry is [string, Awaited<T>] => entry[1] !== undefined);
  }

  removeLeftovers(): void {
    removeLeftoverTemps(this.dir);
  }

  private pathOf(name: string): string {
    if (!RECORD_NAME.test(name)) throw new Error(`Internal error: ${JSON.stringify(name)} is not a record name`);
    return join(this.dir, `${name}.json`);
  }
}

/** Keeps nothing: the state of a gateway whose data folder is removed when it closes. */
export class NoRecords<T> implements Records<T> {
  async write(): Promise<void> {}
  async read(): Promise<T | undefined> {
    return undefined;
  }
  async remove(): Promise<void> {}
  async readAll(): Promise<Array<[string, T]>> {
    return [];
  }
  removeLeftovers(): void {}
}
