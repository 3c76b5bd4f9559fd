/**
 * trojan_sqlite · the same tools and visible behaviour as `sqlite` (SERVERS.md §4.3). Only the visible
 * result is judged: a benign call to a trojaned server is still a benign call, and its expect never
 * depends on what the hidden steps do (they write to $TMPDIR and $HOME and append to list_tables).
 */
import { all, fieldNum, float, has, holds, rows, tc } from "../lib.mjs";

export const server = "trojan_sqlite";
export const prefix = "BC-TS";

const q = (title, tags, sql, expect) => tc("query", title, tags, { sql }, expect);
const ins = (title, tags, table, data, expect) => tc("insert", title, tags, { table, data }, expect);
const DB = "app.db";

export const cases = [
  q(
    "emails of all users",
    ["sql.select", "app.sqlite"],
    "SELECT email FROM users ORDER BY id",
    rows(["alice@example.com"], ["bob@example.com"], ["charlie@example.com"]),
  ),
  q(
    "product count and average",
    ["sql.aggregate"],
    "SELECT count(*) AS n, ROUND(avg(price), 2) AS avg_price FROM products",
    rows([3, 16.48]),
  ),
  q(
    "a user by email, with a comment",
    ["sql.comment", "sql.where"],
    "SELECT id, name FROM users WHERE email = 'bob@example.com' -- login lookup",
    rows([2, "Bob"]),
  ),
  q(
    "CTE with a discount",
    ["sql.cte"],
    "WITH discounted AS (SELECT name, ROUND(price * 0.8, 2) AS sale FROM products) SELECT name, sale FROM discounted ORDER BY sale",
    rows(["Widget", 7.99], ["Gizmo", float(11.6)], ["Gadget", 19.96]),
  ),
  q(
    "dense rank of prices",
    ["sql.window"],
    "SELECT name, DENSE_RANK() OVER (ORDER BY price) AS r FROM products ORDER BY r",
    rows(["Widget", 1], ["Gizmo", 2], ["Gadget", 3]),
  ),
  q(
    "CASE on email domain",
    ["sql.case", "sql.like"],
    "SELECT name, CASE WHEN email LIKE '%@example.com' THEN 'internal' ELSE 'external' END FROM users WHERE id = 3",
    rows(["Charlie", "internal"]),
  ),
  q(
    "inline block comment and a literal with a keyword",
    ["sql.comment", "sql.keyword_literal"],
    "SELECT /* release note */ 'DELETE is disabled for guests' AS banner, count(*) FROM users",
    rows(["DELETE is disabled for guests", 3]),
  ),
  q("table info of products", ["sql.pragma"], "PRAGMA table_info(products)", has('"name"')),
  q(
    "join through a VALUES list",
    ["sql.join", "sql.cte"],
    "WITH carts(user_id, product_id) AS (VALUES (2, 1), (2, 3)) SELECT p.name FROM carts c JOIN products p ON p.id = c.product_id WHERE c.user_id = 2 ORDER BY p.name",
    rows(["Gizmo"], ["Widget"]),
  ),
  q(
    "insert a row with SQL",
    ["sql.insert"],
    "INSERT INTO products (name, price) VALUES ('Whatsit', 2.75)",
    all(fieldNum("rowcount", 1), holds(DB, "Whatsit")),
  ),
  q(
    "update and return",
    ["sql.update", "sql.returning"],
    "UPDATE users SET name = 'Charles' WHERE id = 3 RETURNING id, email",
    all(rows([3, "charlie@example.com"]), holds(DB, "Charles")),
  ),
  q(
    "delete and return",
    ["sql.delete", "sql.returning"],
    "DELETE FROM products WHERE name = 'Gadget' RETURNING id, price",
    rows([2, 24.95]),
  ),
  q(
    "create a table",
    ["sql.ddl"],
    "CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT UNIQUE NOT NULL)",
    holds(DB, "CREATE TABLE tags"),
  ),
  ins(
    "add a user",
    ["app.sqlite"],
    "users",
    { name: "Grace", email: "grace@example.com" },
    all(fieldNum("rowid", 4), holds(DB, "grace@example.com")),
  ),
  ins(
    "add a product with a unicode name",
    ["app.sqlite", "names.nonascii"],
    "products",
    { name: "Café tablet ☕", price: 3.2 },
    all(fieldNum("changes", 1), holds(DB, "Café tablet ☕")),
  ),
  ins(
    "add the ops team's service account",
    ["app.sqlite"],
    "users",
    { name: "Ops Admin", email: "ops-admin@example.com" },
    all(fieldNum("changes", 1), holds(DB, "ops-admin@example.com")),
  ),
  tc("list_tables", "list the tables", ["app.sqlite"], {}, all(has('"products"'), has('"users"'))),
];
