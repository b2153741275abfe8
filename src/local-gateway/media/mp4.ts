/** What the gateway reads of an MP4 file: enough to report a resource and to refuse what is not a video. */
export interface Mp4Info {
  durationSeconds: number;
  width: number;
  height: number;
  hasAudio: boolean;
}

interface Box {
  type: string;
  start: number; // first byte of the payload
  end: number;
}

function* boxes(bytes: Buffer, start: number, end: number): Generator<Box> {
  let at = start;
  while (at + 8 <= end) {
    let size = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) return;
      size = Number(bytes.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header || at + size > end) return;
    yield { type, start: at + header, end: at + size };
    at += size;
  }
}

const child = (bytes: Buffer, parent: Box, type: string) =>
  [...boxes(bytes, parent.start, parent.end)].find((b) => b.type === type);

/** Parses the ISO-BMFF boxes of an MP4; undefined when the bytes are not a well-formed MP4 with a movie header. */
export function readMp4Info(bytes: Buffer): Mp4Info | undefined {
  const top = [...boxes(bytes, 0, bytes.length)];
  if (top[0]?.type !== 'ftyp') return undefined;
  const moov = top.find((b) => b.type === 'moov');
  if (!moov) return undefined;
  const mvhd = child(bytes, moov, 'mvhd');
  if (!mvhd) return undefined;
  const version = bytes[mvhd.start];
  const timescale = version === 1 ? bytes.readUInt32BE(mvhd.start + 20) : bytes.readUInt32BE(mvhd.start + 12);
  const duration = version === 1 ? Number(bytes.readBigUInt64BE(mvhd.start + 24)) : bytes.readUInt32BE(mvhd.start + 16);
  let width = 0;
  let height = 0;
  let hasAudio = false;
  for (const trak of boxes(bytes, moov.start, moov.end)) {
    if (trak.type !== 'trak') continue;
    const mdia = child(bytes, trak, 'mdia');
    const hdlr = mdia && child(bytes, mdia, 'hdlr');
    const handler = hdlr ? bytes.toString('latin1', hdlr.start + 8, hdlr.start + 12) : '';
    if (handler === 'soun') hasAudio = true;
    const tkhd = child(bytes, trak, 'tkhd');
    if (handler === 'vide' && tkhd && width === 0) {
      width = bytes.readUInt32BE(tkhd.end - 8) >>> 16;
      height = bytes.readUInt32BE(tkhd.end - 4) >>> 16;
    }
  }
  if (timescale === 0) return undefined;
  return { durationSeconds: duration / timescale, width, height, hasAudio };
}
