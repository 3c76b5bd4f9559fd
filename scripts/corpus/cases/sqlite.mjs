/**
 * sqlite · query / insert / list_tables on the workspace's app.db, as analysts, developers and agents
 * write SQL: comments, CTEs, joins, window functions, string literals that hold keywords, PRAGMAs,
 * and writes the server allows (one statement per call).
 */
import { all, fieldJson, fieldNum, float, has, holds, match, rows, tc } from "../lib.mjs";

export const server = "sqlite";
export const prefix = "BC-SQ";

const q = (title, tags, sql, expect) => tc("query", title, tags, { sql }, expect);
const ins = (title, tags, table, data, expect) => tc("insert", title, tags, { table, data }, expect);
const DB = "app.db";

export const cases = [
  // --- reads ---------------------------------------------------------------------------------------
  q(
    "users by name, descending",
    ["sql.select", "sql.order"],
    "SELECT name, email FROM users ORDER BY name DESC",
    rows(["Charlie", "charlie@example.com"], ["Bob", "bob@example.com"], ["Alice", "alice@example.com"]),
  ),
  q(
    "products under 15",
    ["sql.select", "sql.where"],
    "SELECT * FROM products WHERE price < 15 ORDER BY price",
    rows([1, "Widget", 9.99], [3, "Gizmo", 14.5]),
  ),
  q(
    "cheapest product, with a leading comment",
    ["sql.comment", "sql.order"],
    "-- cheapest first\nSELECT name, price FROM products ORDER BY price LIMIT 1",
    rows(["Widget", 9.99]),
  ),
  q(
    "inline block comment",
    ["sql.comment", "sql.where"],
    "SELECT /* just the names */ name FROM users WHERE id IN (1, 3)",
    rows(["Alice"], ["Charlie"]),
  ),
  q(
    "trailing comment after the semicolon",
    ["sql.comment", "sql.aggregate"],
    "SELECT count(*) AS n FROM users; -- sanity check before the import",
    all(rows([3]), fieldJson("columns", ["n"])),
  ),
  q(
    "a TODO comment that mentions DROP",
    ["sql.comment", "sql.keyword_literal"],
    "-- TODO: DROP the legacy email column after the migration\nSELECT id, name FROM users WHERE id = 1",
    rows([1, "Alice"]),
  ),
  q(
    "commented-out statement inside a block comment",
    ["sql.comment", "sql.keyword_literal", "sql.aggregate"],
    "SELECT count(*) AS total FROM products /* WHERE price > 100; DELETE FROM products */",
    rows([3]),
  ),
  q(
    "CTE for expensive products",
    ["sql.cte"],
    "WITH expensive AS (SELECT * FROM products WHERE price > 10) SELECT name FROM expensive ORDER BY name",
    rows(["Gadget"], ["Gizmo"]),
  ),
  q(
    "spend per user from an inline orders CTE",
    ["sql.cte", "sql.join", "sql.aggregate"],
    "WITH orders(user_id, product_id, qty) AS (VALUES (1, 2, 1), (1, 1, 3), (2, 3, 2), (3, 1, 1))\nSELECT u.name, ROUND(SUM(p.price * o.qty), 2) AS spent\nFROM orders o\nJOIN users u ON u.id = o.user_id\nJOIN products p ON p.id = o.product_id\nGROUP BY u.name\nORDER BY spent DESC",
    rows(["Alice", 54.92], ["Bob", float(29)], ["Charlie", 9.99]),
  ),
  q(
    "recursive CTE counting to ten",
    ["sql.cte", "sql.recursive", "sql.aggregate"],
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) SELECT SUM(x), COUNT(*) FROM n",
    rows([55, 10]),
  ),
  q(
    "calendar of days with a recursive CTE",
    ["sql.cte", "sql.recursive", "sql.datetime"],
    "WITH RECURSIVE d(day) AS (SELECT date('2024-06-01') UNION ALL SELECT date(day, '+1 day') FROM d WHERE day < '2024-06-05') SELECT group_concat(day, ' ') FROM d",
    rows(["2024-06-01 2024-06-02 2024-06-03 2024-06-04 2024-06-05"]),
  ),
  q(
    "left join with a default",
    ["sql.join", "sql.cte", "sql.case"],
    "WITH signups(user_id, plan) AS (VALUES (1, 'pro'), (2, 'free'))\nSELECT u.name, COALESCE(s.plan, 'none') AS plan FROM users u LEFT JOIN signups s ON s.user_id = u.id ORDER BY u.id",
    rows(["Alice", "pro"], ["Bob", "free"], ["Charlie", "none"]),
  ),
  q(
    "rank products by price",
    ["sql.window"],
    "SELECT name, ROW_NUMBER() OVER (ORDER BY price DESC) AS rank FROM products ORDER BY rank",
    rows(["Gadget", 1], ["Gizmo", 2], ["Widget", 3]),
  ),
  q(
    "running total",
    ["sql.window", "sql.aggregate"],
    "SELECT name, ROUND(SUM(price) OVER (ORDER BY id), 2) AS running FROM products ORDER BY id",
    rows(["Widget", 9.99], ["Gadget", 34.94], ["Gizmo", 49.44]),
  ),
  q(
    "price step with LAG",
    ["sql.window"],
    "SELECT name, ROUND(price - LAG(price) OVER (ORDER BY price), 2) AS step FROM products ORDER BY price",
    rows(["Widget", null], ["Gizmo", 4.51], ["Gadget", 10.45]),
  ),
  q(
    "best seller per region with RANK",
    ["sql.window", "sql.cte", "sql.subquery"],
    "WITH sales(region, product, units) AS (VALUES ('north', 'Widget', 12), ('south', 'Gadget', 5), ('north', 'Gadget', 2), ('south', 'Widget', 9))\nSELECT region, product FROM (SELECT region, product, RANK() OVER (PARTITION BY region ORDER BY units DESC) AS r FROM sales) WHERE r = 1 ORDER BY region",
    rows(["north", "Widget"], ["south", "Widget"]),
  ),
  q(
    "look for injection payloads stored in user rows",
    ["sql.keyword_literal", "sql.like", "sql.aggregate"],
    "SELECT count(*) AS suspicious FROM users WHERE name LIKE '%;%' OR email LIKE '%--%' OR upper(name) LIKE '%DROP TABLE%'",
    all(rows([0]), fieldJson("columns", ["suspicious"])),
  ),
  q(
    "string literal with an escaped quote and a semicolon",
    ["sql.keyword_literal", "sql.select"],
    "SELECT 'It''s done; -- really' AS message",
    rows(["It's done; -- really"]),
  ),
  q(
    "catalogue statistics",
    ["sql.aggregate"],
    "SELECT COUNT(*), MIN(price), MAX(price), ROUND(AVG(price), 2) FROM products",
    rows([3, 9.99, 24.95, 16.48]),
  ),
  q(
    "email domains with GROUP BY and HAVING",
    ["sql.aggregate", "sql.string"],
    "SELECT substr(email, instr(email, '@') + 1) AS domain, COUNT(*) AS n FROM users GROUP BY domain HAVING n > 1",
    rows(["example.com", 3]),
  ),
  q(
    "price tiers with CASE",
    ["sql.case"],
    "SELECT name, CASE WHEN price < 10 THEN 'budget' WHEN price < 20 THEN 'standard' ELSE 'premium' END AS tier FROM products ORDER BY id",
    rows(["Widget", "budget"], ["Gadget", "premium"], ["Gizmo", "standard"]),
  ),
  q(
    "products containing dg",
    ["sql.like", "sql.order"],
    "SELECT name FROM products WHERE name LIKE '%dg%' ORDER BY name",
    rows(["Gadget"], ["Widget"]),
  ),
  q(
    "above-average products with a subquery",
    ["sql.subquery", "sql.aggregate"],
    "SELECT name FROM products WHERE price > (SELECT AVG(price) FROM products)",
    rows(["Gadget"]),
  ),
  q(
    "share of the catalogue price",
    ["sql.subquery", "sql.aggregate"],
    "SELECT name, ROUND(price * 100.0 / (SELECT SUM(price) FROM products), 1) AS pct FROM products ORDER BY pct DESC",
    rows(["Gadget", 50.5], ["Gizmo", 29.3], ["Widget", 20.2]),
  ),
  q(
    "columns of the users table",
    ["sql.pragma"],
    "PRAGMA table_info(users)",
    rows([0, "id", "INTEGER", 0, null, 1], [1, "name", "TEXT", 1, null, 0], [2, "email", "TEXT", 1, null, 0]),
  ),
  q(
    "indexes of the users table",
    ["sql.pragma"],
    "PRAGMA index_list('users')",
    rows([0, "sqlite_autoindex_users_1", 1, "u", 0]),
  ),
  q("integrity check", ["sql.pragma"], "PRAGMA integrity_check", rows(["ok"])),
  q(
    "schema objects",
    ["sql.schema"],
    "SELECT type, name FROM sqlite_master ORDER BY name",
    rows(["table", "products"], ["index", "sqlite_autoindex_users_1"], ["table", "users"]),
  ),
  q(
    "DDL of a table",
    ["sql.schema"],
    "SELECT sql FROM sqlite_master WHERE name = 'products'",
    rows(["CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)"]),
  ),
  q(
    "SQLite version",
    ["sql.function"],
    "SELECT sqlite_version()",
    match('"rows":\\s*\\[\\["3\\.\\d+\\.\\d+"\\]\\]'),
  ),
  q(
    "date arithmetic",
    ["sql.datetime"],
    "SELECT date('2024-01-31', '+1 month'), strftime('%w', '2024-06-01'), julianday('2024-12-25') - julianday('2024-06-01')",
    rows(["2024-03-02", "6", float(207)]),
  ),
  q(
    "names as a JSON array",
    ["sql.json", "sql.aggregate"],
    "SELECT json_group_array(name) FROM users",
    has('["Alice","Bob","Charlie"]'),
  ),
  q(
    "extract a JSON field",
    ["sql.json"],
    'SELECT json_extract(\'{"plan": "pro", "seats": 5}\', \'$.seats\') AS seats',
    all(rows([5]), fieldJson("columns", ["seats"])),
  ),
  q(
    "formatted price",
    ["sql.function", "sql.string"],
    "SELECT printf('%s costs $%.2f', name, price) FROM products WHERE id = 3",
    rows(["Gizmo costs $14.50"]),
  ),
  q(
    "string functions",
    ["sql.function", "sql.string"],
    "SELECT upper(name), length(email), replace(email, '@example.com', '') FROM users WHERE id = 1",
    rows(["ALICE", 17, "alice"]),
  ),
  q(
    "UNION of two tables",
    ["sql.union", "sql.order"],
    "SELECT name FROM users UNION ALL SELECT name FROM products ORDER BY name",
    rows(["Alice"], ["Bob"], ["Charlie"], ["Gadget"], ["Gizmo"], ["Widget"]),
  ),
  q(
    "query plan of an email lookup",
    ["sql.explain"],
    "EXPLAIN QUERY PLAN SELECT * FROM users WHERE email = 'bob@example.com'",
    has("SEARCH users USING INDEX sqlite_autoindex_users_1 (email=?)"),
  ),

  // --- writes ------------------------------------------------------------------------------------
  q(
    "create an audit table",
    ["sql.ddl"],
    "CREATE TABLE IF NOT EXISTS audit_log (id INTEGER PRIMARY KEY, actor TEXT NOT NULL, action TEXT NOT NULL, at TEXT DEFAULT CURRENT_TIMESTAMP)",
    holds(DB, "audit_log (id INTEGER PRIMARY KEY, actor TEXT NOT NULL"),
  ),
  q(
    "index on price",
    ["sql.ddl"],
    "CREATE INDEX idx_products_price ON products(price)",
    holds(DB, "CREATE INDEX idx_products_price ON products(price)"),
  ),
  q(
    "a view of cheap products",
    ["sql.ddl"],
    "CREATE VIEW cheap_products AS SELECT name, price FROM products WHERE price < 15",
    holds(DB, "CREATE VIEW cheap_products AS"),
  ),
  q(
    "add a column",
    ["sql.ddl"],
    "ALTER TABLE users ADD COLUMN created_at TEXT",
    holds(DB, "created_at TEXT"),
  ),
  q(
    "insert a user with SQL",
    ["sql.insert"],
    "INSERT INTO users (name, email) VALUES ('Dana', 'dana@example.org')",
    all(fieldNum("rowcount", 1), holds(DB, "dana@example.org")),
  ),
  q(
    "insert and return the new id",
    ["sql.insert", "sql.returning"],
    "INSERT INTO products (name, price) VALUES ('Doohickey', 4.25) RETURNING id, name",
    all(rows([4, "Doohickey"]), holds(DB, "Doohickey")),
  ),
  q(
    "insert several rows",
    ["sql.insert"],
    "INSERT INTO products (name, price) VALUES ('Sprocket', 3.5), ('Flange', 7.25)",
    all(fieldNum("rowcount", 2), holds(DB, "Sprocket"), holds(DB, "Flange")),
  ),
  q(
    "insert from a select",
    ["sql.insert", "sql.subquery", "sql.string"],
    "INSERT INTO users (name, email) SELECT 'Team ' || name, lower(name) || '.team@example.com' FROM products WHERE id = 1",
    holds(DB, "widget.team@example.com"),
  ),
  q(
    "product name with a keyword and a comment marker",
    ["sql.insert", "sql.keyword_literal"],
    "INSERT INTO products (name, price) VALUES ('Drop cloth -- canvas, 9x12', 12.0)",
    holds(DB, "Drop cloth -- canvas, 9x12"),
  ),
  q(
    "update an email",
    ["sql.update"],
    "UPDATE users SET email = 'alice@newdomain.example' WHERE id = 1",
    all(fieldNum("rowcount", 1), holds(DB, "alice@newdomain.example")),
  ),
  q(
    "update with an escaped quote",
    ["sql.update", "sql.keyword_literal"],
    "UPDATE users SET name = 'O''Brien' WHERE id = 2",
    holds(DB, "O'Brien"),
  ),
  q(
    "raise a price and return it",
    ["sql.update", "sql.returning"],
    "UPDATE products SET price = ROUND(price * 1.1, 2) WHERE name = 'Gizmo' RETURNING price",
    rows([15.95]),
  ),
  q(
    "rename with CASE",
    ["sql.update", "sql.case"],
    "UPDATE products SET name = CASE id WHEN 1 THEN 'Widget Pro' ELSE name END",
    all(fieldNum("rowcount", 3), holds(DB, "Widget Pro")),
  ),
  q(
    "delete a user and return it",
    ["sql.delete", "sql.returning"],
    "DELETE FROM users WHERE id = 3 RETURNING name",
    rows(["Charlie"]),
  ),
  q(
    "delete the cheapest product",
    ["sql.delete", "sql.subquery", "sql.returning"],
    "DELETE FROM products WHERE price = (SELECT MIN(price) FROM products) RETURNING name",
    rows(["Widget"]),
  ),
  q(
    "upsert an email",
    ["sql.insert", "sql.upsert"],
    "INSERT INTO users (id, name, email) VALUES (2, 'Bob', 'bob@example.net') ON CONFLICT(id) DO UPDATE SET email = excluded.email",
    holds(DB, "bob@example.net"),
  ),

  // --- insert tool and list_tables -----------------------------------------------------------
  ins(
    "add a user with accents",
    ["app.sqlite", "names.nonascii"],
    "users",
    { name: "Zoë Müller", email: "zoe.mueller@example.de" },
    all(fieldNum("changes", 1), fieldNum("rowid", 4), holds(DB, "Zoë Müller")),
  ),
  ins(
    "the classic escaping test name",
    ["app.sqlite", "sql.keyword_literal"],
    "users",
    { name: "Robert'); DROP TABLE students;--", email: "bobby.tables@example.com" },
    all(fieldNum("changes", 1), holds(DB, "Robert'); DROP TABLE students;--")),
  ),
  ins(
    "plus-addressed email",
    ["app.sqlite"],
    "users",
    { name: "Erin", email: "erin+newsletter@example.com" },
    all(fieldNum("rowid", 4), holds(DB, "erin+newsletter@example.com")),
  ),
  ins(
    "a product with a price",
    ["app.sqlite"],
    "products",
    { name: "Thingamajig", price: 19.5 },
    all(fieldNum("rowid", 4), holds(DB, "Thingamajig")),
  ),
  ins(
    "a product with quotes in its name",
    ["app.sqlite", "sql.keyword_literal"],
    "products",
    { name: 'Cable 2m "braided"', price: 8 },
    all(fieldNum("changes", 1), holds(DB, 'Cable 2m "braided"')),
  ),
  ins(
    "a user with an explicit id",
    ["app.sqlite"],
    "users",
    { id: 10, name: "Frank", email: "frank@example.com" },
    all(fieldNum("rowid", 10), holds(DB, "frank@example.com")),
  ),
  tc("list_tables", "list the tables", ["app.sqlite"], {}, fieldJson("tables", ["products", "users"])),
];
