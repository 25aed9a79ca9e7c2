// An expense-approval form that answers on before_agent_reply, without the model: the first
// plugin to claim a turn answers it, and no model call, no finalize and no Stop hook happen.
// A turn the wizard does not claim goes to the model as usual.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { PluginDefinition } from "gatehouse-runtime";

interface Form {
  step: "amount" | "purpose" | "confirm";
  amount?: string;
  purpose?: string;
}

interface Config {
  /** Where the open forms are kept, by session (each `gatehouse run` is a new process). */
  stateFile?: string;
}

const plugin: PluginDefinition<Config | undefined> = {
  id: "approval-wizard",
  setup(api) {
    const file = api.config?.stateFile ?? ".gatehouse/approval-wizard.json";
    const load = (): Record<string, Form> => {
      try {
        return JSON.parse(readFileSync(file, "utf8")) as Record<string, Form>;
      } catch {
        return {};
      }
    };
    const save = (forms: Record<string, Form>) => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(forms, null, 2));
    };
    const reply = (text: string) => ({ handled: true, reply: { text } });

    api.on("before_agent_reply", (event, ctx) => {
      const forms = load();
      const form = forms[ctx.sessionId];
      const input = event.cleanedBody.trim();

      if (!form) {
        if (!/\bexpense\b/i.test(input)) return undefined; // not ours: the model answers
        forms[ctx.sessionId] = { step: "amount" };
        save(forms);
        return reply("Expense approval, step 1 of 3: what is the amount (for example 120 EUR)?");
      }
      if (/^cancel$/i.test(input)) {
        delete forms[ctx.sessionId];
        save(forms);
        return reply("Cancelled; nothing was submitted.");
      }
      switch (form.step) {
        case "amount":
          if (!/\d/.test(input)) return reply("Step 1 of 3: please give an amount, for example 120 EUR.");
          forms[ctx.sessionId] = { step: "purpose", amount: input };
          save(forms);
          return reply("Step 2 of 3: what is it for?");
        case "purpose":
          forms[ctx.sessionId] = { ...form, step: "confirm", purpose: input };
          save(forms);
          return reply(`Step 3 of 3: submit ${form.amount} for "${input}"? Answer yes, or cancel.`);
        case "confirm":
          if (!/^y(es)?$/i.test(input)) return reply('Answer yes to submit, or "cancel".');
          delete forms[ctx.sessionId];
          save(forms);
          return reply(`Submitted: ${form.amount} for "${form.purpose}". Your manager has been asked to approve it.`);
      }
    });
  },
};

export default plugin;
