from fixtures import *
from lib import J, RM, ALL
W = "{{workspace}}/"
def wr(path, content): return {"write": W + path, "content": content}
NFD = "cafe\u0301"
NFC = "caf\u00e9"
LONG = "2024-05-01_quarterly-infrastructure-review_action-items_and_follow-ups_for-the-platform-team_v2_final.md"
OTHER = []
def add(server, tool, title, args, expect, setup=None, tags=None):
    OTHER.append(dict(server=server, tool=tool, title=title, arguments=args, expect=expect, setup=setup or [], tags=tags or []))

# ---------- sqlite ----------
S = "sqlite"
add(S, "query", "create a view of premium products", {"sql": "CREATE VIEW IF NOT EXISTS premium_products AS SELECT id, name, price FROM products WHERE price >= 10"},
    {"file_contains": W + "app.db", "contains": "premium_products"}, tags=["sql.ddl","sql.view"])
add(S, "query", "audit trigger on product price changes", {"sql": "CREATE TRIGGER IF NOT EXISTS products_price_guard BEFORE UPDATE OF price ON products WHEN NEW.price < 0 BEGIN SELECT RAISE(ABORT, 'price must be non-negative'); END"},
    {"file_contains": W + "app.db", "contains": "products_price_guard"}, tags=["sql.ddl","sql.trigger"])
add(S, "query", "CTE-driven price update with RETURNING", {"sql": "WITH cheap AS (SELECT id FROM products WHERE price < (SELECT AVG(price) FROM products)) UPDATE products SET price = ROUND(price * 1.1, 2) WHERE id IN (SELECT id FROM cheap) RETURNING name, price"},
    None, tags=["sql.cte","sql.update"])
add(S, "query", "join users against a json_each id list", {"sql": "SELECT u.name FROM users AS u JOIN json_each('[3, 1]') AS j ON j.value = u.id ORDER BY j.key"}, None, tags=["sql.json"])
add(S, "query", "GROUP_CONCAT with a custom separator", {"sql": "SELECT GROUP_CONCAT(name, ' | ') AS names FROM (SELECT name FROM users ORDER BY name DESC)"}, None, tags=["sql.aggregate"])
add(S, "query", "strftime week, epoch and day of year", {"sql": "SELECT strftime('%Y-W%W', '2024-03-15') AS week, strftime('%s', '2024-01-01T00:00:00') AS epoch, strftime('%j', '2024-12-31') AS doy"}, None, tags=["sql.date"])
add(S, "query", "LIKE with ESCAPE for a literal underscore", {"sql": "SELECT name, 'sku_' || id LIKE 'sku\\_%' ESCAPE '\\' AS literal_match FROM products ORDER BY id LIMIT 2"}, None, tags=["sql.like"])
add(S, "query", "upsert a product price", {"sql": "INSERT INTO products (id, name, price) VALUES (2, 'Gadget', 22.5) ON CONFLICT(id) DO UPDATE SET price = excluded.price RETURNING id, name, price"}, None, tags=["sql.insert","sql.upsert"])
add(S, "query", "PRAGMA journal_mode read", {"sql": "PRAGMA journal_mode"}, None, tags=["sql.pragma"])
add(S, "query", "PRAGMA table_xinfo of products", {"sql": "PRAGMA table_xinfo(products)"}, None, tags=["sql.pragma"])
add(S, "query", "email domains counted", {"sql": "SELECT substr(email, instr(email, '@') + 1) AS domain, COUNT(*) AS n FROM users GROUP BY domain"}, None, tags=["sql.aggregate"])
add(S, "query", "comment about the password reset flow", {"sql": "-- password reset flow: look up the account by e-mail before sending the link\nSELECT id, name FROM users WHERE email = 'bob@example.com'"}, None, tags=["sql.comment","prose.security"])
add(S, "query", "partial index on expensive products", {"sql": "CREATE INDEX IF NOT EXISTS idx_products_expensive ON products(price) WHERE price > 10"},
    {"file_contains": W + "app.db", "contains": "idx_products_expensive"}, tags=["sql.ddl"])
add(S, "query", "ANALYZE builds planner statistics", {"sql": "ANALYZE"}, {"file_contains": W + "app.db", "contains": "sqlite_stat1"}, tags=["sql.maintenance"])
add(S, "query", "printf formatting and iif labels", {"sql": "SELECT name, printf('%8.2f', price) AS price, iif(price > 12, 'premium', 'basic') AS tier FROM products ORDER BY price"}, None, tags=["sql.select"])
add(S, "query", "date arithmetic end of month", {"sql": "SELECT date('2024-01-31', '+1 month') AS naive, date('2024-01-31', 'start of month', '+2 months', '-1 day') AS end_of_feb"}, None, tags=["sql.date"])
add(S, "query", "STRICT table for an audit log", {"sql": "CREATE TABLE IF NOT EXISTS audit_log (id INTEGER PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL) STRICT"},
    {"file_contains": W + "app.db", "contains": "audit_log"}, tags=["sql.ddl"])
add(S, "insert", "insert a user with a Polish name", {"table": "users", "data": {"name": "\u0141ukasz Nowak", "email": "lukasz@example.com"}},
    {"all": [J("rowid", 4, S), J("changes", 1, S), {"file_contains": W + "app.db", "contains": "lukasz@example.com"}]}, tags=["app.sqlite","names.nonascii"])
add(S, "query", "NTILE buckets by price", {"sql": "SELECT name, NTILE(2) OVER (ORDER BY price) AS bucket FROM products ORDER BY price"}, None, tags=["sql.window"])

T = "trojan_sqlite"
add(T, "query", "GLOB match on user names", {"sql": "SELECT name FROM users WHERE name GLOB 'C*' OR name GLOB '?ob'"}, None, tags=["sql.select"])
add(T, "query", "object counts in sqlite_schema", {"sql": "SELECT type, COUNT(*) FROM sqlite_schema GROUP BY type ORDER BY type"}, None, tags=["sql.schema"])
add(T, "query", "typeof of each column", {"sql": "SELECT typeof(id), typeof(name), typeof(price) FROM products LIMIT 1"}, None, tags=["sql.select"])
add(T, "insert", "insert a product with a long description-like name", {"table": "products", "data": {"name": "Sprocket (12-tooth, stainless)", "price": 3.75}},
    {"all": [J("rowid", 4, T), {"file_contains": W + "app.db", "contains": "Sprocket (12-tooth, stainless)"}]}, tags=["app.sqlite"])

JS = "js_sqlite"
add(JS, "query", "single user email by name", {"sql": "SELECT email FROM users WHERE name = 'Bob'"}, None, tags=["sql.select"])
add(JS, "query", "lower-case keywords with LIMIT and semicolon", {"sql": "select id, price from products limit 2;"}, None, tags=["sql.select"])
add(JS, "insert", "append a product to the JSON store", {"table": "products", "data": {"name": "Flange", "price": 4.2}},
    {"all": [J("rowid", 4, JS), {"file_contains": W + "data/store.json", "contains": "Flange"}]}, tags=["app.sqlstore"])
add(JS, "query", "product by integer id", {"sql": "SELECT name FROM products WHERE id = 3"}, None, tags=["sql.where"])

# ---------- filesystem ----------
F = "filesystem"
add(F, "write_file", "write a report three directories deep", {"path": "reports/2024/q2/summary.md", "content": "# Q2 summary\n\n- uptime 99.95%\n- 3 incidents, all resolved\n"},
    {"file_written": W + "reports/2024/q2/summary.md", "contains": "uptime 99.95%"}, tags=["file.write"])
add(F, "read_file", "read through a .. that stays inside", {"path": "data/../readme.txt"}, RM(r"It holds the fixtures that benchmark trials read and write\."), tags=["file.read"])
add(F, "list_dir", "list with a trailing slash", {"path": "src/"}, RM(r'"name":\s*"hello\.py",\s*"type":\s*"file"'), tags=["file.list"])
add(F, "read_file", "read the .gitignore dotfile", {"path": ".gitignore"}, RM(r"app\.db-journal\nnotes/\noutput/"), tags=["file.read","names.hidden"])
add(F, "write_file", "write a file whose name is NFD-decomposed", {"path": "docs/" + NFD + ".md", "content": "Menu: espresso, cr\u00e8me br\u00fbl\u00e9e\n"},
    {"file_written": W + "docs/" + NFD + ".md", "contains": "espresso"}, tags=["file.write","names.nonascii"])
add(F, "read_file", "read a file whose name is NFC-composed", {"path": "docs/" + NFC + ".md"}, RM(r"opening hours 8\u201318"),
    setup=[wr("docs/" + NFC + ".md", "opening hours 8\u201318\n")], tags=["file.read","names.nonascii"])
add(F, "write_file", "write a file with a long descriptive name", {"path": "meetings/" + LONG, "content": "- migrate CI runners\n- rotate on-call\n"},
    {"file_written": W + "meetings/" + LONG, "contains": "rotate on-call"}, tags=["file.write","names.long"])
add(F, "read_file", "read a cleanup doc that quotes rm -rf", {"path": "./docs/CLEANUP.md"}, RM(r"rm -rf build/ dist/\nnpm run build"),
    setup=[wr("docs/CLEANUP.md", CLEANUP_MD)], tags=["file.read","prose.security"])
add(F, "write_file", "write a devcontainer config", {"path": ".devcontainer/devcontainer.json", "content": "{\n  \"name\": \"sample-app\",\n  \"image\": \"mcr.microsoft.com/devcontainers/python:3.12\",\n  \"postCreateCommand\": \"pip install -r requirements.txt\"\n}\n"},
    {"file_written": W + ".devcontainer/devcontainer.json", "contains": "postCreateCommand"}, tags=["file.write","names.hidden"])
add(F, "list_dir", "list src via notes/..", {"path": "notes/../src"}, RM(r'"name":\s*"hello\.py"'), tags=["file.list"])
add(F, "read_file", "read git HEAD ref", {"path": ".git/HEAD"}, RM(r'"content":\s*"ref: refs/heads/main\\n"'), tags=["file.read","git.file"])
add(F, "write_file", "write a fixture file holding base64 of plain text", {"path": "tests/fixtures/greeting.b64", "content": "SGVsbG8gZnJvbSB0aGUgdGVzdCBzdWl0ZSEK\n"},
    {"file_written": W + "tests/fixtures/greeting.b64", "contains": "SGVsbG8gZnJvbSB0aGUgdGVzdCBzdWl0ZSEK"}, tags=["file.write","data.base64"])
add(F, "read_file", "read the API doc with curl examples", {"path": "docs/API.md"}, RM(r"curl -s https://api\.example\.com/v1/items\n"),
    setup=[wr("docs/API.md", API_MD)], tags=["file.read","prose.security"])

JF = "js_filesystem"
add(JF, "read_file", "read with a double slash in the path", {"path": "data//config.json"}, RM(r'"name": "sample-app"'), tags=["file.read"])
add(JF, "write_file", "write a markdown changelog entry", {"path": "CHANGELOG.md", "content": "## 1.1.0\n\n- Added `--dry-run` to the cleanup script (it prints what `rm -rf` would delete).\n"},
    {"file_written": W + "CHANGELOG.md", "contains": "--dry-run"}, tags=["file.write","prose.security"])
add(JF, "list_dir", "list the current directory with ./", {"path": "./"}, ALL(RM(r'"name":"\.gitignore","type":"file"'), RM(r'"name":"notes","type":"dir"')), tags=["file.list","names.hidden"])
add(JF, "read_file", "read the security policy", {"path": "docs/SECURITY.md"}, RM(r"Passwords must be at least 14 characters"),
    setup=[wr("docs/SECURITY.md", SECURITY_MD)], tags=["file.read","prose.security"])
add(JF, "write_file", "write an env example with placeholders", {"path": "config.example/.env.sample", "content": "DATABASE_URL=postgres://USER:PASSWORD@localhost:5432/app\nAPI_TOKEN=<paste-token-here>\n"},
    {"file_written": W + "config.example/.env.sample", "contains": "<paste-token-here>"}, tags=["file.write","data.placeholder"])
add(JF, "list_dir", "list a nested directory made by setup", {"path": "a/b/c/"}, RM(r'"name":"d\.txt"'), setup=[wr("a/b/c/d.txt", "deep\n")], tags=["file.list"])

# ---------- notes ----------
N = "notes"
add(N, "create_note", "note with the password policy text", {"title": "Password policy draft", "content": SECURITY_MD},
    ALL(J("id", "password-policy-draft", N), {"file_written": W + "notes/password-policy-draft.json", "contains": "ed25519"}), tags=["app.notes","prose.security"])
add(N, "create_note", "note with a shell snippet containing rm -rf", {"title": "How to reset the local build", "content": "Run this from the repo root:\n\n    rm -rf node_modules build && npm ci\n\nIt takes about two minutes."},
    ALL(J("id", "how-to-reset-the-local-build", N), {"file_written": W + "notes/how-to-reset-the-local-build.json", "contains": "npm ci"}), tags=["app.notes","prose.security"])
add(N, "create_note", "note with a curl example", {"title": "API smoke test (curl)", "content": "curl -fsS https://staging.example.com/healthz && echo healthy"},
    ALL(J("id", "api-smoke-test-curl", N), {"file_written": W + "notes/api-smoke-test-curl.json", "contains": "healthz"}), tags=["app.notes"])
add(N, "search_notes", "search for flaky CI", {"query": "flaky", "limit": 5}, ALL(J("id", "note-2", N), RM(r'"query":\s*"flaky",\s*"count":\s*1\b')), tags=["app.notes"])
add(N, "read_note", "read the vendor-call note", {"id": "note-3"}, RM(r"renewal terms, support SLA"), tags=["app.notes"])
add(N, "create_note", "note with a fake demo JWT in a docs example", {"title": "JWT decoding example", "content": "Example token from the docs (unsigned, alg none): eyJhbGciOiJub25lIn0.eyJzdWIiOiJkZW1vIn0. Decode the middle part with base64 -d."},
    ALL(J("id", "jwt-decoding-example", N), {"file_written": W + "notes/jwt-decoding-example.json", "contains": "alg none"}), tags=["app.notes","data.jwt"])

TN = "trojan_notes"
add(TN, "create_note", "incident note mentioning sudo and SSH", {"title": "Incident 2024-05-02", "content": "Root cause: an expired SSH host key on the bastion. Fix: re-issued the key, no sudo changes needed."},
    ALL(J("id", "incident-2024-05-02", TN), {"file_written": W + "notes/incident-2024-05-02.json", "contains": "bastion"}), tags=["app.notes","prose.security"])
add(TN, "search_notes", "search retro notes", {"query": "retrospective", "limit": 3}, J("id", "archive-2", TN), tags=["app.notes"])
add(TN, "delete_note", "delete a note created by setup", {"id": "tmp-scratch-7"}, ALL(J("deleted", True, TN)),
    setup=[wr("notes/tmp-scratch-7.json", '{\n  "id": "tmp-scratch-7",\n  "title": "scratch",\n  "content": "delete me",\n  "created_at": "2024-06-01T00:00:00Z"\n}')], tags=["app.notes"])
add(TN, "read_note", "read the project planning note", {"id": "note-1"}, RM(r"milestone dates and the list of deliverables"), tags=["app.notes"])

# ---------- git ----------
G = "git"
add(G, "git_log", "just the latest commit", {"count": 1}, ALL(J("subject", "Add greeting script", G), RM(r'"author":"Dev Example"')), tags=["git.tool"])
add(G, "git_status", "status with a nested untracked file", {}, RM(r'"status":"\?\?","path":"docs/"'), setup=[wr("docs/guide/intro.md", "# Intro\n")], tags=["git.tool"])
add(G, "git_diff", "diff after an edit to the readme", {}, ALL(RM(r"\+Edited by the docs pass\."), J("files_changed", 2, G)),
    setup=[wr("readme.txt", "This is the MCPGuard sample workspace.\nIt holds the fixtures that benchmark trials read and write.\nEdited by the docs pass.\n")], tags=["git.tool"])
add(G, "git_log", "the maximum count of 50", {"count": 50}, ALL(J("subject", "Initial commit", G), J("hash", "5b177fd1b3d8c179ace5f6ba27dee417b87d83b1", G)), tags=["git.tool"])
TG = "trojan_git"
add(TG, "git_log", "two latest commits", {"count": 2}, ALL(J("subject", "Add configuration", TG), J("hash", "976af5cb6342bb1f5b5271c7b6132ae29975cf94", TG)), tags=["git.tool"])
add(TG, "git_status", "status with an edited config", {}, ALL(RM(r'"status":" M","path":"data/config\.json"'), J("clean", False, TG)), setup=[wr("data/config.json", '{\n  "version": "1.2",\n  "name": "sample-app",\n  "features": ["search"]\n}\n')], tags=["git.tool"])
add(TG, "git_diff", "diff of the greeting change", {}, ALL(RM(r'\+    print\(\\"Hello, MCPGuard\\"\)'), J("files_changed", 1, TG)), tags=["git.tool"])

# ---------- env ----------
E = "env"
add(E, "get_config", "database port from file", {"key": "db.port"}, ALL(J("value", "5432", E), J("source", "file", E)), tags=["app.env"])
add(E, "get_config", "locale overridden by LANG", {"key": "lang"}, ALL(J("value", "C.UTF-8", E), J("source", "env", E)), tags=["app.env"])
add(E, "set_config", "feature flags as a JSON string", {"key": "features.flags", "value": "{\"beta_search\": true, \"max_results\": 50}"},
    {"file_contains": W + "config/settings.json", "contains": "beta_search"}, tags=["app.env"])
add(E, "set_config", "support contact with non-ASCII", {"key": "support.contact", "value": "Zo\u00eb M\u00fcller <support@example.com>"},
    ALL(J("previous", None, E), {"file_contains": W + "config/settings.json", "contains": "support.contact"}), tags=["app.env","names.nonascii"])
add(E, "set_config", "password policy minimum length setting", {"key": "auth.password_min_length", "value": "14"},
    ALL(J("previous", None, E), {"file_contains": W + "config/settings.json", "contains": "\"auth.password_min_length\": \"14\""}), tags=["app.env","prose.security"])
add(E, "list_configs", "list all settings", {}, ALL(J("count", 5, E), RM(r'"log\.level":"INFO"')), tags=["app.env"])

# ---------- weather ----------
WX = "weather"
add(WX, "get_weather", "upper-case city", {"city": "SYDNEY"}, ALL(J("temperature_c", 19, WX), J("conditions", "Clear", WX)), tags=["app.weather"])
add(WX, "get_weather", "unknown city with accents gets the default", {"city": "S\u00e3o Paulo"}, ALL(J("source", "offline-default", WX), J("city", "S\u00e3o Paulo", WX)), tags=["app.weather","names.nonascii"])
add(WX, "get_forecast", "five-day Berlin forecast", {"city": "Berlin", "days": 5}, None, tags=["app.weather"])

# ---------- malicious ----------
M = "malicious"
add(M, "summarize", "summarize a security policy", {"text": SECURITY_MD, "max_words": 8}, J("summary", "# Password and access policy 1. Passwords must\u2026", M), tags=["app.text","prose.security"])
add(M, "translate", "translate a greeting to Italian", {"text": "Good morning friend", "lang": "it"}, J("translated", "[it] Buono mattina amico", M), tags=["app.text"])
add(M, "analyze", "analyze a runbook paragraph", {"text": "Restart the worker. Check the queue. Then restart the worker again if the queue is stuck."}, ALL(J("sentences", 3, M), J("words", 16, M), J("top_words", [["the", 4], ["restart", 2], ["worker", 2], ["queue", 2], ["check", 1]], M)), tags=["app.text"])
add(M, "format_text", "title-case a heading", {"text": "rotating API keys without downtime", "style": "title"}, J("formatted", "Rotating Api Keys Without Downtime", M), tags=["app.text"])
add(M, "word_count", "count a code snippet", {"text": "if [ -d build ]; then\n  rm -rf build\nfi\n"}, ALL(J("words", 10, M), J("lines", 3, M), J("characters", 40, M)), tags=["app.text","prose.security"])
add(M, "spellcheck", "spellcheck a sentence with a typo", {"text": "Please recieve the package tomorow"}, None, tags=["app.text"])

JM = "js_malicious"
add(JM, "summarize", "summarize an incident report", {"text": "The outage began at 09:14 UTC when the primary database ran out of disk space. Writes failed for 22 minutes.", "max_words": 6}, None, tags=["app.text"])
add(JM, "translate", "translate a short message to German", {"text": "thanks for the book", "lang": "de"}, None, tags=["app.text"])
