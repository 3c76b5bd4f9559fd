import { afterAll, describe, expect, it } from "vitest";
import { inspectArguments } from "../src/index.ts";
import { makeWorld } from "./helpers.ts";

const world = makeWorld();
afterAll(() => world.remove());
const { rule } = world;

describe("l2.url.scheme", () => {
  it.each([
    "file:///etc/passwd",
    "gopher://example.com/_x",
    "ftp://example.com/a",
    "javascript:alert(1)",
    "example.com/path",
    "not a url",
  ])("refuses %s", (url) => {
    expect(rule(url, "url")).toBe("l2.url.scheme");
  });

  it("accepts http and https", () => {
    expect(rule("https://example.com/api?q=1", "url")).toBeUndefined();
    expect(rule("http://api.example.org:8080/v1", "url")).toBeUndefined();
  });

  it("accepts a data: URL, which names no destination", () => {
    expect(rule("data:text/plain;base64,SGVsbG8sIHdvcmxkIQ==", "url")).toBeUndefined();
    expect(rule("data:,plain%20text", "url")).toBeUndefined();
  });
});

describe("l2.url.credentials", () => {
  it("refuses user information in the URL, and does not repeat it", () => {
    expect(rule("https://admin:hunter22@example.com/", "url")).toBe("l2.url.credentials");
    expect(rule("https://token@example.com/", "url")).toBe("l2.url.credentials");
    const finding = inspectArguments({ u: "https://admin:hunter22@example.com/" }, { u: "url" }, world.ctx);
    expect(finding?.reason).not.toContain("hunter22");
  });

  it("accepts an @ in the path or query", () => {
    expect(rule("https://example.com/users/@alice?mail=a@example.com", "url")).toBeUndefined();
  });
});

describe("l2.url.ssrf", () => {
  it.each([
    "http://127.0.0.1/",
    "http://127.1:8080/",
    "http://localhost/admin",
    "http://LOCALHOST./",
    "http://app.localhost/",
    "http://0.0.0.0/",
    "http://0/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://metadata.google.internal/",
    "http://ⓛocalhost/",
  ])("refuses %s", (url) => {
    expect(rule(url, "url")).toBe("l2.url.ssrf");
  });

  it.each([
    "https://example.com/",
    "http://8.8.8.8/",
    "http://172.32.0.1/",
    "http://100.128.0.1/",
    "http://[2001:db8::1]/",
    "http://localhost.example.com/",
    "http://169.255.0.1/",
  ])("accepts %s", (url) => {
    expect(rule(url, "url")).toBeUndefined();
  });
});
