import { fileTypeFromBuffer } from 'file-type';
import { describe, expect, it } from 'vitest';
import { commonImageType } from '../../src/gateway/download.js';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** A PNG chunk: its length, type and data, and a CRC nobody checks here. */
const chunk = (type: string, data: number[]) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  return Buffer.concat([length, Buffer.from(type, 'latin1'), Buffer.from(data), Buffer.alloc(4)]);
};
const ihdr = chunk(
  'IHDR',
  Array.from({ length: 13 }, () => 1),
);
const png = (...chunks: Buffer[]) => Buffer.concat([Buffer.from(SIGNATURE), ...chunks]);

const samples: Record<string, Buffer> = {
  png: png(ihdr, chunk('tEXt', [1, 2, 3]), chunk('IDAT', [0, 0])),
  apng: png(ihdr, chunk('acTL', [0, 0, 0, 1, 0, 0, 0, 0]), chunk('IDAT', [0, 0])),
  'png with a bad header': png(chunk('IHDR', [1, 2]), chunk('IDAT', [0])),
  'png cut before its data': png(
    ihdr,
    chunk(
      'tEXt',
      Array.from({ length: 64 }, () => 7),
    ),
  ).subarray(0, 40),
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
  'jpeg-ls': Buffer.from([0xff, 0xd8, 0xff, 0xf7, 0, 11, 8, 0, 1, 0, 1, 1, 1, 0x11, 0, 0xff, 0xda]),
  text: Buffer.from('not an image at all'),
};

describe('the type of a PNG or JPEG read from its first bytes', () => {
  it.each(Object.entries(samples))(
    '%s: what file-type answers, or undefined to let it decide',
    async (_name, bytes) => {
      const fast = commonImageType(bytes);
      if (fast) expect(fast.mime).toBe((await fileTypeFromBuffer(bytes))?.mime);
    },
  );

  it('knows the common cases without file-type', () => {
    expect(commonImageType(samples.png!)).toEqual({ mime: 'image/png' });
    expect(commonImageType(samples.apng!)).toEqual({ mime: 'image/apng' });
    expect(commonImageType(samples.jpeg!)).toEqual({ mime: 'image/jpeg' });
    expect(commonImageType(samples['jpeg-ls']!)).toBeUndefined();
    expect(commonImageType(samples['png with a bad header']!)).toBeUndefined();
    expect(commonImageType(samples['png cut before its data']!)).toBeUndefined();
  });
});
