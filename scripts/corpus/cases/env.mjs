/**
 * env · get_config / set_config / list_configs on config/settings.json (SERVERS.md §3.6). Some cases
 * bring a larger settings file through setup, as a real app has: feature flags, URLs, an image
 * digest, a tenant UUID.
 */
import { uuidOf } from "../fixtures.mjs";
import { all, fieldJson, fieldNum, fieldStr, holds, match, tc, W } from "../lib.mjs";

export const server = "env";
export const prefix = "BC-EN";

const SETTINGS = "config/settings.json";
const DIGEST = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const TENANT = uuidOf("tenant:acme");
const BIG = `${JSON.stringify(
  {
    "app.name": "MyApp",
    "app.version": "2.1.0",
    "db.host": "db.internal.example",
    "db.port": "5432",
    "log.level": "INFO",
    "feature.new_search": "true",
    "cache.ttl_seconds": "300",
    "status.url": "https://status.example.com/health",
    "image.digest": DIGEST,
    "tenant.id": TENANT,
    "ui.greeting": "Grüezi mitenand",
  },
  null,
  2,
)}\n`;
const big = () => [W(SETTINGS, BIG)];

const get = (title, tags, key, expect, setup) => tc("get_config", title, tags, { key }, expect, setup);
const set = (title, tags, key, value, expect, setup) =>
  tc("set_config", title, tags, { key, value }, expect, setup);
const fromFile = (value) => all(fieldStr("value", value), fieldStr("source", "file"));

export const cases = [
  get("app name", ["app.env"], "app.name", fromFile("MyApp")),
  get("app version", ["app.env"], "app.version", fromFile("2.1.0")),
  get("database host", ["app.env"], "db.host", fromFile("localhost")),
  get("database port", ["app.env"], "db.port", fromFile("5432")),
  get("log level", ["app.env"], "log.level", fromFile("INFO")),
  get("a setting that is not there", ["app.env"], "feature.beta", match('"found":\\s*false')),
  get(
    "locale from the environment",
    ["app.env"],
    "lang",
    all(fieldStr("value", "C.UTF-8"), fieldStr("source", "env")),
  ),
  get("feature flag", ["app.env"], "feature.new_search", fromFile("true"), big()),
  get("status page URL", ["app.env"], "status.url", fromFile("https://status.example.com/health"), big()),
  get("container image digest", ["app.env", "data.hash"], "image.digest", fromFile(DIGEST), big()),
  get("tenant id", ["app.env", "data.uuid"], "tenant.id", fromFile(TENANT), big()),
  get(
    "greeting with umlauts",
    ["app.env", "names.nonascii"],
    "ui.greeting",
    fromFile("Grüezi mitenand"),
    big(),
  ),
  set(
    "rename the app",
    ["app.env"],
    "app.name",
    "MyApp Staging",
    all(fieldStr("previous", "MyApp"), holds(SETTINGS, '"app.name": "MyApp Staging"')),
  ),
  set(
    "a new setting",
    ["app.env"],
    "cache.ttl_seconds",
    "600",
    all(match('"previous":\\s*null'), holds(SETTINGS, '"cache.ttl_seconds": "600"')),
  ),
  set(
    "turn a flag off",
    ["app.env"],
    "feature.new_search",
    "false",
    all(fieldStr("previous", "true"), holds(SETTINGS, '"feature.new_search": "false"')),
    big(),
  ),
  set(
    "pin an image digest",
    ["app.env", "data.hash"],
    "image.digest",
    "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
    holds(
      SETTINGS,
      '"image.digest": "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"',
    ),
    big(),
  ),
  set(
    "a value with spaces and accents",
    ["app.env", "names.nonascii"],
    "ui.title",
    "Tableau de bord — équipe",
    holds(SETTINGS, '"ui.title": "Tableau de bord — équipe"'),
  ),
  set(
    "a webhook URL with a query string",
    ["app.env"],
    "alerts.webhook",
    "https://hooks.example.com/services/alerts?channel=ops&level=warn",
    holds(SETTINGS, "https://hooks.example.com/services/alerts?channel=ops&level=warn"),
  ),
  set(
    "a database port",
    ["app.env"],
    "db.port",
    "6432",
    all(fieldStr("previous", "5432"), holds(SETTINGS, '"db.port": "6432"')),
  ),
  set("an empty value", ["app.env"], "log.file", "", holds(SETTINGS, '"log.file": ""')),
  tc(
    "list_configs",
    "all settings",
    ["app.env"],
    {},
    all(fieldNum("count", 5), fieldJson("app.version", "2.1.0")),
  ),
  tc(
    "list_configs",
    "all settings of a bigger file",
    ["app.env", "data.hash", "data.uuid"],
    {},
    all(fieldNum("count", 11), fieldJson("image.digest", DIGEST), fieldJson("tenant.id", TENANT)),
    big(),
  ),
];
