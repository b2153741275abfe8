/** The file the wire types are generated into, relative to the repository. */
export const WIRE_FILE: string;
/** The text that file should have, generated from schemas/tools/ and formatted. */
export function wireTypes(): Promise<string>;
