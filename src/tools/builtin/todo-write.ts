import { z } from "zod";
import type { Tool } from "../types.js";

/** Claude Code's TodoWrite: the agent keeps its task list; each call replaces the whole list. */
const TodoSchema = z.object({
  content: z.string().min(1).describe("What to do, in the imperative"),
  status: z.enum(["pending", "in_progress", "completed"]),
  activeForm: z.string().min(1).describe("The same task in the present continuous, shown while it is in progress"),
});
export const TodoWriteInputSchema = z.object({
  todos: z.array(TodoSchema).describe("The updated todo list"),
});
export type TodoWriteInput = z.infer<typeof TodoWriteInputSchema>;
export type Todo = z.infer<typeof TodoSchema>;

export interface TodoWriteOutput {
  readonly oldTodos: readonly Todo[];
  readonly newTodos: readonly Todo[];
}

/** Lists are kept per session, in memory: a list is the agent's working notes, not conversation. */
export function createTodoWriteTool(): Tool<TodoWriteInput, TodoWriteOutput> {
  const lists = new Map<string, readonly Todo[]>();
  return {
    name: "TodoWrite",
    description:
      "Creates and updates the task list for the current work: send the whole list each time, each task with its " +
      "status (pending, in_progress, completed). Keep one task in_progress at a time.",
    inputSchema: TodoWriteInputSchema,
    parallel: false,
    async execute(input, ctx) {
      const key = ctx.sessionId ?? "";
      const oldTodos = lists.get(key) ?? [];
      const done = input.todos.length > 0 && input.todos.every((t) => t.status === "completed");
      // As in Claude Code, a list whose tasks are all done is cleared.
      lists.set(key, done ? [] : input.todos);
      return { oldTodos, newTodos: input.todos };
    },
    toModelOutput: () =>
      "Todos have been modified successfully. Keep using the todo list to track your progress, and go on with the current task.",
  };
}
