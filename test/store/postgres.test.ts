import { after } from "node:test";
import { openStore } from "../../src/store/index.js";
import { tempDir } from "./helpers.js";
import { dropSchema, rowsContaining, testSchema, whenPostgres } from "./pg.js";
import { defineStoreSuite } from "./suite.js";

whenPostgres("postgres backend", (url) => {
  const schema = testSchema();
  after(() => dropSchema(url, schema));

  defineStoreSuite("postgres", async () => {
    const dir = tempDir();
    const transcriptDir = `${dir.path}/transcripts`;
    const store = await openStore({ kind: "postgres", url, schema, transcriptDir });
    let closed = false;
    const close = async () => {
      if (!closed) await store.close();
      closed = true;
    };
    return {
      store,
      transcriptDir,
      scanOpen: (needle) => rowsContaining(url, schema, needle),
      closeAndScan: async (needle) => {
        await close();
        return rowsContaining(url, schema, needle);
      },
      close: async () => {
        await close();
        dir.remove();
      },
    };
  });
});
