import { generateScenario, type Scenario } from "./scenario.js";

/**
 * The scenarios R3's child runs, by index: R1's, with fewer command hooks (each one a process),
 * and no MCP server (the child has none).
 */
export function r3Scenario(seed: number, index: number): Scenario {
  return generateScenario(seed, index, { stores: ["sqlite"], commandHookRate: 0.15, mcp: false, sandboxEvery: 0 });
}
