// The long variants of the fault and scale tests: LEDGER_TEST_LONG=1 runs more cycles and longer
// loads than CI does (docs/operations.md, "Running the fault tests").
export const LONG = process.env.LEDGER_TEST_LONG === '1';

export const longOrShort = <T>(long: T, short: T): T => (LONG ? long : short);

/** A test body run once, or `rounds` times in the long variant. */
export function repeated<C>(rounds: number, body: (t: C, round: number) => Promise<void>): (t: C) => Promise<void> {
  return async (t) => {
    for (let round = 1; round <= (LONG ? rounds : 1); round++) await body(t, round);
  };
}
