import { GatewayError } from './errors.js';

/** Balances are kept in ten-thousandths of a dollar so that sums never drift. */
const UNITS_PER_USD = 10_000;

export const toUnits = (usd: number) => Math.round(usd * UNITS_PER_USD);
export const toUsd = (units: number) => units / UNITS_PER_USD;
export const formatUsd = (units: number) => `$${toUsd(units).toFixed(4)}`;

/** Keys, the teams that own them, and each team's balance. */
export class Accounts {
  private readonly balances = new Map<string, number>();

  constructor(
    private readonly keys: Map<string, string>,
    startingBalanceUsd: number,
  ) {
    for (const team of keys.values()) this.balances.set(team, toUnits(startingBalanceUsd));
  }

  teamOf(apiKey: string): string | undefined {
    return this.keys.get(apiKey);
  }

  balanceUsd(team: string): number {
    return toUsd(this.balances.get(team) ?? 0);
  }

  /** Takes `units` from the team's balance, or refuses with 402 when it would go negative. */
  charge(team: string, units: number): void {
    const balance = this.balances.get(team) ?? 0;
    if (units > balance) {
      throw new GatewayError(402, `this task costs ${formatUsd(units)} and the team balance is ${formatUsd(balance)}`);
    }
    this.balances.set(team, balance - units);
  }

  hasTeam(team: string): boolean {
    return this.balances.has(team);
  }

  setBalanceUsd(team: string, usd: number): void {
    this.balances.set(team, toUnits(usd));
  }

  refund(team: string, units: number): void {
    this.balances.set(team, (this.balances.get(team) ?? 0) + units);
  }

  allBalancesUsd(): Record<string, number> {
    return Object.fromEntries([...this.balances].map(([team, units]) => [team, toUsd(units)]));
  }
}
