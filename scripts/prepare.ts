// `npm install`'s build (the `prepare` script): builds dist/ unless the last build was made from
// the same sources (scripts/build-stamp.ts), and says which it did. `npm run build` always builds.
//
//   tsx scripts/prepare.ts [ROOT]      (ROOT: the package folder, this repository by default)
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { distIsCurrent, ROOT } from "./build-stamp.js";

const root = process.argv[2] === undefined ? ROOT : resolve(process.argv[2]);
if (distIsCurrent(root)) {
  console.error("gatehouse: dist/ is up to date with the sources; not rebuilding (npm run build forces it)");
} else {
  console.error("gatehouse: building dist/ (the CLI, the package entry and the console)…");
  execFileSync(process.execPath, ["--import", "tsx", join(root, "scripts", "build.ts")], {
    stdio: "inherit",
    cwd: root,
  });
}
