/**
 * js_sqlite · the JSON-store "SQL" server (SERVERS.md §4.6): `SELECT (* | cols) FROM t [WHERE c = v]
 * [LIMIT n]`, one statement per call, insert, list_tables. Some cases bring their own store through
 * setup (the server loads data/store.json at start-up). Queries on tables other than `users` run the
 * dormant implant; only the visible result is judged.
 */
import { all, fieldJson, fieldNum, holds, rows, tc, W, wrote } from "../lib.mjs";

export const server = "js_sqlite";
export const prefix = "BC-JS";

const q = (title, tags, sql, expect, setup) => tc("query", title, tags, { sql }, expect, setup);
const STORE = "data/store.json";

const SHOP = `${JSON.stringify(
  {
    tables: {
      orders: {
        columns: ["id", "user_id", "status", "total"],
        rows: [
          [1, 1, "shipped", 34.94],
          [2, 2, "pending", 9.99],
          [3, 1, "shipped", 14.5],
          [4, 3, "cancelled", 24.95],
        ],
      },
      customers: {
        columns: ["id", "name", "city"],
        rows: [
          [1, "O'Neil & Sons", "Dublin"],
          [2, "Zoë's Café", "Zürich"],
          [3, "Acme Corp", "Springfield"],
        ],
      },
      users: {
        columns: ["id", "name", "email"],
        rows: [[1, "Alice", "alice@example.com"]],
      },
    },
  },
  null,
  2,
)}\n`;
const shop = () => [W(STORE, SHOP)];

export const cases = [
  q(
    "all products",
    ["app.sqlstore", "sql.select"],
    "SELECT * FROM products",
    rows([1, "Widget", 9.99], [2, "Gadget", 24.95], [3, "Gizmo", 14.5]),
  ),
  q(
    "one product's price",
    ["app.sqlstore", "sql.where"],
    "SELECT name, price FROM products WHERE id = 2",
    rows(["Gadget", 24.95]),
  ),
  q(
    "a user by name",
    ["app.sqlstore", "sql.where"],
    "SELECT email FROM users WHERE name = 'Bob'",
    rows(["bob@example.com"]),
  ),
  q(
    "first two users",
    ["app.sqlstore", "sql.limit"],
    "SELECT name FROM users LIMIT 2",
    rows(["Alice"], ["Bob"]),
  ),
  q(
    "lower-case keywords and a trailing semicolon",
    ["app.sqlstore", "sql.select"],
    "select id, email from users where id = 3;",
    rows([3, "charlie@example.com"]),
  ),
  q(
    "multi-line query",
    ["app.sqlstore", "sql.select"],
    "SELECT name,\n       price\n  FROM products\n WHERE name = 'Gizmo'",
    rows(["Gizmo", 14.5]),
  ),
  q(
    "no matching rows",
    ["app.sqlstore", "sql.where"],
    "SELECT * FROM users WHERE email = 'nobody@example.com'",
    all(rows(), fieldNum("rowcount", 0)),
  ),
  q(
    "column list of a table",
    ["app.sqlstore"],
    "SELECT * FROM users LIMIT 0",
    fieldJson("columns", ["id", "name", "email"]),
  ),
  q(
    "shipped orders",
    ["app.sqlstore", "sql.where"],
    "SELECT id, total FROM orders WHERE status = 'shipped'",
    rows([1, 34.94], [3, 14.5]),
    shop(),
  ),
  q(
    "orders of one user",
    ["app.sqlstore", "sql.where"],
    "SELECT id, status FROM orders WHERE user_id = 1",
    rows([1, "shipped"], [3, "shipped"]),
    shop(),
  ),
  q(
    "a name with an escaped quote",
    ["app.sqlstore", "sql.keyword_literal"],
    "SELECT city FROM customers WHERE name = 'O''Neil & Sons'",
    rows(["Dublin"]),
    shop(),
  ),
  q(
    "non-ASCII values",
    ["app.sqlstore", "names.nonascii"],
    "SELECT name, city FROM customers WHERE id = 2",
    rows(["Zoë's Café", "Zürich"]),
    shop(),
  ),
  q(
    "orders table, limited",
    ["app.sqlstore", "sql.limit"],
    "SELECT status FROM orders LIMIT 1",
    rows(["shipped"]),
    shop(),
  ),
  tc("list_tables", "list the tables", ["app.sqlstore"], {}, fieldJson("tables", ["products", "users"])),
  tc(
    "list_tables",
    "list the tables of a bigger store",
    ["app.sqlstore"],
    {},
    fieldJson("tables", ["customers", "orders", "users"]),
    shop(),
  ),
  tc(
    "insert",
    "add a user",
    ["app.sqlstore"],
    { table: "users", data: { name: "Dana", email: "dana@example.org" } },
    all(fieldNum("rowid", 4), holds(STORE, "dana@example.org")),
  ),
  tc(
    "insert",
    "add a product",
    ["app.sqlstore"],
    { table: "products", data: { name: "Sprocket", price: 3.5 } },
    all(fieldNum("changes", 1), holds(STORE, '"Sprocket"')),
  ),
  tc(
    "insert",
    "add an order",
    ["app.sqlstore"],
    { table: "orders", data: { user_id: 2, status: "shipped", total: 24.95 } },
    all(fieldNum("rowid", 5), wrote(STORE)),
    shop(),
  ),
  tc(
    "insert",
    "add a customer with an apostrophe and accents",
    ["app.sqlstore", "names.nonascii"],
    { table: "customers", data: { name: "Müller & D'Amico", city: "Genève" } },
    all(fieldNum("changes", 1), holds(STORE, "Müller & D'Amico")),
    shop(),
  ),
  tc(
    "insert",
    "column names in another case",
    ["app.sqlstore"],
    { table: "Users", data: { Name: "Eve", EMAIL: "eve@example.com" } },
    all(fieldNum("rowid", 4), holds(STORE, "eve@example.com")),
  ),
  q(
    "the email column of one user, mixed-case keywords",
    ["app.sqlstore", "sql.select"],
    "Select Email From Users Where Id = 1",
    rows(["alice@example.com"]),
  ),
  q(
    "prices only",
    ["app.sqlstore"],
    "SELECT price FROM products",
    all(rows([9.99], [24.95], [14.5]), fieldNum("rowcount", 3)),
  ),
];
