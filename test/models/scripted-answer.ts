// Run as a separate process by scripted.test.ts: prints a scripted model's answer to the prompt
// given on argv, so the test can compare answers across processes.
import { collectStream, resolveModel } from "../../src/models/index.js";

const [spec, cwd, promptJson] = process.argv.slice(2);
const model = await resolveModel(spec ?? "", { cwd: cwd ?? "." });
const { stream } = await model.doStream({ prompt: JSON.parse(promptJson ?? "[]") });
process.stdout.write(JSON.stringify(await collectStream(stream)));
