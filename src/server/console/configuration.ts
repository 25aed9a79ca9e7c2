import type { z } from "zod";
import type { Gatehouse } from "../../runtime/gatehouse.js";
import type { ConfigurationSchema } from "./schemas.js";

/**
 * The effective configuration as the console shows it: what `gatehouse plugins inspect`,
 * `gatehouse hooks list`, the permissions listing and `gatehouse config` print, with secrets
 * masked exactly as they mask them. The CLI builds it with those commands' own functions (see
 * src/cli/console-config.ts); a service opened from code without one shows what its Gatehouse
 * knows (plugins and their registrations).
 */
export type ConfigurationReport = z.input<typeof ConfigurationSchema>;

export type ConfigurationSource = () => Promise<ConfigurationReport>;

/** A service opened from code: its Gatehouse's plugins and their registrations, nothing of a project. */
export function gatehouseConfiguration(gatehouse: Gatehouse): ConfigurationReport {
  const registrations = gatehouse.engine.registrations();
  return {
    plugins: gatehouse.plugins.list().map((p) => ({
      ...p,
      registrations: registrations.filter((r) => r.pluginId === p.id).map(({ pluginId: _, ...r }) => r),
    })),
    commandHooks: [],
    permissions: { rules: [], note: "none configured" },
    settings: null,
  };
}
