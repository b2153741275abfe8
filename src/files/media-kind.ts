import { extname } from 'node:path';

/** What a media file is, by its name: what a model's media field takes, and what the report shows. */
export type MediaKind = 'image' | 'video' | 'audio' | 'other';

const MEDIA: Record<string, MediaKind> = {
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.webp': 'image',
  '.gif': 'image',
  '.avif': 'image',
  '.bmp': 'image',
  '.tif': 'image',
  '.tiff': 'image',
  '.mp4': 'video',
  '.webm': 'video',
  '.mov': 'video',
  '.mp3': 'audio',
  '.wav': 'audio',
  '.ogg': 'audio',
  '.m4a': 'audio',
};

/** Names that are surely no media file: text a recipe's folder holds beside its assets. */
const NOT_MEDIA = new Set(['.json', '.jsonl', '.txt', '.csv', '.yaml', '.yml', '.md', '.html', '.pdf']);

export const mediaKind = (path: string): MediaKind => MEDIA[extname(path).toLowerCase()] ?? 'other';

/**
 * Why a local file cannot go to a media field that takes `wanted` (image, video or audio; any other
 * takes every kind), by its name: another kind of media, or a text file. Nothing when its name says nothing (no extension, or
 * one not listed): the gateway judges its bytes.
 */
export function wrongMediaKind(path: string, wanted: string): string | undefined {
  // `upload`'s path takes any media.
  if (wanted !== 'image' && wanted !== 'video' && wanted !== 'audio') return undefined;
  const extension = extname(path).toLowerCase();
  const kind = MEDIA[extension];
  if (kind !== undefined && kind !== wanted)
    return `file ${path} is ${withArticle(kind)} (${extension}); this field takes ${withArticle(wanted)}`;
  if (NOT_MEDIA.has(extension))
    return `file ${path} is no media file (${extension}); this field takes ${withArticle(wanted)}`;
  return undefined;
}

/** Whether a sniffed type (`image/png`; null: none known) is one a media upload takes. */
export const isMediaType = (mime: string | null): mime is string => /^(image|video|audio)\//.test(mime ?? '');

/**
 * Why a local file cannot go to a media field that takes `wanted`, by its bytes' sniffed type
 * (`null`: no known type): no media at all, or another kind than the field takes. The upload
 * refuses the same files, but only when the run gets there, after other steps may have spent.
 */
export function wrongMediaBytes(path: string, mime: string | null, wanted: string): string | undefined {
  const oneKind = wanted === 'image' || wanted === 'video' || wanted === 'audio';
  const takes = oneKind ? withArticle(wanted) : 'an image, a video or audio';
  if (!isMediaType(mime))
    return `file ${path} is not an image, video or audio file (its bytes are ${mime ?? 'of no known media type'}); this field takes ${takes}`;
  const kind = mime.split('/')[0]!;
  if (oneKind && kind !== wanted)
    return `file ${path} is ${withArticle(kind)} (its bytes are ${mime}); this field takes ${takes}`;
  return undefined;
}

const withArticle = (kind: string) => `${kind === 'image' ? 'an' : 'a'} ${kind}`;
