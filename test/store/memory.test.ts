import { openMemoryStore } from "../../src/store/index.js";
import { tempDir } from "./helpers.js";
import { defineStoreSuite } from "./suite.js";

defineStoreSuite("memory", async () => {
  const dir = tempDir();
  const transcriptDir = `${dir.path}/transcripts`;
  const store = openMemoryStore({ transcriptDir });
  return {
    store,
    transcriptDir,
    close: async () => {
      await store.close();
      dir.remove();
    },
  };
});
