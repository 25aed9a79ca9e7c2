import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
/** The package version, read from package.json so there is one place to bump it. */
export const VERSION: string = (require("../package.json") as { version: string }).version;
