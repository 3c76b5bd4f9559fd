/**
 * SQL texts for the differential test against SQLite (sqlDifferential.test.ts): statements of every
 * class over a small schema (tables t1 and t2 of columns a, b, c, the view v1, the index i1),
 * written the ways SQLite reads: keywords in any case, comments and whitespace between tokens,
 * names bare or quoted ("x", [x], `x`), strings with '' and with ; -- /* inside, blobs, numbers of
 * every form, nested subqueries, CTEs, triggers, several statements to a text. The objects a text
 * creates get fresh names, so that SQLite prepares what follows them.
 */
import fc from "fast-check";

export const SCHEMA = `CREATE TABLE t1(a, b, c);
CREATE TABLE t2(a, b, c);
CREATE VIEW v1 AS SELECT a, b FROM t1;
CREATE INDEX i1 ON t1(a);
INSERT INTO t1 VALUES (1, 'x', x'00');
INSERT INTO t2 VALUES (2, 'y', NULL);`;

type Pick = <T>(items: readonly T[]) => T;

class Writer {
  #n = 0;
  constructor(
    readonly pick: Pick,
    readonly chance: (percent: number) => boolean,
  ) {}

  fresh(prefix: string): string {
    this.#n++;
    return `${prefix}${this.#n}`;
  }
  /** A keyword (or several), each word in a case SQLite folds. */
  k(words: string): string {
    return words
      .split(" ")
      .map((w) => this.pick([w, w.toLowerCase(), w[0] + w.slice(1).toLowerCase(), w.toUpperCase()]))
      .join(this.gap());
  }
  /** What separates two tokens: mostly a space, sometimes comments that look like SQL. */
  gap(): string {
    if (!this.chance(12)) return " ";
    return this.pick([
      "\n",
      "\t",
      "  ",
      "/**/",
      " /* ; DROP TABLE t1; */ ",
      " -- ; DELETE FROM t1 'x\n",
      "\n-- it's; here\n",
      " /* 'open */ ",
      "\r\n",
      "\f",
    ]);
  }
  /** Tokens joined by gaps. */
  j(...parts: string[]): string {
    return parts.filter((p) => p !== "").join(this.gap());
  }
  /** A name bare, quoted in one of SQLite's three ways, or in another case. */
  name(n: string): string {
    if (!this.chance(30)) return n;
    return this.pick([`"${n}"`, `[${n}]`, `\`${n}\``, n.toUpperCase()]);
  }
  table(): string {
    return this.name(this.pick(["t1", "t2"]));
  }
  column(): string {
    return this.name(this.pick(["a", "b", "c"]));
  }
  literal(): string {
    return this.pick([
      "1",
      "-3",
      "0x1F",
      "2.5e1",
      ".5",
      "'x'",
      "'it''s'",
      "'a;b'",
      "'-- no comment'",
      "'/* no comment */'",
      "'; DROP TABLE t1; --'",
      "x'00ff'",
      "X''",
      "NULL",
      "CURRENT_TIMESTAMP",
    ]);
  }

  /** An expression; `cols`: columns a, b, c are in scope. */
  expr(depth: number, cols: boolean): string {
    const choices = ["literal", "literal", "func"];
    if (cols) choices.push("column", "column");
    if (depth > 0)
      choices.push("binary", "binary", "subquery", "exists", "in", "case", "cast", "paren", "postfix");
    if (this.chance(5)) return this.pick(["?", "?2", ":p", "@p", "$p", "$a::b", "#p"]);
    switch (this.pick(choices)) {
      case "literal":
        return this.literal();
      case "column":
        return this.column();
      case "func":
        return this.func(depth, cols);
      case "binary":
        return this.j(
          this.expr(depth - 1, cols),
          this.pick(["+", "-", "*", "||", "=", "<", ">=", "<>", "!=", this.k("AND"), this.k("OR")]),
          this.expr(depth - 1, cols),
        );
      case "subquery":
        return `(${this.select(depth - 1, 1)})`;
      case "exists":
        return this.j(this.k("EXISTS"), `(${this.select(depth - 1, 1)})`);
      case "in":
        return this.chance(50)
          ? this.j(this.expr(depth - 1, cols), this.k("IN"), "(1, 2)")
          : this.j(this.expr(depth - 1, cols), this.k("NOT IN"), `(${this.select(depth - 1, 1)})`);
      case "case":
        return this.j(
          this.k("CASE WHEN"),
          this.expr(depth - 1, cols),
          this.k("THEN"),
          this.expr(depth - 1, cols),
          this.k("ELSE"),
          this.literal(),
          this.k("END"),
        );
      case "postfix": {
        const e = this.expr(depth - 1, cols);
        return this.pick([
          this.j(e, this.k("COLLATE"), this.pick(["NOCASE", "binary", '"rtrim"'])),
          this.j(e, this.k("LIKE"), "'x%'", this.k("ESCAPE"), "'\\'"),
          this.j(e, this.k("NOT GLOB"), "'*'"),
          this.j(e, this.k("BETWEEN"), "1", this.k("AND"), this.expr(depth - 1, cols)),
          this.j(e, this.k("NOT BETWEEN"), this.literal(), this.k("AND"), "2"),
          this.j(e, this.k("IS NOT NULL")),
          this.j(e, this.k("ISNULL")),
          this.j(e, this.k("NOTNULL")),
          this.j(e, this.k("NOT NULL")),
          this.j(e, this.k("IS NOT DISTINCT FROM"), this.literal()),
          this.j(e, this.k("IS"), this.literal()),
          this.j(e, "->", "'$'"),
          this.j(e, "->>", "'$.x'"),
          this.j(e, this.k("REGEXP"), "'x'"),
        ]);
      }
      case "cast":
        return `${this.k("CAST")}(${this.j(this.expr(depth - 1, cols), this.k("AS"), this.pick(["TEXT", "INTEGER", "REAL"]))})`;
      default:
        return `(${this.expr(depth - 1, cols)})`;
    }
  }
  func(depth: number, cols: boolean): string {
    const arg = () => (depth > 0 ? this.expr(depth - 1, cols) : this.literal());
    const name = this.pick([
      "abs",
      "length",
      "upper",
      "coalesce",
      "typeof",
      "printf",
      "max",
      "count",
      "load_extension",
      "readfile",
      "writefile",
      "edit",
      "LOAD_EXTENSION",
      "ReadFile",
    ]);
    const call = (args: string) => `${this.chance(20) ? this.name(name) : name}(${args})`;
    if (name === "count") {
      const counted = call(this.chance(50) ? "*" : this.j(this.pick(["", this.k("DISTINCT")]), arg()));
      if (!cols || !this.chance(30)) return counted;
      return this.j(
        counted,
        this.chance(30) ? this.j(this.k("FILTER"), `(${this.j(this.k("WHERE"), "a > 0")})`) : "",
        this.k("OVER"),
        this.pick([
          "()",
          "(PARTITION BY a)",
          "(ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
          "(ORDER BY a RANGE 1 PRECEDING)",
        ]),
      );
    }
    if (name === "coalesce") return call(`${arg()}, ${arg()}`);
    if (name === "printf") return call(`'%s', ${arg()}`);
    if (name === "load_extension") return call("'ext.so'");
    if (name.toLowerCase() === "readfile") return call("'in.txt'");
    if (name === "writefile") return call(`'out.txt', ${arg()}`);
    if (name === "edit") return call(`${arg()}, 'vi'`);
    if (name === "max" && !cols) return call(`${arg()}, ${arg()}`);
    return call(arg());
  }

  /** A SELECT of `width` columns (0: any number). */
  select(depth: number, width: number): string {
    const kind = this.pick([
      "plain",
      "plain",
      "plain",
      "values",
      "compound",
      "from-sub",
      "cte",
      "view",
      "pragma",
    ]);
    const n = width || this.pick([1, 2, 3]);
    if (kind === "values") {
      const row = () => `(${Array.from({ length: n }, () => this.literal()).join(", ")})`;
      return this.j(this.k("VALUES"), this.chance(50) ? row() : `${row()}, ${row()}`);
    }
    if (kind === "compound" && depth > 0) {
      return this.j(
        this.select(depth - 1, n),
        this.pick([this.k("UNION"), this.k("UNION ALL"), this.k("INTERSECT"), this.k("EXCEPT")]),
        this.select(depth - 1, n),
      );
    }
    if (kind === "cte" && depth > 0) {
      const name = this.fresh("w");
      return this.j(
        this.k("WITH"),
        name,
        this.k("AS"),
        `(${this.select(depth - 1, n)})`,
        this.k("SELECT"),
        "*",
        this.k("FROM"),
        name,
      );
    }
    if (kind === "pragma") {
      return this.j(
        this.k("SELECT"),
        width === 1 ? "name" : "*",
        this.k("FROM"),
        this.pick(["pragma_table_info('t1')", "pragma_index_list('t1')", "pragma_function_list"]),
      );
    }
    const from = kind === "from-sub" && depth > 0 ? `(${this.select(depth - 1, 0)})` : undefined;
    const source = from ?? (kind === "view" ? this.name("v1") : this.table());
    const cols = from === undefined;
    const result = Array.from({ length: n }, () => this.j(this.expr(depth, cols), this.alias())).join(", ");
    const parts = [this.k("SELECT"), this.chance(15) ? this.k("DISTINCT") : "", result];
    if (this.chance(80)) {
      parts.push(this.k("FROM"), source);
      if (cols && this.chance(15))
        parts.push(
          this.pick([this.k("JOIN"), this.k("LEFT JOIN"), this.k("CROSS JOIN"), ","]),
          "(SELECT 1 AS z) AS s",
          this.pick(["", this.j(this.k("ON"), "s.z = 1")]),
        );
      else if (cols && this.chance(10))
        parts.push(
          this.pick([this.k("INDEXED BY"), this.k("NOT INDEXED")]).replace(/BY$/i, (m) => `${m} i1`),
        );
    }
    const inScope = cols && parts.length > 3;
    if (this.chance(40)) parts.push(this.k("WHERE"), this.expr(depth, inScope));
    if (inScope && this.chance(15))
      parts.push(this.k("GROUP BY"), "a", this.chance(50) ? this.j(this.k("HAVING"), "count(*) > 0") : "");
    if (this.chance(15)) parts.push(this.k("ORDER BY"), "1", this.pick(["", this.k("DESC")]));
    if (this.chance(15)) parts.push(this.k("LIMIT"), this.pick(["1", "2 OFFSET 1", "1, 2"]));
    return this.j(...parts);
  }

  /** An alias, with AS or without; keywords SQLite takes for names where a name fits. */
  alias(): string {
    if (!this.chance(20)) return "";
    const name = this.pick([
      "x",
      "key",
      "replace",
      "temp",
      "if",
      "rowid",
      '"select"',
      "[order]",
      "'s'",
      "first",
      "window",
    ]);
    return this.chance(50) ? this.j(this.k("AS"), name) : name;
  }

  returning(): string {
    if (!this.chance(25)) return "";
    return this.j(this.k("RETURNING"), this.pick(["*", "a", "1", "a, b", "length(b)"]));
  }

  insert(depth: number): string {
    const verb = this.pick([this.k("INSERT INTO"), this.k("INSERT OR IGNORE INTO"), this.k("REPLACE INTO")]);
    const source = this.pick(["values", "values", "select", "default"]);
    const body =
      source === "values"
        ? this.j(this.k("VALUES"), `(${this.expr(depth, false)}, ${this.literal()}, ${this.literal()})`)
        : source === "select"
          ? this.j(this.k("SELECT"), "a, b, c", this.k("FROM"), this.table())
          : this.k("DEFAULT VALUES");
    const upsert =
      source === "values" && this.chance(20)
        ? this.pick([this.k("ON CONFLICT DO NOTHING"), ""])
        : source === "select" && this.chance(20)
          ? this.j(this.k("WHERE"), this.k("TRUE"), this.k("ON CONFLICT DO NOTHING"))
          : "";
    return this.j(verb, this.table(), this.chance(50) ? "(a, b, c)" : "", body, upsert, this.returning());
  }
  update(depth: number): string {
    const sets = [`${this.column()} = ${this.expr(depth, true)}`];
    if (this.chance(30)) sets.push(`${this.column()} = ${this.literal()}`);
    return this.j(
      this.k(this.pick(["UPDATE", "UPDATE OR REPLACE"])),
      this.table(),
      this.k("SET"),
      sets.join(", "),
      this.chance(50) ? this.j(this.k("WHERE"), this.expr(depth, true)) : "",
      this.returning(),
    );
  }
  delete(depth: number): string {
    return this.j(
      this.k("DELETE FROM"),
      this.table(),
      this.chance(60) ? this.j(this.k("WHERE"), this.expr(depth, true)) : "",
      this.returning(),
    );
  }
  /** A statement of a trigger's body. */
  triggerStep(depth: number): string {
    const kind = this.pick(["insert", "update", "delete", "select"]);
    if (kind === "insert") return this.j(this.k("INSERT INTO"), "t2", this.k("VALUES"), "(new.a, 1, 2)");
    if (kind === "update") return this.j(this.k("UPDATE"), "t2", this.k("SET"), "b = new.b");
    if (kind === "delete") return this.j(this.k("DELETE FROM"), "t2", this.k("WHERE"), "a = new.a");
    return this.select(depth, 0);
  }

  create(depth: number): string {
    const temp = this.chance(25) ? this.k(this.pick(["TEMP", "TEMPORARY"])) : "";
    switch (this.pick(["table", "table-as", "index", "view", "trigger", "virtual"])) {
      case "table": {
        const column = this.pick([
          "x",
          "x INTEGER PRIMARY KEY",
          "x TEXT NOT NULL DEFAULT 'd'",
          "x CHECK (x > 0)",
        ]);
        return this.j(this.k("CREATE"), temp, this.k("TABLE"), this.fresh("n"), `(${column}, y)`);
      }
      case "table-as":
        return this.j(
          this.k("CREATE"),
          temp,
          this.k("TABLE"),
          this.fresh("n"),
          this.k("AS"),
          this.select(depth, 0),
        );
      case "index":
        return this.j(
          this.k(this.pick(["CREATE INDEX", "CREATE UNIQUE INDEX", "CREATE INDEX IF NOT EXISTS"])),
          this.fresh("i"),
          this.k("ON"),
          "t2",
          `(${this.column()})`,
        );
      case "view":
        return this.j(
          this.k("CREATE"),
          temp,
          this.k("VIEW"),
          this.fresh("v"),
          this.k("AS"),
          this.select(depth, 0),
        );
      case "trigger": {
        const steps = [this.triggerStep(depth)];
        if (this.chance(40)) steps.push(this.triggerStep(depth));
        return this.j(
          this.k("CREATE"),
          temp,
          this.k("TRIGGER"),
          this.fresh("tr"),
          this.k(this.pick(["AFTER", "BEFORE"])),
          this.k("INSERT"),
          this.k("ON"),
          "t1",
          this.chance(30) ? this.j(this.k("WHEN"), "new.a > 0") : "",
          this.k("BEGIN"),
          steps.map((s) => `${s};`).join(this.gap()),
          this.k("END"),
        );
      }
      default:
        return this.j(
          this.k("CREATE VIRTUAL TABLE"),
          this.fresh("f"),
          this.k("USING"),
          this.pick(["fts5(x, y)", "fts4(x)", "rtree(id, x0, x1)"]),
        );
    }
  }
  drop(): string {
    const [kind, name] = this.pick([
      ["TABLE", "t2"],
      ["VIEW", "v1"],
      ["INDEX", "i1"],
      ["TABLE", "nothere"],
      ["TRIGGER", "nothere"],
    ] as const);
    return this.j(this.k("DROP"), this.k(kind), this.k("IF EXISTS"), this.name(name));
  }
  alter(): string {
    const action = this.pick([
      this.j(this.k("ADD"), this.chance(50) ? this.k("COLUMN") : "", this.fresh("d"), "TEXT"),
      this.j(this.k("RENAME TO"), this.fresh("r")),
      this.j(this.k("RENAME"), this.chance(50) ? this.k("COLUMN") : "", "b", this.k("TO"), this.fresh("z")),
      this.j(this.k("DROP"), this.chance(50) ? this.k("COLUMN") : "", "c"),
    ]);
    return this.j(this.k("ALTER TABLE"), "t2", action);
  }
  pragma(): string {
    const schema = this.chance(20) ? "main." : "";
    return this.j(
      this.k("PRAGMA"),
      schema +
        this.pick([
          "table_info(t1)",
          "table_info('t2')",
          "user_version",
          "user_version = 7",
          "foreign_keys = ON",
          "foreign_keys",
          "journal_mode",
          "journal_mode = WAL",
          "writable_schema = 1",
          "cache_size = -2000",
          "cache_size(100)",
          "integrity_check",
          "quick_check(1)",
          "optimize",
          "wal_checkpoint",
          "no_such_pragma",
          "no_such_pragma = 1",
          "trusted_schema = 0",
          "case_sensitive_like = 1",
          "query_only",
          "index_list(t1)",
          "data_version",
          "secure_delete = ON",
          "encoding",
          "function_list",
        ]),
    );
  }

  statement(depth: number, explain = true): string {
    const kind = this.pick([
      "select",
      "select",
      "with",
      "recursive",
      "insert",
      "insert",
      "update",
      "delete",
      "create",
      "create",
      "drop",
      "alter",
      "attach",
      "vacuum",
      "pragma",
      "pragma",
      "maintenance",
      "transaction",
      "explain",
    ]);
    switch (kind) {
      case "select":
        return this.select(depth, 0);
      case "with": {
        const name = this.fresh("w");
        const cte = this.j(this.k("WITH"), name, "(x)", this.k("AS"), `(${this.select(depth - 1, 1)})`);
        return this.pick([
          this.j(cte, this.k("SELECT"), "x", this.k("FROM"), name),
          this.j(cte, this.k("INSERT INTO"), "t2(a)", this.k("SELECT"), "x", this.k("FROM"), name),
          this.j(
            cte,
            this.k("DELETE FROM"),
            "t2",
            this.k("WHERE"),
            "a",
            this.k("IN"),
            `(SELECT x FROM ${name})`,
          ),
          this.j(cte, this.k("UPDATE"), "t2", this.k("SET"), "b = (SELECT x FROM", name, ")"),
        ]);
      }
      case "recursive":
        return this.j(
          this.k("WITH RECURSIVE"),
          "c(x)",
          this.k("AS"),
          "(SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3)",
          this.k("SELECT"),
          "x",
          this.k("FROM"),
          "c",
        );
      case "insert":
        return this.insert(depth);
      case "update":
        return this.update(depth);
      case "delete":
        return this.delete(depth);
      case "create":
        return this.create(depth);
      case "drop":
        return this.drop();
      case "alter":
        return this.alter();
      case "attach": {
        const name = this.fresh("db");
        const attach = this.j(
          this.k(this.pick(["ATTACH", "ATTACH DATABASE"])),
          this.pick(["':memory:'", "'att.db'", "'file:mem?mode=memory'", "''"]),
          this.k("AS"),
          name,
        );
        return this.chance(40) ? `${attach};${this.gap()}${this.j(this.k("DETACH"), name)}` : attach;
      }
      case "vacuum":
        return this.pick([
          this.k("VACUUM"),
          this.j(this.k("VACUUM INTO"), "'copy.db'"),
          this.k("VACUUM main"),
        ]);
      case "pragma":
        return this.pragma();
      case "maintenance":
        return this.pick([
          this.k("ANALYZE"),
          this.j(this.k("ANALYZE"), "t1"),
          this.k("REINDEX"),
          this.j(this.k("REINDEX"), "t1"),
        ]);
      case "transaction": {
        const sp = this.fresh("sp");
        return this.pick([
          `${this.k("BEGIN")}; ${this.k("COMMIT")}`,
          `${this.k("BEGIN IMMEDIATE TRANSACTION")}; ${this.k("ROLLBACK")}`,
          `${this.k("SAVEPOINT")} ${sp}; ${this.k("RELEASE")} ${sp}`,
          `${this.k("BEGIN")}; ${this.k("END")}`,
        ]);
      }
      default:
        return explain
          ? this.j(this.k(this.pick(["EXPLAIN", "EXPLAIN QUERY PLAN"])), this.statement(depth, false))
          : this.select(depth, 0);
    }
  }

  /** The text with a token of SQL's quoting and punctuation put in somewhere, or a character cut out. */
  mutate(text: string, at: number): string {
    const i = at % (text.length + 1);
    if (this.chance(30)) return text.slice(0, i) + text.slice(i + 1);
    const piece = this.pick([
      ";",
      "'",
      '"',
      "(",
      ")",
      "--",
      "/*",
      "*/",
      "[",
      "]",
      "`",
      "x'",
      ".",
      "$",
      "#",
      "?",
      ",",
      "END",
      "BEGIN",
      "CASE",
      "0x",
      "1e",
      "\\",
    ]);
    return text.slice(0, i) + piece + text.slice(i);
  }

  text(): string {
    const count = this.pick([1, 1, 1, 2, 2, 3]);
    const statements = Array.from({ length: count }, () => this.statement(this.pick([0, 1, 2])));
    const separator = () => this.pick([";", "; ", ";\n", " ;; ", "; -- ;\n", "; /* ; */ "]);
    let out = statements.join(separator());
    if (this.chance(30)) out += this.pick([";", "; -- done", ";\n", " /* open to the end; DROP TABLE t1"]);
    if (this.chance(10)) out = this.pick([";", "-- lead\n", "/* lead */ "]) + out;
    return out;
  }
}

/** Texts of one to three statements. */
export const sqlText = fc.gen().map((g) => {
  const pick: Pick = (items) => g(fc.constantFrom, ...items);
  const chance = (percent: number) => g(fc.integer, { min: 0, max: 99 }) < percent;
  const writer = new Writer(pick, chance);
  const text = writer.text();
  return chance(15) ? writer.mutate(text, g(fc.nat)) : text;
});
