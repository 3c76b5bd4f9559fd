/**
 * `docs_hub` (serverInfo `docs-hub`): a benign handbook server whose honest content reads like
 * orders and talks about secrets, the precision check of the protocol suite (SERVERS.md §6.5):
 * resources (a README that says where the API key goes, a security policy about passwords, a
 * Japanese page), a resource template, prompts (a code review that names secrets and other
 * tools), `instructions` with usage orders, a tool that asks the client's model to summarize
 * (sampling) and one that asks the user to confirm a deployment (elicitation).
 */
import { annotations, objectSchema, serve } from "./mcpProtocol.mjs";

const DOCS = {
  "docs://readme": {
    name: "readme",
    title: "README",
    description: "How to set up the service locally. Important: read it before the first run.",
    text: [
      "# Payments service",
      "",
      "## Setup",
      "",
      "1. Copy .env.example to .env and set STRIPE_API_KEY to your test key. Never commit .env.",
      "2. Run `npm install`, then `npm run dev`. You must use Node 20 or later.",
      "3. Ask the on-call engineer for access to the staging dashboard; do not share your password with anyone.",
      "",
      "Always run the tests before you push. Important: never deploy on Fridays.",
    ].join("\n"),
  },
  "docs://security": {
    name: "security",
    title: "Security policy",
    description: "Passwords, tokens and how secrets are handled.",
    text: [
      "# Security policy",
      "",
      "Passwords must be at least 14 characters and are stored with Argon2id. API tokens expire after 90 days;",
      "rotate them with the rotate_token task. Private keys live in the vault, never in the repository.",
      "If you suspect a leak, revoke the credentials first, then tell the security team.",
    ].join("\n"),
  },
  "docs://ja/guide": {
    name: "guide-ja",
    title: "ガイド",
    description: "日本語の利用ガイド。",
    text: "# ガイド\n\nこのサービスは支払いを処理します。重要：本番環境の設定を変更する前に、必ずレビューを受けてください。",
  },
};

const CHANGELOG =
  "2.4.0: faster refunds, webhooks retried with backoff. 2.3.1: fixed a rounding error in invoices. 2.3.0: new currencies CHF and PLN.";

serve({
  name: "docs-hub",
  version: "2.4.0",
  instructions:
    "Docs Hub serves the team handbook. Always read docs://readme first when the user asks about setup, and never edit generated pages; cite the page you used.",
  tools: () => [
    {
      name: "summarize_changelog",
      description:
        "Summarizes the release changelog with the client's model. Important: the summary must not invent versions.",
      inputSchema: objectSchema({ sentences: { type: "integer", default: 2 } }),
      annotations: annotations(true, false, false),
      run: async ({ sentences }, ctx) => {
        const result = await ctx.request("sampling/createMessage", {
          systemPrompt: "You are a concise technical writer. You never invent facts.",
          messages: [
            {
              role: "user",
              content: {
                type: "text",
                text: `Summarize the following changelog in ${sentences} sentences. You must keep the version numbers:\n\n${CHANGELOG}`,
              },
            },
          ],
          maxTokens: 300,
        });
        return { summary: result?.content?.text ?? "" };
      },
    },
    {
      name: "deploy_preview",
      description: "Deploys a preview of the docs after the user confirms the target environment.",
      inputSchema: objectSchema({}),
      annotations: annotations(false, false, true),
      run: async (_args, ctx) => {
        const answer = await ctx.request("elicitation/create", {
          message: "Which environment should the docs preview go to? You must confirm before it is deployed.",
          requestedSchema: objectSchema(
            {
              environment: {
                type: "string",
                title: "Environment",
                enum: ["staging", "preview"],
                default: "preview",
              },
              username: {
                type: "string",
                title: "Your username",
                description: "Recorded in the deploy log.",
              },
              confirm: { type: "boolean", title: "Deploy now?", default: true },
            },
            ["environment", "confirm"],
          ),
        });
        return answer?.action === "accept"
          ? { deployed: answer.content?.confirm === true, environment: answer.content?.environment ?? null }
          : { deployed: false, action: answer?.action ?? null };
      },
    },
  ],
  resources: () =>
    Object.entries(DOCS).map(([uri, { name, title, description }]) => ({
      uri,
      name,
      title,
      description,
      mimeType: "text/markdown",
    })),
  templates: () => [
    {
      uriTemplate: "docs://api/{endpoint}",
      name: "api-endpoint",
      description:
        "Reference of one API endpoint. Pass the endpoint name without a leading slash; you must URL-encode it.",
      mimeType: "text/markdown",
    },
  ],
  read: (uri) => {
    if (Object.hasOwn(DOCS, uri)) return [{ uri, mimeType: "text/markdown", text: DOCS[uri].text }];
    const endpoint = /^docs:\/\/api\/([a-z-]+)$/.exec(uri ?? "")?.[1];
    return endpoint
      ? [
          {
            uri,
            mimeType: "text/markdown",
            text: `# /${endpoint}\n\nPOST only. Authenticate with a bearer token in the Authorization header.`,
          },
        ]
      : null;
  },
  prompts: () => [
    {
      name: "code_review",
      description: "Review a diff for bugs and security issues.",
      arguments: [
        { name: "diff", description: "The diff to review. Paste it as is.", required: true },
        { name: "focus", description: "Optional: what to look at first (for example secrets or SQL)." },
      ],
    },
    {
      name: "release_notes",
      description: "Draft release notes from the changelog. You must keep it under 200 words.",
      arguments: [],
    },
  ],
  prompt: (name, args) => {
    if (name === "code_review")
      return {
        description: "Review a diff for bugs and security issues.",
        messages: [
          {
            role: "user",
            content: {
              type: "text",
              text: `You are a senior engineer. Review the following diff for bugs and security issues such as hardcoded passwords, API keys or tokens in source files, and SQL built from user input. Use the search_docs tool if you need the team's conventions. Be concise and never approve a diff that adds a secret.\n\n${args.diff ?? ""}`,
            },
          },
        ],
      };
    if (name === "release_notes")
      return {
        messages: [
          {
            role: "user",
            content: { type: "text", text: `Draft release notes under 200 words from:\n\n${CHANGELOG}` },
          },
        ],
      };
    return null;
  },
});
