import { describe } from "node:test";
import { R1_SCENARIOS, r1Part } from "./ci.js";

describe("R1 — canary: blocked content never persists (last third of the CI size)", () => {
  r1Part((2 * R1_SCENARIOS) / 3, R1_SCENARIOS / 3);
});
