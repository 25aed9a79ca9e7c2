import { describe } from "node:test";
import { r4Part } from "./r4-part.js";

describe("R4 — bad input (3 of 3)", () => {
  r4Part(2);
});
