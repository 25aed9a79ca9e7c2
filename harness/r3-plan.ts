import { generateScenario, type Scenario } from "./scenario.js";

/** The scenarios R3's child runs, by index: R1's, with fewer command hooks (each one a process). */
export function r3Scenario(seed: number, index: number): Scenario {
  return generateScenario(seed, index, { stores: ["sqlite"], commandHookRate: 0.15 });
}
