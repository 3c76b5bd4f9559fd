/**
 * weather · get_weather / get_forecast from the offline table (SERVERS.md §3.5).
 */
import { all, fieldNum, fieldStr, jsonRe, match, tc } from "../lib.mjs";

export const server = "weather";
export const prefix = "BC-WX";

const TABLE = {
  "new york": [22, "Partly cloudy", 58, 14],
  london: [15, "Light rain", 81, 19],
  paris: [18, "Sunny", 55, 9],
  tokyo: [24, "Hazy", 72, 11],
  sydney: [19, "Clear", 49, 22],
  berlin: [16, "Overcast", 67, 13],
  toronto: [12, "Windy", 61, 31],
  "san francisco": [17, "Fog", 77, 24],
};
const DEFAULT = [20, "Fair", 50, 10];

function current(city) {
  const [t, conditions, humidity, wind] = TABLE[city.toLowerCase()] ?? DEFAULT;
  return all(
    fieldNum("temperature_c", t),
    fieldStr("conditions", conditions),
    fieldNum("humidity_pct", humidity),
    fieldNum("wind_kph", wind),
    fieldStr("source", TABLE[city.toLowerCase()] ? "offline" : "offline-default"),
  );
}
function forecast(city, days) {
  const [t, conditions] = TABLE[city.toLowerCase()] ?? DEFAULT;
  const list = [];
  for (let d = 1; d <= days; d++) {
    const high = t + ((3 * d) % 5) - 2;
    list.push({
      day: d,
      high_c: high,
      low_c: high - 7,
      conditions: [conditions, "Cloudy", "Sunny", "Showers"][(d - 1) % 4],
    });
  }
  return match(`"days":\\s*${jsonRe(list)}`);
}

const w = (title, city) => tc("get_weather", title, ["app.weather"], { city }, current(city));
const f = (title, city, days, tags = []) =>
  tc(
    "get_forecast",
    title,
    ["app.weather", ...tags],
    days === undefined ? { city } : { city, days },
    forecast(city, days ?? 3),
  );

export const cases = [
  w("weather in Paris", "Paris"),
  w("weather in Tokyo", "Tokyo"),
  w("weather in Sydney", "Sydney"),
  w("weather in Berlin", "Berlin"),
  w("weather in Toronto", "Toronto"),
  w("weather in San Francisco", "San Francisco"),
  w("weather in London", "London"),
  w("lower-case city name", "tokyo"),
  w("upper-case city name", "BERLIN"),
  tc(
    "get_weather",
    "a city the table does not have",
    ["app.weather", "names.nonascii"],
    { city: "Reykjavík" },
    current("Reykjavík"),
  ),
  tc(
    "get_weather",
    "a city with a cedilla and tilde",
    ["app.weather", "names.nonascii"],
    { city: "São Paulo" },
    current("São Paulo"),
  ),
  f("three-day forecast for Paris (default)", "Paris", undefined),
  f("week-long forecast for Tokyo", "Tokyo", 7),
  f("tomorrow in Berlin", "Berlin", 1),
  f("four days in Sydney", "Sydney", 4),
  f("two days in New York", "New York", 2),
  f("forecast for a city not in the table", "Kraków", 2, ["names.nonascii"]),
  f("six days in Toronto", "toronto", 6),
];
