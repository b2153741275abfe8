/** An object as a listing shows it. */
export interface ListedObject {
  /** Its name under the store's prefix: `entries/<key>.json`, `blobs/<sha256>`. */
  name: string;
  /** When it was written, in milliseconds since the epoch. */
  modifiedAt: number;
  bytes: number;
}

/** The bytes of an object to write: in memory (an entry) or in a file (a blob, perhaps large). */
export type ObjectBody = { text: string } | { path: string; bytes: number };

/**
 * A bucket of named objects under one prefix: the remote cache's only I/O edge, so that the tier's
 * checks (hashes, digests, signatures, write-once) are the same over any store. Every method
 * throws on a failure other than "no such object", and the tier turns that into one warning.
 */
export interface ObjectStore {
  /** Where it is, for people: `s3://bucket/prefix`. Holds no credential. */
  readonly location: string;
  /**
   * Where its requests go when that is not the provider's own address (AWS_ENDPOINT_URL: MinIO,
   * R2…), for messages about a failure to reach it. Holds no credential.
   */
  readonly endpoint?: string | undefined;
  /** The object's text, or undefined when there is none. */
  read(name: string): Promise<string | undefined>;
  /** Writes the object's bytes to `path`; false when there is no such object. */
  download(name: string, path: string): Promise<boolean>;
  /**
   * Writes the object unless one of that name exists: `stored`, or `exists` and nothing written.
   * Write-once is what keeps a stored entry from being replaced by a later writer.
   */
  create(name: string, body: ObjectBody): Promise<'stored' | 'exists'>;
  /** Writes the object over any of that name: only for a blob whose stored bytes are known damaged. */
  replace(name: string, body: ObjectBody): Promise<void>;
  /** Every object whose name starts with `prefix`. */
  list(prefix: string): Promise<ListedObject[]>;
  remove(names: string[]): Promise<void>;
}
