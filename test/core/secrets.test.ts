// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests spell the literal ${VAR} syntax of configs
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isSecretKey, MASK, maskSecrets, maskValue } from "../../src/core/secrets.js";

describe("masking secrets by shape", () => {
  test("URL passwords (the last @ ends them), secret query parameters, secret flags, Bearer, known key formats", () => {
    const cases: [string, string][] = [
      [
        "Request cannot be constructed from a URL that includes credentials: http://bob:PW@h:9/v1",
        `Request cannot be constructed from a URL that includes credentials: http://bob:${MASK}@h:9/v1`,
      ],
      ["postgres://u:p@ss@db/x and redis://:pw@r", `postgres://u:${MASK}@db/x and redis://:${MASK}@r`],
      ["postgres://user@db/x", "postgres://user@db/x"],
      ["https://h/x?a=1&access_token=T&sig=S#f", `https://h/x?a=1&access_token=${MASK}&sig=${MASK}#f`],
      [
        "server --token T --api-key=K --db-password P --verbose",
        `server --token ${MASK} --api-key=${MASK} --db-password ${MASK} --verbose`,
      ],
      ["--passive-mode on --auth-type basic --tokens 5", "--passive-mode on --auth-type basic --tokens 5"],
      ["Authorization: Bearer abcdefghijkl", `Authorization: Bearer ${MASK}`],
      ["key sk-proj-abcdefghijklmnopqrstu and ghp_abcdefghijklmnopqrstuvwxyz", `key ${MASK} and ${MASK}`],
      ["AKIAABCDEFGHIJKLMNOP", MASK],
      ["nothing to see: 42 tokens", "nothing to see: 42 tokens"],
    ];
    for (const [input, expected] of cases) assert.equal(maskSecrets(input), expected, input);
  });

  test("secret keys: by their last word, camelCase and snake_case alike", () => {
    for (const key of [
      "pw",
      "pass",
      "pwd",
      "password",
      "dbPassword",
      "api_key",
      "apiKey",
      "x-api-key",
      "token",
      "accessToken",
      "credentials",
      "client_secret",
      "Authorization",
      "cookie",
      "privateKey",
    ])
      assert.equal(isSecretKey(key), true, key);
    for (const key of [
      "passEnv",
      "maxTokens",
      "contextTokens",
      "tokenUrl",
      "allowedEnvVars",
      "keepRecent",
      "key",
      "monkey",
      "path",
      "url",
    ])
      assert.equal(isSecretKey(key), false, key);
  });

  test("config values: under a secret key everything below is masked; env and headers maps; the value after a secret flag; references kept", () => {
    const config = {
      credentials: { pw: "a", nested: { deeper: ["b", 3] }, enabled: true },
      db: "postgres://u:c@h/d",
      timeoutMs: 5,
      mcp: {
        args: ["--token", "d", "--api-key=e", "--port", "8080", "-v"],
        env: { PLAIN: "f", REF: "${TOKEN}", DEFAULTED: "${X:-y}" },
        headers: { Authorization: "Bearer ${TOKEN}" },
      },
      passEnv: ["OPENAI_API_KEY"],
    };
    assert.deepEqual(maskValue(config), {
      credentials: { pw: MASK, nested: { deeper: [MASK, MASK] }, enabled: true },
      db: `postgres://u:${MASK}@h/d`,
      timeoutMs: 5,
      mcp: {
        args: ["--token", MASK, `--api-key=${MASK}`, "--port", "8080", "-v"],
        env: { PLAIN: MASK, REF: "${TOKEN}", DEFAULTED: "${X:-y}" },
        headers: { Authorization: MASK },
      },
      passEnv: ["OPENAI_API_KEY"],
    });
  });
});
