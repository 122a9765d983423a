// The long variants of the fault and scale tests: LEDGER_TEST_LONG=1 runs more cycles and longer
// loads than CI does (docs/operations.md, "Running the fault tests").
export const LONG = process.env.LEDGER_TEST_LONG === '1';

export const longOrShort = <T>(long: T, short: T): T => (LONG ? long : short);
