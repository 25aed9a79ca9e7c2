/**
 * The package version. A literal, so nothing is read at start-up; test/cli/startup.test.ts fails
 * when it differs from package.json's.
 */
export const VERSION = "0.1.0";

/**
 * The npm package's name (the command stays `gatehouse`): the name a plugin imports and the folder
 * under node_modules. `gatehouse` on npm is an unrelated package.
 */
export const PACKAGE_NAME = "gatehouse-runtime";
