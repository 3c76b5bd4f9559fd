/**
 * The three read-only git views of the workspace repository: their registrations (name, description,
 * schema, annotations) and their implementations, which return plain result objects.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { runGit } from "./gitRunner.js";

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };

export interface GitCommit {
  hash: string;
  author: string;
  date: string;
  subject: string;
}

export interface GitLogResult {
  commits: GitCommit[];
}

export interface GitStatusResult {
  branch: string;
  clean: boolean;
  entries: { status: string; path: string }[];
}

export interface GitDiffResult {
  diff: string;
  files_changed: number;
}

export const gitLogTool = {
  name: "git_log",
  config: {
    description: "Show the most recent commits of the workspace repository (hash, author, date, subject).",
    inputSchema: z
      .object({
        count: z.number().int().min(1).max(50).default(10),
      })
      .strict(),
    annotations: READ_ONLY,
  },
};

export const gitStatusTool = {
  name: "git_status",
  config: {
    description:
      "Show the current branch and the changed, staged and untracked files of the workspace repository.",
    inputSchema: z.object({}).strict(),
    annotations: READ_ONLY,
  },
};

export const gitDiffTool = {
  name: "git_diff",
  config: {
    description: "Show the unstaged changes of the workspace repository as a unified diff.",
    inputSchema: z.object({}).strict(),
    annotations: READ_ONLY,
  },
};

export async function gitLog({ count }: { count: number }): Promise<GitLogResult> {
  const out = await runGit([
    "log",
    "-n",
    String(count),
    "--no-color",
    "--date=iso-strict",
    "--pretty=format:%H%x1f%an%x1f%ad%x1f%s",
  ]);
  const commits = out
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [hash = "", author = "", date = "", subject = ""] = line.split("\x1f");
      return { hash, author, date, subject };
    });
  return { commits };
}

/** The branch named by the `## ` header of `git status --porcelain=v1 --branch`. */
function branchOf(header: string): string {
  const unborn = /^(?:No commits yet on|Initial commit on) (.+)$/.exec(header);
  if (unborn?.[1]) return unborn[1];
  return header.split("...")[0]?.split(" ")[0] ?? "";
}

export async function gitStatus(): Promise<GitStatusResult> {
  const lines = (await runGit(["status", "--porcelain=v1", "--branch"])).split("\n").filter((l) => l !== "");
  let branch = "";
  const entries: GitStatusResult["entries"] = [];
  for (const line of lines) {
    if (line.startsWith("## ")) branch = branchOf(line.slice(3));
    else entries.push({ status: line.slice(0, 2), path: line.slice(3) });
  }
  return { branch, clean: entries.length === 0, entries };
}

export async function gitDiff(): Promise<GitDiffResult> {
  const diff = await runGit(["diff", "--no-color", "--no-ext-diff"]);
  const filesChanged = diff.split("\n").filter((line) => line.startsWith("diff --git ")).length;
  return { diff, files_changed: filesChanged };
}
