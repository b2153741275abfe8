import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WIRE_FILE, wireTypes } from '../support/wire-types.mjs';

describe('the wire types', () => {
  it('are what schemas/tools/ generates: the client and the local gateway type one shape (npm run wire-types)', async () => {
    expect(readFileSync(WIRE_FILE, 'utf8')).toBe(await wireTypes());
  });
});
