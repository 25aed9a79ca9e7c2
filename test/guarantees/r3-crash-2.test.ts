import { describe } from "node:test";
import { r3Part } from "./r3-part.js";

describe("R3 — crashes (2 of 2)", () => {
  r3Part(1);
});
