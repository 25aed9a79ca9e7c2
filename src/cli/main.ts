#!/usr/bin/env node
import { Command } from "commander";
import { VERSION } from "../version.js";

const program = new Command()
  .name("gatehouse")
  .description("An agent runtime where every hook verdict takes effect")
  .version(VERSION, "-v, --version");

await program.parseAsync(process.argv);
