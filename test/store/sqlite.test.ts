import { join } from "node:path";
import { openSqliteStore } from "../../src/store/index.js";
import { filesContaining, tempDir } from "./helpers.js";
import { defineStoreSuite } from "./suite.js";

defineStoreSuite("sqlite", async () => {
  const dir = tempDir();
  const dataDir = join(dir.path, ".gatehouse");
  const store = openSqliteStore({ path: join(dataDir, "gatehouse.db") });
  let closed = false;
  const close = async () => {
    if (!closed) await store.close();
    closed = true;
  };
  return {
    store,
    transcriptDir: join(dataDir, "transcripts"),
    // Every file of the data folder: the database, its -wal, -shm and -journal, lock files, transcripts.
    scanOpen: async (needle) => filesContaining(dataDir, needle),
    closeAndScan: async (needle) => {
      await close();
      return filesContaining(dataDir, needle);
    },
    close: async () => {
      await close();
      dir.remove();
    },
  };
});
