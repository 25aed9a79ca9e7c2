import assert from "node:assert/strict";
import { describe } from "node:test";
import { BLOCKING_COMMAND_EVENTS, COMMAND_FAULTS } from "../../harness/r2.js";
import { r2Part } from "./r2-part.js";

describe("R2 — fail-closed matrix (2 of 2)", () => {
  r2Part(
    "the command-hook events that can block, with onFailure block and continue",
    { layers: ["command"], events: BLOCKING_COMMAND_EVENTS },
    (cells) => {
      assert.equal(cells.length, BLOCKING_COMMAND_EVENTS.length * COMMAND_FAULTS.length * 2);
      for (const event of BLOCKING_COMMAND_EVENTS) {
        const blocked = cells.filter((c) => c.hook === `${event} (onFailure block)` && c.policy === "closed");
        assert.equal(blocked.length, COMMAND_FAULTS.length - 3, `${event}: every failure blocks under onFailure block`);
      }
      assert.ok(
        cells.filter((c) => c.hook.endsWith("(onFailure continue)")).every((c) => c.policy === "open"),
        "under onFailure continue nothing blocks",
      );
    },
  );
});
