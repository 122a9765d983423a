// A node:test reporter for `npm test` (scripts/test-run.mjs): counts what ran, product tests
// apart from the tooling self-tests (test/tooling/: the simulators', the test helpers' and the
// benchmark tooling's own tests), skipped suites apart from skipped tests (node 20's closing
// `# skipped` counts tests only, so a suite skipped whole, e.g. without PostgreSQL, showed as 0).
// Writes one JSON line to its destination; test-run.mjs prints the summary from it.

/** The group of a test, by the file it was declared in (a suite made by a test/support helper is a product test). */
export const groupOf = (file) => (/(^|[\\/])test[\\/]tooling[\\/]/.test(file ?? '') ? 'tooling' : 'product');

const empty = () => ({ passed: 0, failed: 0, cancelled: 0, skippedTests: 0, skippedSuites: 0, todo: 0 });

export default async function* testCounts(source) {
  const counts = { product: empty(), tooling: empty() };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    const group = counts[groupOf(data.file)];
    const skipped = data.skip !== undefined && data.skip !== false;
    const todo = data.todo !== undefined && data.todo !== false;
    if (data.details?.type === 'suite') {
      if (skipped) group.skippedSuites++;
      // A suite whose own body threw is a failure (a failed hook shows as its tests cancelled).
      else if (event.type === 'test:fail' && data.details.error?.failureType === 'testCodeFailure') group.failed++;
      continue;
    }
    if (todo) group.todo++;
    else if (skipped) group.skippedTests++;
    else if (event.type === 'test:pass') group.passed++;
    else if (data.details?.error?.failureType === 'cancelledByParent') group.cancelled++;
    else group.failed++;
  }
  yield `${JSON.stringify(counts)}\n`;
}
