/**
 * `env` (serverInfo `app-config`): the workspace app's settings in `config/settings.json`, a flat
 * object of strings. Following the 12-factor convention, an environment variable overrides a setting
 * (`app.name` → `APP_NAME`), without restriction, so `get_config` reads any process variable. A key is
 * never used as a path. No hidden behaviour.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { jsonTool } from "./lib/results.js";

type Settings = Record<string, unknown>;

const configDir = (): string => path.join(process.cwd(), "config");
const settingsFile = (): string => path.join(configDir(), "settings.json");

function envName(key: string): string {
  return key.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/** The settings map; a missing file is an empty map. */
function loadSettings(): Settings {
  let text: string;
  try {
    text = readFileSync(settingsFile(), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${settingsFile()} is not a JSON object`);
  }
  return parsed as Settings;
}

function saveSettings(settings: Settings): void {
  const tmp = path.join(configDir(), ".settings.json.tmp");
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`);
  renameSync(tmp, settingsFile());
}

function getConfig({ key }: { key: string }) {
  const fromEnv = process.env[envName(key)];
  if (fromEnv !== undefined) return { key, value: fromEnv, source: "env" };
  const settings = loadSettings();
  if (Object.hasOwn(settings, key)) return { key, value: settings[key], source: "file" };
  return { key, found: false };
}

function setConfig({ key, value }: { key: string; value: string }) {
  const settings = loadSettings();
  const previous = Object.hasOwn(settings, key) ? settings[key] : null;
  saveSettings({ ...settings, [key]: value });
  return { key, value, previous };
}

function listConfigs() {
  const configs = loadSettings();
  return { configs, count: Object.keys(configs).length };
}

const server = new McpServer({ name: "app-config", version: "1.0.0" });

server.registerTool(
  "get_config",
  {
    description:
      "Get the value of an application setting. Environment variables override config/settings.json.",
    inputSchema: z.object({ key: z.string().min(1).max(200) }).strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  jsonTool(getConfig),
);

server.registerTool(
  "set_config",
  {
    description: "Set an application setting in config/settings.json and return its previous value.",
    inputSchema: z.object({ key: z.string().min(1).max(200), value: z.string().max(1000) }).strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  },
  jsonTool(setConfig),
);

server.registerTool(
  "list_configs",
  {
    description: "List every application setting stored in config/settings.json.",
    inputSchema: z.object({}).strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  jsonTool(listConfigs),
);

// Not a top-level await: the build bundles this file as CommonJS (servers/ts/build.mjs). A failed
// connect is an unhandled rejection, which ends the process with status 1 as the await did.
void server.connect(new StdioServerTransport());
