/**
 * The guarantee suite's CI size: a fixed seed, bounded counts (`npm run soak` runs any size).
 * `npm test` gives each test file 120 s (its --test-timeout applies per file): these sizes keep
 * every file of the suite well under that on a busy 2-core machine.
 */
export const SEED = 1130;
export const R1_SCENARIOS = 300;
export const R3_KILLS = 50;
export const POSTGRES_URL = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;
