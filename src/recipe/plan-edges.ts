/** How a planned step's items follow another step's, as the estimate gives it (`items_from`). */
interface ItemsFrom {
  items_from: { step: string; per_item: boolean; ancestors_per_item?: string[] } | null;
}

/**
 * Whether item i of the step needs item i of `dep` alone: the step it flows from, or an ancestor
 * whose outcome its `if` reads per item. Apart from the estimate, so that printing a plan's NEEDS
 * column does not load it.
 */
export function isPerItemDependency(step: ItemsFrom, dep: string): boolean {
  const from = step.items_from;
  return Boolean(from?.per_item && (from.step === dep || from.ancestors_per_item?.includes(dep)));
}
