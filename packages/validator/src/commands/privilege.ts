/**
 * `l2.command.privilege`: programs that change user, ownership, capabilities, mounts or
 * namespaces, and `chmod` modes that make a file world-writable or set-user/group-id.
 */
import type { CommandRule } from "./view.js";

const PRIVILEGED = new Set([
  "sudo",
  "su",
  "doas",
  "pkexec",
  "runuser",
  "chown",
  "chgrp",
  "setcap",
  "mount",
  "umount",
  "nsenter",
  "unshare",
  "chroot",
  "capsh",
  "setpriv",
  "visudo",
  "usermod",
  "useradd",
  "groupadd",
  "passwd",
  "chpasswd",
  "insmod",
  "modprobe",
]);
const OCTAL = /^[0-7]{3,4}$/;
const SYMBOLIC = /^([ugoa]*)([-+=])([rwxXst]*)$/;
const OTHERS = /[oa]/;

/** 777, 666, o+w, a+w, +s, u+s, g+s, 4755, 2755: world-writable or set-id. */
function dangerousMode(mode: string): boolean {
  if (OCTAL.test(mode)) {
    const digits = mode.padStart(4, "0");
    return (Number(digits[0]) & 6) !== 0 || (Number(digits[3]) & 2) !== 0;
  }
  return mode.split(",").some((clause) => {
    const m = SYMBOLIC.exec(clause);
    if (!m || m[2] === "-") return false;
    const [, who = "", , perms = ""] = m;
    return perms.includes("s") || (perms.includes("w") && OTHERS.test(who));
  });
}

export const privilege: CommandRule = ({ invocations }) => {
  for (const { name, args } of invocations) {
    if (PRIVILEGED.has(name)) return `runs ${name}, which changes privileges, ownership or namespaces`;
    if (name === "chmod" && args.some(dangerousMode)) {
      return "uses chmod to make a file world-writable or set-id";
    }
  }
  return undefined;
};
