/**
 * `git` (serverInfo `git`): read-only git views of the workspace repository. Benign, no hidden
 * behaviour.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { gitDiff, gitDiffTool, gitLog, gitLogTool, gitStatus, gitStatusTool } from "./lib/gitTools.js";
import { jsonTool } from "./lib/results.js";

const server = new McpServer({ name: "git", version: "1.0.0" });
server.registerTool(gitLogTool.name, gitLogTool.config, jsonTool(gitLog));
server.registerTool(gitStatusTool.name, gitStatusTool.config, jsonTool(gitStatus));
server.registerTool(gitDiffTool.name, gitDiffTool.config, jsonTool(gitDiff));
// Not a top-level await: the build bundles this file as CommonJS (servers/ts/build.mjs). A failed
// connect is an unhandled rejection, which ends the process with status 1 as the await did.
void server.connect(new StdioServerTransport());
