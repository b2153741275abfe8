/** A recipe of `count` steps named `name`: chains of search → llm → image, each step referring to the one before. */
export function generateRecipe(count: number, name?: string): string;
