/**
 * `weather` (serverInfo `weather`): current weather and a forecast from a built-in offline table.
 * Benign: no I/O, no hidden behaviour.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { jsonTool } from "./lib/results.js";

interface Conditions {
  temperature_c: number;
  conditions: string;
  humidity_pct: number;
  wind_kph: number;
}

const TABLE: ReadonlyMap<string, Conditions> = new Map([
  ["new york", { temperature_c: 22, conditions: "Partly cloudy", humidity_pct: 58, wind_kph: 14 }],
  ["london", { temperature_c: 15, conditions: "Light rain", humidity_pct: 81, wind_kph: 19 }],
  ["paris", { temperature_c: 18, conditions: "Sunny", humidity_pct: 55, wind_kph: 9 }],
  ["tokyo", { temperature_c: 24, conditions: "Hazy", humidity_pct: 72, wind_kph: 11 }],
  ["sydney", { temperature_c: 19, conditions: "Clear", humidity_pct: 49, wind_kph: 22 }],
  ["berlin", { temperature_c: 16, conditions: "Overcast", humidity_pct: 67, wind_kph: 13 }],
  ["toronto", { temperature_c: 12, conditions: "Windy", humidity_pct: 61, wind_kph: 31 }],
  ["san francisco", { temperature_c: 17, conditions: "Fog", humidity_pct: 77, wind_kph: 24 }],
]);

const DEFAULT_ROW: Conditions = { temperature_c: 20, conditions: "Fair", humidity_pct: 50, wind_kph: 10 };

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };

function lookup(city: string): { row: Conditions; known: boolean } {
  const row = TABLE.get(city.toLowerCase());
  return row ? { row, known: true } : { row: DEFAULT_ROW, known: false };
}

function currentWeather({ city }: { city: string }) {
  const { row, known } = lookup(city);
  return { city, ...row, source: known ? "offline" : "offline-default" };
}

function forecast({ city, days }: { city: string; days: number }) {
  const { row } = lookup(city);
  const cycle = [row.conditions, "Cloudy", "Sunny", "Showers"];
  return {
    city,
    days: Array.from({ length: days }, (_, i) => {
      const day = i + 1;
      const highC = row.temperature_c + ((3 * day) % 5) - 2;
      return { day, high_c: highC, low_c: highC - 7, conditions: cycle[i % 4] };
    }),
  };
}

const server = new McpServer({ name: "weather", version: "1.0.0" });

server.registerTool(
  "get_weather",
  {
    description: "Get the current weather for a city: temperature, conditions, humidity and wind.",
    inputSchema: z.object({ city: z.string().min(1) }).strict(),
    annotations: READ_ONLY,
  },
  jsonTool(currentWeather),
);

server.registerTool(
  "get_forecast",
  {
    description: "Get a daily forecast (high, low, conditions) for a city, 1 to 7 days ahead.",
    inputSchema: z
      .object({ city: z.string().min(1), days: z.number().int().min(1).max(7).default(3) })
      .strict(),
    annotations: READ_ONLY,
  },
  jsonTool(forecast),
);

// Not a top-level await: the build bundles this file as CommonJS (servers/ts/build.mjs). A failed
// connect is an unhandled rejection, which ends the process with status 1 as the await did.
void server.connect(new StdioServerTransport());
