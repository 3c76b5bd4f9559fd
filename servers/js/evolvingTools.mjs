/**
 * `evolving_tools` (serverInfo `task-board`): a benign task board whose tool set changes the way
 * honest servers change theirs (SERVERS.md §6.5), the counterpart of `rug_pull`:
 *
 * - `default`: `enable_reports` turns on a feature; the server then adds `export_report` and
 *   sends `notifications/tools/list_changed` (tools are added; none changes);
 * - `noisy`: every call is followed by list_changed, and the tools stay exactly as they were;
 * - `v2`: the server was upgraded (serverInfo.version 1.1.0) and lists `archive_task` besides the
 *   tools pinned at 1.0.0 in policies/pins/bench.json, which are unchanged.
 */
import { annotations, launchOptions, objectSchema, serve } from "./mcpProtocol.mjs";

const { variant } = launchOptions();
const tasks = [
  { id: 1, title: "Write the release notes", done: false },
  { id: 2, title: "Review the on-call rota", done: true },
];
let reports = false;

const announce = (ctx) => {
  if (variant === "noisy" || (variant === "default" && reports))
    setTimeout(() => ctx.notify("notifications/tools/list_changed"), 10);
};

function tools() {
  const list = [
    {
      name: "list_tasks",
      description:
        "Lists the tasks on the board. Important: done tasks are included unless open_only is true.",
      inputSchema: objectSchema({ open_only: { type: "boolean", default: false } }),
      annotations: annotations(true, false, false),
      run: ({ open_only }, ctx) => {
        announce(ctx);
        return { tasks: tasks.filter((t) => !open_only || !t.done) };
      },
    },
    {
      name: "add_task",
      description: "Adds a task to the board. The title must be unique.",
      inputSchema: objectSchema({ title: { type: "string" } }, ["title"]),
      annotations: annotations(false, false, false),
      run: ({ title }, ctx) => {
        if (tasks.some((t) => t.title === title)) throw new Error("a task with that title exists");
        const task = { id: tasks.length + 1, title, done: false };
        tasks.push(task);
        announce(ctx);
        return task;
      },
    },
    {
      name: "enable_reports",
      description:
        "Turns on weekly reports. Once on, the export_report tool appears; call it to get the report.",
      inputSchema: objectSchema({}),
      annotations: annotations(false, false, false),
      run: (_args, ctx) => {
        reports = true;
        announce(ctx);
        return { reports: true };
      },
    },
  ];
  if (reports)
    list.push({
      name: "export_report",
      description: "Exports the weekly report as Markdown. You must call enable_reports first.",
      inputSchema: objectSchema({ week: { type: "integer", description: "ISO week number." } }, ["week"]),
      annotations: annotations(true, false, false),
      run: ({ week }) => ({
        week,
        markdown: `# Week ${week}\n\n${tasks.length} tasks, ${tasks.filter((t) => t.done).length} done.`,
      }),
    });
  if (variant === "v2")
    list.push({
      name: "archive_task",
      description: "Archives a done task. Archived tasks no longer show in list_tasks.",
      inputSchema: objectSchema({ id: { type: "integer" } }, ["id"]),
      annotations: annotations(false, false, false),
      run: ({ id }) => ({ id, archived: tasks.some((t) => t.id === id && t.done) }),
    });
  return list;
}

serve({ name: "task-board", version: variant === "v2" ? "1.1.0" : "1.0.0", tools });
