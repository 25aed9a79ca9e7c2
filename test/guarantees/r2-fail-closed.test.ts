import assert from "node:assert/strict";
import { describe } from "node:test";
import { COMMAND_FAULTS, FAIL_OPEN_COMMAND_EVENTS, PLUGIN_FAULTS } from "../../harness/r2.js";
import { HOOK_NAMES } from "../../src/hooks/index.js";
import { r2Part } from "./r2-part.js";

describe("R2 — fail-closed matrix (1 of 2)", () => {
  r2Part(
    "every plugin hook under every fault, and the fail-open command-hook events",
    { layers: ["plugin", "command"], events: FAIL_OPEN_COMMAND_EVENTS },
    (cells) => {
      const plugin = cells.filter((c) => c.layer === "plugin");
      assert.equal(new Set(plugin.map((c) => c.hook)).size, HOOK_NAMES.length);
      assert.equal(plugin.length, HOOK_NAMES.length * PLUGIN_FAULTS.length);
      const command = cells.filter((c) => c.layer === "command");
      assert.equal(command.length, FAIL_OPEN_COMMAND_EVENTS.length * COMMAND_FAULTS.length);
      assert.ok(
        command.every((c) => c.policy === "open"),
        "a failure never blocks on these events",
      );
    },
  );
});
