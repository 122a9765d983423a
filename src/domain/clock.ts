// The service clock: `recorded_at` comes from here, so tests can hold time still.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
