/** A repeatable flag's values, in order. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];
