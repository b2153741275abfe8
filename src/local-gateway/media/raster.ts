/** An RGB picture in memory: 3 bytes a pixel, rows top to bottom. */
export interface Raster {
  width: number;
  height: number;
  data: Buffer;
}

export function createRaster(width: number, height: number): Raster {
  return { width, height, data: Buffer.alloc(width * height * 3) };
}

type Rgb = readonly [number, number, number];

/** HSL (hue in degrees, saturation and lightness 0..1) to 8-bit RGB. */
export function hsl(hue: number, saturation: number, lightness: number): Rgb {
  const c = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const h = (((hue % 360) + 360) % 360) / 60;
  const x = c * (1 - Math.abs((h % 2) - 1));
  const [r, g, b] =
    h < 1 ? [c, x, 0] : h < 2 ? [x, c, 0] : h < 3 ? [0, c, x] : h < 4 ? [0, x, c] : h < 5 ? [x, 0, c] : [c, 0, x];
  const m = lightness - c / 2;
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}

/**
 * Paints a small scene whose colours and layout follow `variant`: a sky gradient, a sun
 * and rolling ground. Cheap enough to render at 2048 px, varied enough to tell outputs apart.
 * The horizon depends on the column alone and the sky's colour on the row alone, so each is
 * worked out once, not per pixel: the local gateway paints every new picture size and variant a
 * test asks for, and per pixel this was a large share of the test suite's CPU.
 */
export function paintScene(raster: Raster, variant: number): void {
  const { width, height, data } = raster;
  const hue = (variant * 47) % 360;
  const skyTop = hsl(hue, 0.55, 0.35);
  const skyBottom = hsl(hue + 40, 0.6, 0.75);
  const ground = hsl(hue + 160, 0.45, 0.35);
  const sun = hsl(hue + 20, 0.9, 0.7);
  const sunX = width * (0.2 + ((variant >> 3) % 7) * 0.1);
  const sunY = height * 0.3;
  const sunR = Math.min(width, height) * 0.12;
  const waves = 1 + (variant % 4);
  const horizon = new Float64Array(width);
  for (let x = 0; x < width; x++)
    horizon[x] = height * (0.65 + 0.06 * Math.sin((x / width) * Math.PI * waves + variant));
  for (let y = 0; y < height; y++) {
    const t = y / height;
    const sky0 = lerp(skyTop[0], skyBottom[0], t);
    const sky1 = lerp(skyTop[1], skyBottom[1], t);
    const sky2 = lerp(skyTop[2], skyBottom[2], t);
    const sunDy = (y - sunY) ** 2;
    let i = y * width * 3;
    for (let x = 0; x < width; x++, i += 3) {
      if (y > horizon[x]!) {
        data[i] = ground[0];
        data[i + 1] = ground[1];
        data[i + 2] = ground[2];
      } else if ((x - sunX) ** 2 + sunDy < sunR * sunR) {
        data[i] = sun[0];
        data[i + 1] = sun[1];
        data[i + 2] = sun[2];
      } else {
        data[i] = sky0;
        data[i + 1] = sky1;
        data[i + 2] = sky2;
      }
    }
  }
}

function lerp(a: number, b: number, t: number): number {
  return Math.round(a + (b - a) * t);
}
