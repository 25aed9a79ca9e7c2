/**
 * The package version. A literal, so nothing is read at start-up; test/cli/startup.test.ts fails
 * when it differs from package.json's.
 */
export const VERSION = "0.1.0";
