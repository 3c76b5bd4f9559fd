/** The defense configurations of DESIGN.md and the layers each one composes. */

const LAYERS = {
  L1: "L1 policy",
  L2: "L2 validator",
  L3: "L3 kernel",
  AB: "AgentBound baseline",
} as const;
/** The name of a layer (layers.ts has the `Layer` each one stands for). */
export type LayerName = keyof typeof LAYERS;

const CONFIGS = {
  C0: [],
  "C-AB": ["AB"],
  "C-app": ["L1", "L2"],
  "C-ebpf": ["L3"],
  "C-full": ["L1", "L2", "L3"],
  "C-AB+ebpf": ["AB", "L3"],
} as const satisfies Record<string, readonly LayerName[]>;
export type ConfigName = keyof typeof CONFIGS;

export const CONFIG_NAMES = Object.keys(CONFIGS) as ConfigName[];

/** Layers this build of mcpguard can apply. A config needing any other layer is refused. */
const BUILT_LAYERS: ReadonlySet<LayerName> = new Set<LayerName>(["L1", "L2", "L3", "AB"]);

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function describe(layers: readonly LayerName[]): string {
  return listLayers(layers.map((l) => `${l} (${LAYERS[l].replace(/^L\d /, "")})`));
}

function isConfigName(name: string): name is ConfigName {
  return Object.hasOwn(CONFIGS, name);
}

/** Configs whose every layer is built. */
export function availableConfigs(built: ReadonlySet<LayerName> = BUILT_LAYERS): ConfigName[] {
  return CONFIG_NAMES.filter((name) => CONFIGS[name].every((layer) => built.has(layer)));
}

/** Resolve a config name, refusing unknown names and configs with layers that are not built. */
export function resolveConfig(
  name: string,
  built: ReadonlySet<LayerName> = BUILT_LAYERS,
): { name: ConfigName; layers: readonly LayerName[] } {
  if (!isConfigName(name)) {
    throw new ConfigError(`unknown config "${name}"; the configs are ${CONFIG_NAMES.join(", ")}`);
  }
  const layers = CONFIGS[name];
  const missing = layers.filter((layer) => !built.has(layer));
  if (missing.length > 0) {
    const verb = missing.length === 1 ? "is" : "are";
    throw new ConfigError(
      `config "${name}" needs ${describe(missing)}, which ${verb} not built in this version of mcpguard; ` +
        `configs available here: ${availableConfigs(built).join(", ")}`,
    );
  }
  return { name, layers };
}

/** "L1", "L1 and L2", "L1, L2 and L3". */
export function listLayers(layers: readonly string[]): string {
  return layers.length <= 1 ? layers.join("") : `${layers.slice(0, -1).join(", ")} and ${layers.at(-1)}`;
}
