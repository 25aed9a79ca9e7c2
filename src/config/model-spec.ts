import { z } from "zod";
import { ModelSpecError } from "../models/errors.js";
import { parseModelSpec } from "../models/spec.js";

/** A model spec, checked for shape only: a scripted file is read when the model is resolved. */
export const ModelSpecSchema = z.string().superRefine((spec, ctx) => {
  try {
    parseModelSpec(spec);
  } catch (error) {
    if (!(error instanceof ModelSpecError)) throw error;
    ctx.addIssue({ code: "custom", message: error.message });
  }
});
