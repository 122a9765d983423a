// Types for canon-payload.mjs (plain JavaScript, for callers; the service's tests import it too).
export function normaliseDecimal(text: string): string;
export function canonicalJson(value: unknown): string;
export function decisionPayload(input: { agent: string; fields: Record<string, unknown>; nonce?: string }): string;
