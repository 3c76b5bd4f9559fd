import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectArguments } from "../src/index.ts";
import { makeWorld } from "./helpers.ts";

const world = makeWorld();
const { rule, root, workspace, home } = world;
beforeAll(() => {
  symlinkSync(join(workspace, "data"), join(workspace, "data-link"));
  mkdirSync(join(workspace, ".git", "hooks"), { recursive: true });
});
afterAll(() => world.remove());

describe("l2.path.encoded", () => {
  it.each([
    "%2e%2e%2fetc%2fpasswd",
    "%252e%252e/%252e%252e/etc/passwd",
    "data%5c..%5cx",
    "%c0%ae%c0%ae/etc",
    "readme.txt%00.png",
    "%u002e%u002e/x",
  ])("refuses %s", (path) => {
    expect(rule(path, "path.read")).toBe("l2.path.encoded");
  });

  it("accepts other percent signs", () => {
    expect(rule("output/report%20final.txt", "path.write")).toBeUndefined();
    expect(rule("output/100%.txt", "path.write")).toBeUndefined();
  });
});

describe("l2.path.traversal", () => {
  it("refuses .. that climbs out of every root, decoded and folded forms included", () => {
    expect(rule("../../../../../../../../../../../../etc/passwd", "path.read")).toBe("l2.path.traversal");
    expect(rule("../outside/secret.txt", "path.read")).toBe("l2.path.traversal");
    expect(rule("/etc/../etc/hostname", "path.read")).toBe("l2.path.traversal");
    expect(rule("..\\..\\..\\etc\\hostname", "path.read")).toBe("l2.path.traversal");
    expect(rule("%2e%2e%2f%2e%2e%2fetc", "path.read", { disabledRules: new Set(["l2.path.encoded"]) })).toBe(
      "l2.path.traversal",
    );
    expect(
      rule("．．／．．／etc/hostname", "path.read", { disabledRules: new Set(["l2.unicode.confusable"]) }),
    ).toBe("l2.path.traversal");
  });

  it("accepts .. that stays inside a root", () => {
    expect(rule("data/../readme.txt", "path.read")).toBeUndefined();
    expect(rule(`../workspace/readme.txt`, "path.read")).toBeUndefined();
    expect(rule("..foo/bar", "path.read")).toBeUndefined();
  });
});

describe("l2.path.prefix-sibling", () => {
  it("refuses a directory that only shares the root's prefix", () => {
    expect(rule(`${root}/workspace_evil/x`, "path.read")).toBe("l2.path.prefix-sibling");
    expect(rule(`${workspace}2/x`, "path.write")).toBe("l2.path.prefix-sibling");
  });

  it("accepts the root itself and paths below it", () => {
    expect(rule(workspace, "path.read")).toBeUndefined();
    expect(rule(`${workspace}/readme.txt`, "path.read")).toBeUndefined();
    expect(
      rule(`${root}/workspace_evil/x`, "path.read", { roots: [workspace, join(root, "workspace_evil")] }),
    ).toBeUndefined();
  });
});

describe("l2.path.symlink-escape", () => {
  it("refuses a symlink out of the root", () => {
    expect(rule("out/secret.txt", "path.read")).toBe("l2.path.symlink-escape");
    expect(rule("keys/id_rsa", "path.read")).toBe("l2.path.symlink-escape");
    expect(rule("out/new-file.txt", "path.write")).toBe("l2.path.symlink-escape");
  });

  it("refuses .. through a real symlink, which climbs from the link's target", () => {
    // Lexically deep/../secret.txt is workspace/secret.txt; the kernel opens outside/secret.txt.
    expect(rule("deep/../secret.txt", "path.read")).toBe("l2.path.symlink-escape");
  });

  it("accepts a symlink that stays inside the root", () => {
    expect(rule("data-link/config.json", "path.read")).toBeUndefined();
    expect(rule("data-link/../readme.txt", "path.read")).toBeUndefined();
  });
});

describe("a path relative to another argument (a base)", () => {
  it("is read against the base as the kernel walks it: a `..` after a link climbs from the link's target", () => {
    // <workspace>/repo/b/c/l leads to <workspace>/next/w: <workspace>/repo/b/c/l/.. is <workspace>/next.
    mkdirSync(join(workspace, "repo", "b", "c"), { recursive: true });
    mkdirSync(join(workspace, "next", "w"), { recursive: true });
    symlinkSync(join(workspace, "next", "w"), join(workspace, "repo", "b", "c", "l"));
    const call = (files: string) =>
      inspectArguments(
        { repo: `${workspace}/repo/b/c/l/..`, files },
        { repo: "path.write", files: "path.write" },
        { ...world.ctx, pathBases: { files: `${workspace}/repo/b/c/l/..` } },
      )?.rule;
    expect(call("x")).toBeUndefined();
    // From <workspace>/next, two folders up is above the workspace (folded first, it stayed inside).
    expect(call("../../z")).toBe("l2.path.traversal");
  });
});

describe("l2.path.sensitive", () => {
  it.each([
    "/etc/passwd",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers.d/admin",
    "/proc/self/status",
    "/proc/1/environ",
    "/sys/kernel/notes",
    "/root/.profile",
    "/var/run/docker.sock",
    ".env",
    "data/.env.production",
    "data/server.pem",
    "data/tls.key",
    "id_ed25519",
    "/home/alice/.aws/credentials",
  ])("refuses reading %s", (path) => {
    expect(rule(path, "path.read")).toBe("l2.path.sensitive");
  });

  it("refuses the home's credentials whatever the policy says", () => {
    expect(rule(`${home}/.ssh/id_rsa`, "path.read")).toBe("l2.path.sensitive");
    expect(rule(`${home}/.aws/credentials`, "path.read")).toBe("l2.path.sensitive");
    expect(rule(`${home}/.netrc`, "path.read")).toBe("l2.path.sensitive");
    expect(rule(`${home}/.config/gcloud/credentials.db`, "path.read")).toBe("l2.path.sensitive");
    const finding = inspectArguments({ path: `${home}/.ssh/id_rsa` }, { path: "path.read" }, world.ctx);
    expect(finding?.reason).toContain("~/.ssh/id_rsa");
  });

  it.each([
    ".bashrc",
    ".profile",
    ".zshrc",
    ".config/autostart/helper.desktop",
    ".config/systemd/user/x.service",
    ".local/bin/sudo",
    ".gitconfig",
  ])("refuses writing ~/%s", (path) => {
    expect(rule(`${home}/${path}`, "path.write")).toBe("l2.path.sensitive");
  });

  it("refuses writing crontabs, system start-up files and git hooks", () => {
    expect(rule("/etc/cron.d/job", "path.write")).toBe("l2.path.sensitive");
    expect(rule("/var/spool/cron/crontabs/root", "path.write")).toBe("l2.path.sensitive");
    expect(rule("/etc/profile.d/x.sh", "path.write")).toBe("l2.path.sensitive");
    expect(rule(".git/hooks/pre-commit", "path.write")).toBe("l2.path.sensitive");
  });

  it("accepts ordinary files, and start-up files for reading", () => {
    expect(rule("/etc/hostname", "path.read")).toBeUndefined();
    expect(rule("data/config.json", "path.read")).toBeUndefined();
    expect(rule(".env.example", "path.read")).toBeUndefined();
    expect(rule("id_rsa.pub", "path.read")).toBeUndefined();
    expect(rule("output/report.txt", "path.write")).toBeUndefined();
    expect(rule("dotfiles/.bashrc", "path.write")).toBeUndefined();
    expect(rule(`${home}/.bashrc`, "path.read")).toBeUndefined();
  });

  it("judges a .pem by what it holds: certificates and public keys pass, a private key does not", () => {
    const dir = join(workspace, "certs");
    mkdirSync(dir, { recursive: true });
    const chain = readFileSync(
      join(import.meta.dirname, "fixtures", "real-files", "pem", "chain.pem"),
      "utf8",
    );
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const files: Record<string, string> = {
      "chain.pem": chain,
      "ca-bundle.pem": rootCertificates.join("\n"),
      "public.pem": String(publicKey.export({ type: "spki", format: "pem" })),
      "server.pem": `${chain}${privateKey.export({ type: "pkcs8", format: "pem" })}`,
      "key.pem": String(privateKey.export({ type: "sec1", format: "pem" })),
      // A private key's DER under a certificate's label is no certificate.
      "dressed.pem": `-----BEGIN CERTIFICATE-----\n${privateKey.export({ type: "pkcs8", format: "der" }).toString("base64")}\n-----END CERTIFICATE-----\n`,
      "empty.pem": "",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    for (const name of ["chain.pem", "ca-bundle.pem", "public.pem"]) {
      expect(rule(`certs/${name}`, "path.read"), name).toBeUndefined();
      expect(rule(`cat certs/${name}`, "command"), name).toBeUndefined();
    }
    for (const name of ["server.pem", "key.pem", "dressed.pem", "empty.pem", "missing.pem"]) {
      expect(rule(`certs/${name}`, "path.read"), name).toBe("l2.path.sensitive");
      expect(rule(`cat certs/${name}`, "command"), name).toBe("l2.path.sensitive");
    }
    // A FIFO in a .pem's place is not read (which would wait for a writer): it holds secrets.
    execFileSync("mkfifo", [join(dir, "pipe.pem")]);
    expect(rule("certs/pipe.pem", "path.read")).toBe("l2.path.sensitive");
  });

  it("leaves a workspace under /root alone", () => {
    expect(
      rule("/root/project/readme.txt", "path.read", { cwd: "/root/project", roots: ["/root/project"] }),
    ).toBeUndefined();
    expect(rule("/root/.profile", "path.read", { cwd: "/root/project", roots: ["/root/project"] })).toBe(
      "l2.path.sensitive",
    );
  });
});

describe("operator overrides", () => {
  it("skips disabled rules and still applies the others", () => {
    const disabled = new Set(["l2.path.traversal"]);
    expect(
      rule("../../../../../../../../../../../../etc/passwd", "path.read", { disabledRules: disabled }),
    ).toBe("l2.path.sensitive");
    expect(
      rule("/etc/passwd", "path.read", { disabledRules: new Set(["l2.path.sensitive"]) }),
    ).toBeUndefined();
  });
});
