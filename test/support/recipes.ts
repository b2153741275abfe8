/** The text-to-image model the small test recipes use. */
export const IMAGE_SLUG = 'vendor-a/vendor-a-v3-t2i';

/** Twelve square pictures, three tasks at once: long enough to stop a run mid-way. */
export function twelveImages(prompt = 'picture ${{ item }}'): string {
  return `version: 1
name: twelve
settings: { concurrency: 3 }
steps:
  image:
    uses: ${IMAGE_SLUG}
    for_each: ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]
    with: { prompt: "${prompt}", aspect_ratio: "1:1" }
`;
}

/** One square picture per element of the `prompts` input, eight tasks at once. */
export function imagePerPrompt(name: string): string {
  return `version: 1
name: ${name}
inputs:
  prompts: { type: array }
settings: { concurrency: 8 }
steps:
  image:
    uses: ${IMAGE_SLUG}
    for_each: \${{ inputs.prompts }}
    with: { prompt: "\${{ item }}", aspect_ratio: "1:1" }
`;
}

/** One square picture per batch row (`--batch` with a `prompt` column), two tasks at once. */
export function tilePerRow(name: string): string {
  return `version: 1
name: ${name}
inputs:
  prompt: { type: string }
settings: { concurrency: 2 }
steps:
  tile:
    uses: ${IMAGE_SLUG}
    with: { prompt: "\${{ inputs.prompt }}", aspect_ratio: "1:1" }
`;
}
